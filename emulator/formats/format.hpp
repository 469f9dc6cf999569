// SPDX-License-Identifier: Apache-2.0
// Format descriptors: every property of a number format derived from its bit layout.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>

namespace fp8lab::emu {

// How the top exponent field and the sign are used. These rules, with the exponent and
// mantissa widths, are all a format needs; everything else is derived.
enum class Encoding {
    Ieee,        // all-ones exponent holds Inf (mantissa 0) and NaN (E5M2, FP16, BF16, FP32)
    FiniteNan,   // no Inf; only the all-ones code is NaN (OCP E4M3, "FN")
    FiniteOnly,  // every code is a finite number (FP6 E3M2/E2M3, FP4 E2M1)
    ScaleE8M0,   // unsigned power of two, no zero, 0xFF is NaN (OCP MX scale)
    // "FNUZ": finite, NaN is the negative-zero code (0x80), so there is no -0 and no Inf;
    // the bias is one more than IEEE's (E4M3FNUZ: 8, max 240; E5M2FNUZ: 16, max 57344).
    // AMD MI300 (CDNA3) and Graphcore IPUs implement these.
    FiniteNanUnsignedZero,
};

struct Format {
    std::string_view name;          // canonical lower-case name, e.g. "e4m3"
    std::string_view display_name;  // e.g. "E4M3 (OCP)"
    int exponent_bits = 0;
    int mantissa_bits = 0;
    Encoding encoding = Encoding::Ieee;

    // Derived from the above by make_format().
    int total_bits = 0;
    bool has_sign = true;
    bool has_inf = false;
    bool has_nan = false;
    bool has_subnormals = true;
    bool has_negative_zero = true;  // false for FNUZ (its code is NaN) and unsigned E8M0
    int bias = 0;
    int min_exponent = 0;                  // exponent of the smallest normal value
    int max_exponent = 0;                  // exponent of the largest finite value
    std::uint32_t max_magnitude_code = 0;  // code of the largest finite value, sign clear
    std::uint32_t inf_code = 0;            // +Inf (only if has_inf)
    std::uint32_t nan_code = 0;            // canonical NaN produced for a NaN input
    double max_finite = 0;
    double min_normal = 0;
    double min_subnormal = 0;  // 0 when the format has no subnormals

    std::uint64_t code_count() const { return std::uint64_t(1) << total_bits; }
    std::uint32_t sign_mask() const { return has_sign ? 1u << (total_bits - 1) : 0u; }
    bool is_nan_code(std::uint32_t code) const;
    bool is_inf_code(std::uint32_t code) const;
};

// Builds a descriptor from the layout; the derived fields are computed, never typed.
Format make_format(std::string_view name, std::string_view display_name, int exponent_bits, int mantissa_bits,
                   Encoding encoding);

// The formats fp8lab knows, in the order tables list them.
std::span<const Format> all_formats();

// Case-insensitive lookup ("E4M3", "e4m3", "e4m3-ieee", "bf16", ...).
const Format* find_format(std::string_view name);
const Format& format_by_name(std::string_view name);  // throws std::invalid_argument

// Storage of a block-scaled format per element: the element's bits plus its block's one
// scale shared by `block` elements (MXFP8: 8 + 8/32 = 8.25; NVFP4: 4 + 8/16 = 4.5).
inline double block_scaled_bits(const Format& element, const Format& scale, int block) {
    return element.total_bits + double(scale.total_bits) / block;
}

// Named accessors for the formats the code refers to directly.
const Format& e4m3();
const Format& e5m2();
const Format& e3m2();
const Format& e2m3();
const Format& e2m1();
const Format& e8m0();
const Format& bf16();
const Format& fp16();
const Format& fp32();
const Format& e4m3_ieee();
const Format& e4m3fnuz();
const Format& e5m2fnuz();

std::string format_names_list();  // "e4m3, e5m2, ..." for help and error messages

}  // namespace fp8lab::emu
