// SPDX-License-Identifier: Apache-2.0
// Where cuBLASLt reads the float32 block scales of an FP8 operand (VEC128_32F: 1 x 128
// blocks, BLK128x128_32F: 128 x 128 tiles), for an operand stored `outer` x `inner`
// with the contraction along `inner`. Padding to 4 floats keeps each line 16-byte aligned.
#pragma once

#include <cstddef>

namespace fp8lab::gpu::detail {

inline constexpr int kScaleBlock = 128;

struct BlockScaleLayout {
    bool tiles = false;  // 128 x 128 tiles, else 1 x 128 blocks
    int outer = 0, inner = 0;

    static constexpr std::size_t ceil_div(std::size_t a, std::size_t b) { return (a + b - 1) / b; }
    static constexpr std::size_t round_to_4(std::size_t a) { return (a + 3) / 4 * 4; }

    // Blocks along each dimension: 1 x 128 blocks give one per row along `outer`.
    std::size_t outer_blocks() const { return tiles ? ceil_div(std::size_t(outer), kScaleBlock) : std::size_t(outer); }
    std::size_t inner_blocks() const { return ceil_div(std::size_t(inner), kScaleBlock); }
    // 1 x 128: one line per inner block, rows contiguous. 128 x 128: one line per row of
    // tiles, the tiles along `inner` contiguous.
    std::size_t line() const { return tiles ? round_to_4(inner_blocks()) : round_to_4(outer_blocks()); }
    std::size_t count() const { return (tiles ? outer_blocks() : inner_blocks()) * line(); }
    std::size_t index(std::size_t outer_block, std::size_t inner_block) const {
        return tiles ? outer_block * line() + inner_block : inner_block * line() + outer_block;
    }
};

}  // namespace fp8lab::gpu::detail
