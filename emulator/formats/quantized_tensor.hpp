// SPDX-License-Identifier: Apache-2.0
// A quantised tensor: codes, per-block scales, layout and format, with dequantize and stats.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <vector>

#include "emulator/formats/bulk.hpp"
#include "emulator/formats/format.hpp"
#include "emulator/formats/rounding.hpp"

namespace fp8lab::emu {

// A block of `rows` x `cols` elements. Tensors are row-major with the contraction
// dimension along the columns, so 1 x 32 is an MX block and 128 x 128 a weight tile.
struct BlockShape {
    std::size_t rows = 1;
    std::size_t cols = 32;
};

struct QuantizedTensor {
    const Format* format = nullptr;
    std::size_t rows = 0, cols = 0;
    BlockShape block;
    std::vector<std::uint8_t> codes;        // rows * cols
    std::vector<float> block_scale_inv;     // per block, row-major over the block grid
    std::vector<float> block_amax;          // per block, of the input
    const Format* scale_format = nullptr;   // E8M0 (MX), E4M3 (NVFP4), or none (float32)
    std::vector<std::uint8_t> scale_codes;  // per block, when scale_format is set
    float tensor_scale_inv = 1.0f;          // NVFP4's second level (1 / S_enc), for display
    RangeCounts counts;                     // of the scaled elements, over all blocks

    std::size_t block_grid_rows() const { return (rows + block.rows - 1) / block.rows; }
    std::size_t block_grid_cols() const { return (cols + block.cols - 1) / block.cols; }
    std::size_t block_count() const { return block_grid_rows() * block_grid_cols(); }
    std::size_t block_of(std::size_t r, std::size_t c) const {
        return (r / block.rows) * block_grid_cols() + c / block.cols;
    }

    // value(code) * block_scale_inv, in float32.
    std::vector<float> dequantize() const;
    // The same into out (rows * cols elements), so that a caller can reuse its buffer.
    void dequantize_into(std::span<float> out) const;
    // max |x| over the whole input (the largest block amax; 0 for an empty tensor).
    float tensor_amax() const;
};

// What one quantisation did to a tensor (docs/numerics.md and the labs' tables).
struct QuantizationStats {
    float amax = 0;
    std::size_t elements = 0, overflowed = 0, flushed_to_zero = 0, subnormal = 0;
    double mean_squared_error = 0, max_rel_error = 0, rel_frobenius_error = 0;
};
QuantizationStats quantization_stats(std::span<const float> x, const QuantizedTensor& q);

// The scale chosen for one block from its amax.
struct BlockScale {
    float multiplier;       // elements become cvt(x * multiplier)
    float scale_inv;        // and are read back as value * scale_inv
    std::uint8_t code = 0;  // the scale's own code, where it has a format
};

// Walks the blocks of a rows x cols tensor: amax per block, scale_of(amax), then every
// element cvt(x * multiplier) with its global index (so stochastic bits match).
// `values` (x.size() elements, or empty): receives the dequantised values, made in the
// same pass as the codes, which are then not kept (q.codes empty): what a trainer's GEMM
// reads, without writing and reading the codes.
QuantizedTensor quantize_blocks(std::span<const float> x, std::size_t rows, std::size_t cols, BlockShape block,
                                const Format& element_format, const ConvertOptions& options,
                                const std::function<BlockScale(float amax)>& scale_of, std::span<float> values = {});
// The scales of consecutive blocks at once (a row of blocks, or a run of them): for each i,
// multiplier[i], scale_inv[i] and code[i] from amax[i]. One call per row rather than per
// block, so a rule with cheap arithmetic (MX's) runs as a plain loop.
using BlockScaleRun =
    std::function<void(std::span<const float> amax, float* multiplier, float* scale_inv, std::uint8_t* code)>;
QuantizedTensor quantize_blocks(std::span<const float> x, std::size_t rows, std::size_t cols, BlockShape block,
                                const Format& element_format, const ConvertOptions& options,
                                const BlockScaleRun& scales_of, std::span<float> values = {});
// A run of a per-block rule (a callable float amax -> BlockScale), inlined into the loop.
template <class Rule>
BlockScaleRun scale_each(Rule rule) {
    return [rule](std::span<const float> amax, float* multiplier, float* scale_inv, std::uint8_t* code) {
        for (std::size_t i = 0; i < amax.size(); ++i) {
            const BlockScale s = rule(amax[i]);
            multiplier[i] = s.multiplier;
            scale_inv[i] = s.scale_inv;
            code[i] = s.code;
        }
    };
}

// The same for one block over the whole tensor whose scale was chosen before its amax
// (delayed scaling): the amax comes from the pass that casts, so x is read once.
QuantizedTensor quantize_with_scale(std::span<const float> x, std::size_t rows, std::size_t cols,
                                    const Format& element_format, const ConvertOptions& options, BlockScale scale,
                                    std::span<float> values = {});

// Throws std::invalid_argument when x cannot be a rows x cols tensor.
void check_shape(std::span<const float> x, std::size_t rows, std::size_t cols, BlockShape block);

}  // namespace fp8lab::emu
