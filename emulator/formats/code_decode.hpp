// SPDX-License-Identifier: Apache-2.0
// Codes of a signed float format of at most 8 bits (FP8, FP6, FP4) back to float32 times a
// scale per block of a row, by arithmetic that vectorises: the dequantisation of a tensor.
#pragma once

#include <bit>
#include <cstddef>
#include <cstdint>
#include <optional>

#include "emulator/base/cpu_clones.hpp"
#include "emulator/formats/format.hpp"

namespace fp8lab::emu {

// What the arithmetic needs of a format; none for formats it does not cover (FNUZ, whose
// NaN is the negative-zero code; unsigned E8M0; formats wider than 8 bits).
struct CodeDecoder {
    int total_bits, mantissa_bits, bias;
    std::uint32_t special_from;  // magnitudes from here are Inf or NaN (none: past the codes)
    float subnormal_step;        // 2^(1 - bias - mantissa_bits): the value of mantissa 1 at exponent 0
    const float* values;         // every code's value (for the specials), code_count() of them
};
std::optional<CodeDecoder> code_decoder(const Format& f, const float* values);

// The value of code c when it is not a special: normal codes as float32 bits put together
// from the fields, subnormal ones as mantissa x the subnormal step (exact). Branch-free,
// so that the loops calling it vectorise (a select is a branch here: masks instead).
FP8LAB_INLINE float decoded_value(const CodeDecoder& d, std::uint32_t c) {
    const int m_bits = d.mantissa_bits, sign_shift = 32 - d.total_bits;
    const std::uint32_t mag_mask = (1u << (d.total_bits - 1)) - 1, m_mask = (1u << m_bits) - 1;
    const std::uint32_t exponent_offset = std::uint32_t(127 - d.bias);
    const std::uint32_t mag = c & mag_mask, e = mag >> m_bits, m = mag & m_mask;
    const std::uint32_t normal = ((e + exponent_offset) << 23) | (m << (23 - m_bits));
    const std::uint32_t subnormal = std::bit_cast<std::uint32_t>(float(std::int32_t(m)) * d.subnormal_step);
    const std::uint32_t sign = (c << sign_shift) & 0x80000000u;
    const std::uint32_t at_zero_exponent = 0u - std::uint32_t(e == 0);
    return std::bit_cast<float>((subnormal & at_zero_exponent) | (normal & ~at_zero_exponent) | sign);
}

// out[c] = value(codes[c]) * scales[c / block_cols] for c in [0, cols): one row of a
// tensor whose blocks along the row have their own scale_inv. The same bits as a table of
// values, every special (Inf, NaN) included.
void decode_row(const CodeDecoder& d, const std::uint8_t* codes, std::size_t cols, std::size_t block_cols,
                const float* scales, float* out);

}  // namespace fp8lab::emu
