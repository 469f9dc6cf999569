// SPDX-License-Identifier: Apache-2.0
// Format descriptors: derives bias, range and special codes from (E, M, encoding).
#include "emulator/formats/format.hpp"

#include <algorithm>
#include <array>
#include <cctype>
#include <cmath>
#include <stdexcept>

namespace fp8lab::emu {

bool Format::is_nan_code(std::uint32_t code) const {
    if (!has_nan) return false;
    const std::uint32_t magnitude = code & ~sign_mask();
    switch (encoding) {
    case Encoding::Ieee:
        return magnitude > inf_code;
    case Encoding::FiniteNan:
    case Encoding::ScaleE8M0:
        return magnitude == nan_code;
    case Encoding::FiniteOnly:
        return false;
    case Encoding::FiniteNanUnsignedZero:
        return code == nan_code;  // the sign bit alone
    }
    return false;
}

bool Format::is_inf_code(std::uint32_t code) const { return has_inf && (code & ~sign_mask()) == inf_code; }

Format make_format(std::string_view name, std::string_view display_name, int exponent_bits, int mantissa_bits,
                   Encoding encoding) {
    Format f;
    f.name = name;
    f.display_name = display_name;
    f.exponent_bits = exponent_bits;
    f.mantissa_bits = mantissa_bits;
    f.encoding = encoding;
    f.has_sign = encoding != Encoding::ScaleE8M0;
    f.total_bits = exponent_bits + mantissa_bits + (f.has_sign ? 1 : 0);
    f.has_inf = encoding == Encoding::Ieee;
    f.has_nan = encoding != Encoding::FiniteOnly;
    f.has_subnormals = encoding != Encoding::ScaleE8M0;
    f.has_negative_zero = f.has_sign && encoding != Encoding::FiniteNanUnsignedZero;
    f.bias = (1 << (exponent_bits - 1)) - (encoding == Encoding::FiniteNanUnsignedZero ? 0 : 1);

    const std::uint32_t all_ones_exponent = (1u << exponent_bits) - 1;
    const std::uint32_t magnitude_codes = 1u << (exponent_bits + mantissa_bits);
    switch (encoding) {
    case Encoding::Ieee:
        f.inf_code = all_ones_exponent << mantissa_bits;
        f.max_magnitude_code = f.inf_code - 1;
        f.nan_code = magnitude_codes - 1;  // positive, all mantissa bits set, as CUDA emits
        break;
    case Encoding::FiniteNan:
    case Encoding::ScaleE8M0:
        f.nan_code = magnitude_codes - 1;
        f.max_magnitude_code = f.nan_code - 1;
        break;
    case Encoding::FiniteOnly:
        f.max_magnitude_code = magnitude_codes - 1;
        f.nan_code = f.max_magnitude_code;  // CUDA maps a NaN input to +max
        break;
    case Encoding::FiniteNanUnsignedZero:
        f.max_magnitude_code = magnitude_codes - 1;
        f.nan_code = magnitude_codes;  // 0x80: the sign bit over a zero magnitude
        break;
    }

    if (encoding == Encoding::ScaleE8M0) {
        // Exponent field 0 is 2^-bias itself: there is no zero and no subnormal.
        f.min_exponent = -f.bias;
        f.max_exponent = static_cast<int>(f.max_magnitude_code) - f.bias;
        f.min_normal = std::ldexp(1.0, f.min_exponent);
        f.min_subnormal = 0;
        f.max_finite = std::ldexp(1.0, f.max_exponent);
    } else {
        f.min_exponent = 1 - f.bias;
        const int max_field = static_cast<int>(f.max_magnitude_code >> mantissa_bits);
        const std::uint32_t max_mantissa = f.max_magnitude_code & ((1u << mantissa_bits) - 1);
        f.max_exponent = max_field - f.bias;
        f.min_normal = std::ldexp(1.0, f.min_exponent);
        f.min_subnormal = std::ldexp(1.0, f.min_exponent - mantissa_bits);
        f.max_finite = std::ldexp(1.0 + std::ldexp(double(max_mantissa), -mantissa_bits), f.max_exponent);
    }
    return f;
}

namespace {

const std::array<Format, 12>& registry() {
    static const std::array<Format, 12> formats = {
        make_format("e4m3", "E4M3 (OCP FP8)", 4, 3, Encoding::FiniteNan),
        make_format("e5m2", "E5M2 (OCP FP8)", 5, 2, Encoding::Ieee),
        make_format("e3m2", "E3M2 (OCP FP6)", 3, 2, Encoding::FiniteOnly),
        make_format("e2m3", "E2M3 (OCP FP6)", 2, 3, Encoding::FiniteOnly),
        make_format("e2m1", "E2M1 (OCP FP4)", 2, 1, Encoding::FiniteOnly),
        make_format("e8m0", "E8M0 (MX scale)", 8, 0, Encoding::ScaleE8M0),
        make_format("bf16", "BF16", 8, 7, Encoding::Ieee),
        make_format("fp16", "FP16 (IEEE half)", 5, 10, Encoding::Ieee),
        make_format("fp32", "FP32 (IEEE single)", 8, 23, Encoding::Ieee),
        make_format("e4m3-ieee", "E4M3, IEEE-style with Inf (teaching)", 4, 3, Encoding::Ieee),
        make_format("e4m3fnuz", "E4M3FNUZ (AMD MI300, Graphcore)", 4, 3, Encoding::FiniteNanUnsignedZero),
        make_format("e5m2fnuz", "E5M2FNUZ (AMD MI300, Graphcore)", 5, 2, Encoding::FiniteNanUnsignedZero),
    };
    return formats;
}

bool iequals(std::string_view a, std::string_view b) {
    return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
               return std::tolower(static_cast<unsigned char>(x)) == std::tolower(static_cast<unsigned char>(y));
           });
}

}  // namespace

std::span<const Format> all_formats() { return registry(); }

const Format* find_format(std::string_view name) {
    for (const Format& f : registry())
        if (iequals(f.name, name)) return &f;
    return nullptr;
}

const Format& format_by_name(std::string_view name) {
    if (const Format* f = find_format(name)) return *f;
    throw std::invalid_argument("unknown format '" + std::string(name) + "' (known: " + format_names_list() + ")");
}

const Format& e4m3() { return registry()[0]; }
const Format& e5m2() { return registry()[1]; }
const Format& e3m2() { return registry()[2]; }
const Format& e2m3() { return registry()[3]; }
const Format& e2m1() { return registry()[4]; }
const Format& e8m0() { return registry()[5]; }
const Format& bf16() { return registry()[6]; }
const Format& fp16() { return registry()[7]; }
const Format& fp32() { return registry()[8]; }
const Format& e4m3_ieee() { return registry()[9]; }
const Format& e4m3fnuz() { return registry()[10]; }
const Format& e5m2fnuz() { return registry()[11]; }

std::string format_names_list() {
    std::string out;
    for (const Format& f : registry()) {
        if (!out.empty()) out += ", ";
        out += f.name;
    }
    return out;
}

}  // namespace fp8lab::emu
