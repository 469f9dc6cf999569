// SPDX-License-Identifier: Apache-2.0
// The arithmetic decode of small float codes, cloned per CPU level.
#include "emulator/formats/code_decode.hpp"

#include <bit>
#include <cmath>

#include "emulator/base/cpu_clones.hpp"

namespace fp8lab::emu {
namespace {

// One block: decoded_value() times the scale. Returns whether any code was a special (its
// value is then wrong here and patched by the caller).
// (restrict: a byte pointer may alias anything, and without it the stores to out would
// stop the loop from vectorising.)
// N: the block's length when it is known at compile time (16 and 32: NVFP4's and MX's
// blocks; a runtime 16 left GCC's 32-code vector loop unused and every element scalar).
// PerElement: element i's scale is scales[i] (blocks one column wide), not `scale`.
template <std::size_t N, bool PerElement = false>
FP8LAB_INLINE bool decode_block(const CodeDecoder& d, const std::uint8_t* __restrict codes, std::size_t runtime_n,
                                float scale, float* __restrict out, const float* __restrict scales = nullptr) {
    const std::size_t n = N ? N : runtime_n;
    const std::uint32_t mag_mask = (1u << (d.total_bits - 1)) - 1;
    std::uint32_t special = 0;
    for (std::size_t i = 0; i < n; ++i) {
        out[i] = decoded_value(d, codes[i]) * (PerElement ? scales[i] : scale);
        special |= std::uint32_t((codes[i] & mag_mask) >= d.special_from);
    }
    return special != 0;
}

FP8LAB_INLINE void decode_row_body(const CodeDecoder& d, const std::uint8_t* codes, std::size_t cols,
                                   std::size_t block_cols, const float* scales, float* out) {
    const std::uint32_t mag_mask = (1u << (d.total_bits - 1)) - 1;
    if (block_cols == 1) {  // one scale per element: one vector loop
        if (decode_block<0, true>(d, codes, cols, 0.0f, out, scales))
            for (std::size_t i = 0; i < cols; ++i)
                if ((codes[i] & mag_mask) >= d.special_from) out[i] = d.values[codes[i]] * scales[i];
        return;
    }
    for (std::size_t b = 0, c0 = 0; c0 < cols; ++b, c0 += block_cols) {
        const std::size_t n = cols - c0 < block_cols ? cols - c0 : block_cols;
        const bool special = n == 16   ? decode_block<16>(d, codes + c0, n, scales[b], out + c0)
                             : n == 32 ? decode_block<32>(d, codes + c0, n, scales[b], out + c0)
                                       : decode_block<0>(d, codes + c0, n, scales[b], out + c0);
        if (special)
            for (std::size_t i = c0; i < c0 + n; ++i)  // Inf and NaN from the table, with their bits
                if ((codes[i] & mag_mask) >= d.special_from) out[i] = d.values[codes[i]] * scales[b];
    }
}
FP8LAB_CPU_DISPATCH(void, decode_row_loop,
                    (const CodeDecoder& d, const std::uint8_t* codes, std::size_t cols, std::size_t block_cols,
                     const float* scales, float* out),
                    (d, codes, cols, block_cols, scales, out), decode_row_body)

}  // namespace

std::optional<CodeDecoder> code_decoder(const Format& f, const float* values) {
    if (f.total_bits > 8 || !f.has_sign || !f.has_negative_zero || !f.has_subnormals) return std::nullopt;
    const int magnitude_bits = f.total_bits - 1;
    std::uint32_t special_from = 1u << magnitude_bits;  // none
    if (f.encoding == Encoding::Ieee)
        special_from = ((1u << f.exponent_bits) - 1) << f.mantissa_bits;  // the all-ones exponent
    else if (f.encoding == Encoding::FiniteNan)
        special_from = (1u << magnitude_bits) - 1;  // the all-ones code
    else if (f.encoding != Encoding::FiniteOnly)
        return std::nullopt;
    return CodeDecoder{
        f.total_bits, f.mantissa_bits, f.bias, special_from, std::ldexp(1.0f, 1 - f.bias - f.mantissa_bits), values};
}

void decode_row(const CodeDecoder& d, const std::uint8_t* codes, std::size_t cols, std::size_t block_cols,
                const float* scales, float* out) {
    decode_row_loop(d, codes, cols, block_cols, scales, out);
}

}  // namespace fp8lab::emu
