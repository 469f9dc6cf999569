// SPDX-License-Identifier: Apache-2.0
// The vectorisable loops of the bulk path, compiled once per rounding mode and CPU level.
#pragma once

#include <cstddef>
#include <cstdint>

#include "emulator/formats/code_decode.hpp"
#include "emulator/formats/float32_kernel.hpp"
#include "emulator/formats/rounding.hpp"

namespace fp8lab::emu::detail {

// Per-element inputs besides the data, passed by value so stores through uint8_t
// pointers cannot alias them (that aliasing alone stops vectorisation).
struct LoopParams {
    Float32KernelConstants k;
    float scale;
    std::uint64_t seed;
    int random_bits;
    std::uint64_t first_index;  // global index of element 0, for stochastic bits
};

struct RangeTally {
    std::size_t nan = 0, inf = 0, overflowed = 0, flushed = 0, subnormal = 0;
};

// Each dispatches on the rounding mode to a loop compiled for the best CPU level present.
void quantize_loop(RoundingMode mode, const float* in, std::uint8_t* out, std::size_t n, const LoopParams& p);
void round_loop(RoundingMode mode, const float* in, float* out, std::size_t n, const float* value_table,
                const LoopParams& p);
RangeTally range_loop(RoundingMode mode, const float* in, std::size_t n, std::uint32_t first_normal,
                      const LoopParams& p);

// BF16 (1-8-7, IEEE) rounded to nearest even by integer arithmetic: out[i] is round_loop's
// value wherever |in[i]| is below kBf16Past (in its bits); the others (Inf, NaN and what
// rounds past the largest finite value, whose values depend on the saturation) are copied
// unchanged, and their count returned: the caller puts them through round_loop. in may be out.
constexpr std::uint32_t kBf16Past = 0x7F7F8000u;
std::size_t round_bf16_nearest_even(const float* in, float* out, std::size_t n);

// Where quantize_row_blocks writes one row's casts: the codes, or the values
// (value(code) * scale_invs[b] of the element's block; the codes are not kept).
struct RowOutput {
    std::uint8_t* codes = nullptr;
    float* values = nullptr;
    const float* scale_invs = nullptr;     // with values: per block (block_cols 1: per element)
    const CodeDecoder* decoder = nullptr;  // with values
    // When set and the row is one block: *amax_bits = max(*amax_bits, the bits of the
    // row's largest |x|), NaN skipped, Inf kept (a scale chosen before the amax: delayed).
    std::uint32_t* amax_bits = nullptr;
};

// One row of a block-scaled tensor in one pass: element i of block b (block_cols
// elements each, the last one possibly shorter) becomes cvt(in[i] * multipliers[b]),
// and the range of every element is tallied from the same rounding (block_cols 1: one
// multiplier per element). p.scale is unused; p.first_index is the global index of in[0].
// With out.values, a code that is a special (Inf, NaN) is decoded wrongly: the caller
// redoes a row whose tally has NaN, Inf or overflow through the codes.
RangeTally quantize_row_blocks(RoundingMode mode, const float* in, const RowOutput& out, std::size_t n,
                               std::size_t block_cols, const float* multipliers, std::uint32_t first_normal,
                               const LoopParams& p);

// max |x| of each block of block_cols elements of one row into amax[b]: NaN skipped,
// Inf kept (compared as the bits of |x|, which order non-negative floats).
void row_block_amax(const float* in, std::size_t n, std::size_t block_cols, float* amax);

// amax[i] = max(amax[i], |in[i]|) for one row of a tensor whose blocks are one column wide
// (amax non-negative; NaN skipped, Inf kept, as row_block_amax).
void column_amax(const float* in, std::size_t n, float* amax);

}  // namespace fp8lab::emu::detail
