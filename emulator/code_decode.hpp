// SPDX-License-Identifier: Apache-2.0
// Codes of a signed float format of at most 8 bits (FP8, FP6, FP4) back to float32 times a
// scale per block of a row, by arithmetic that vectorises: the dequantisation of a tensor.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>

#include "emulator/format.hpp"

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

// out[c] = value(codes[c]) * scales[c / block_cols] for c in [0, cols): one row of a
// tensor whose blocks along the row have their own scale_inv. The same bits as a table of
// values, every special (Inf, NaN) included.
void decode_row(const CodeDecoder& d, const std::uint8_t* codes, std::size_t cols, std::size_t block_cols,
                const float* scales, float* out);

}  // namespace fp8lab::emu
