// SPDX-License-Identifier: Apache-2.0
// Block walking, dequantisation and statistics shared by every scaling recipe.
#include "emulator/quantized_tensor.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "emulator/bulk_loops.hpp"
#include "emulator/code_decode.hpp"
#include "emulator/convert.hpp"
#include "emulator/parallel.hpp"

namespace fp8lab::emu {

void check_shape(std::span<const float> x, std::size_t rows, std::size_t cols, BlockShape block) {
    if (rows * cols != x.size())
        throw std::invalid_argument("tensor of " + std::to_string(x.size()) + " elements is not " +
                                    std::to_string(rows) + " x " + std::to_string(cols));
    if (block.rows == 0 || block.cols == 0) throw std::invalid_argument("block shape must be at least 1 x 1");
}

namespace {

// Blocks at least one column wide: every row's amax within each block column, then each
// block's over its rows.
void wide_block_amax(std::span<const float> x, std::size_t rows, std::size_t cols, BlockShape block,
                     std::size_t chunk_rows, std::vector<float>& block_amax) {
    const std::size_t grid_cols = (cols + block.cols - 1) / block.cols;
    std::vector<float> row_amax(rows * grid_cols, 0.0f);
    parallel_for_chunks(rows, chunk_rows, [&](std::size_t, std::size_t r0, std::size_t r1) {
        for (std::size_t r = r0; r < r1; ++r)
            detail::row_block_amax(x.data() + r * cols, cols, block.cols, row_amax.data() + r * grid_cols);
    });
    const std::size_t grid_rows = (rows + block.rows - 1) / block.rows;
    parallel_for_chunks(
        grid_rows, std::max<std::size_t>(1, 4096 / grid_cols), [&](std::size_t, std::size_t br0, std::size_t br1) {
            for (std::size_t br = br0; br < br1; ++br)
                for (std::size_t bc = 0; bc < grid_cols; ++bc) {
                    float a = 0.0f;
                    for (std::size_t r = br * block.rows; r < std::min(rows, (br + 1) * block.rows); ++r)
                        a = std::max(a, row_amax[r * grid_cols + bc]);
                    block_amax[br * grid_cols + bc] = a;
                }
        });
}

// Blocks one column wide (a transposed operand's blocks laid over it): each band of
// block_rows rows updates its blocks' amaxes row by row, across the columns in vectors.
// Work is cut by bands and column ranges, so a single band (rowwise's whole height) still
// spreads over every thread; maxima combine in any order.
void tall_block_amax(std::span<const float> x, std::size_t rows, std::size_t cols, std::size_t block_rows,
                     std::vector<float>& block_amax) {
    constexpr std::size_t kColumns = 256;
    const std::size_t bands = (rows + block_rows - 1) / block_rows, ranges = (cols + kColumns - 1) / kColumns;
    std::fill(block_amax.begin(), block_amax.end(), 0.0f);
    parallel_for_chunks(bands * ranges, 1, [&](std::size_t, std::size_t i0, std::size_t i1) {
        for (std::size_t i = i0; i < i1; ++i) {
            const std::size_t band = i / ranges, c0 = (i % ranges) * kColumns, n = std::min(kColumns, cols - c0);
            for (std::size_t r = band * block_rows; r < std::min(rows, (band + 1) * block_rows); ++r)
                detail::column_amax(x.data() + r * cols + c0, n, block_amax.data() + band * cols + c0);
        }
    });
}

}  // namespace

QuantizedTensor quantize_blocks(std::span<const float> x, std::size_t rows, std::size_t cols, BlockShape block,
                                const Format& element_format, const ConvertOptions& options,
                                const std::function<BlockScale(float amax)>& scale_of) {
    check_shape(x, rows, cols, block);
    if (element_format.total_bits > 8 || !detail::float32_kernel_supports(element_format) ||
        !element_format.has_negative_zero)  // E8M0, and FNUZ, whose zero the block kernels do not handle
        throw std::invalid_argument("block scaling needs an OCP FP8, FP6 or FP4 element format, not " +
                                    std::string(element_format.name));
    if (options.rounding == RoundingMode::Stochastic &&
        (options.random_bits < 1 || options.random_bits > kMaxRandomBits))
        throw std::invalid_argument("stochastic rounding needs 1 to 32 random bits");
    const detail::Float32KernelConstants kernel =
        detail::make_float32_kernel_constants(element_format, options.saturation);
    const std::uint32_t first_normal = 1u << element_format.mantissa_bits;
    QuantizedTensor q;
    q.format = &element_format;
    q.rows = rows;
    q.cols = cols;
    q.block = block;
    q.codes.resize(x.size());
    q.block_scale_inv.resize(q.block_count());
    q.block_amax.resize(q.block_count());
    q.scale_codes.resize(q.block_count());

    const std::size_t grid_cols = q.block_grid_cols();
    // Work is cut by rows, not by blocks, so that a per-tensor scale (one block) or a tall
    // block still spreads over every thread. Each chunk's rows give the same codes and
    // counts whatever thread runs them, and maxima and integer counts combine in any order:
    // the results are the same for any number of threads.
    const std::size_t chunk_rows = std::max<std::size_t>(1, (std::size_t(1) << 15) / std::max<std::size_t>(cols, 1));
    // 1. Each block's amax (NaN skipped, Inf kept).
    if (block.cols == 1)
        tall_block_amax(x, rows, cols, block.rows, q.block_amax);
    else
        wide_block_amax(x, rows, cols, block, chunk_rows, q.block_amax);
    // 2. Each block's scale; the scale rules are scalar, so blocks run in parallel.
    std::vector<float> multiplier(q.block_count());
    parallel_for_chunks(q.block_count(), 4096, [&](std::size_t, std::size_t b0, std::size_t b1) {
        for (std::size_t b = b0; b < b1; ++b) {
            const BlockScale s = scale_of(q.block_amax[b]);
            q.block_scale_inv[b] = s.scale_inv;
            q.scale_codes[b] = s.code;
            multiplier[b] = s.multiplier;
        }
    });
    // 3. The codes and the range counts of each row, block by block, in one pass.
    const detail::LoopParams params{kernel, 1.0f, options.seed, options.random_bits, 0};
    std::vector<RangeCounts> partial(chunk_count(rows, chunk_rows));
    parallel_for_chunks(rows, chunk_rows, [&](std::size_t chunk, std::size_t r0, std::size_t r1) {
        RangeCounts& counts = partial[chunk];
        for (std::size_t r = r0; r < r1; ++r) {
            detail::LoopParams p = params;
            p.first_index = r * cols;
            const detail::RangeTally t = detail::quantize_row_blocks(
                options.rounding, x.data() + r * cols, q.codes.data() + r * cols, cols, block.cols,
                multiplier.data() + (r / block.rows) * grid_cols, first_normal, p);
            counts += RangeCounts{cols, t.nan, t.inf, t.overflowed, t.flushed, t.subnormal};
        }
    });
    for (const RangeCounts& c : partial) q.counts += c;
    return q;
}

std::vector<float> QuantizedTensor::dequantize() const {
    std::vector<float> out(codes.size());
    dequantize_into(out);
    return out;
}

void QuantizedTensor::dequantize_into(std::span<float> out) const {
    if (out.size() != codes.size())
        throw std::invalid_argument("dequantize: " + std::to_string(codes.size()) + " codes into " +
                                    std::to_string(out.size()) + " elements");
    float value[256];
    for (std::uint32_t c = 0; c < 256; ++c)
        value[c] = c < format->code_count() ? static_cast<float>(decode(*format, c)) : 0.0f;
    const std::size_t grid_cols = block_grid_cols();
    const std::size_t chunk_rows = std::max<std::size_t>(1, (std::size_t(1) << 15) / std::max<std::size_t>(cols, 1));
    // FP8, FP6 and FP4 codes decode by arithmetic a row at a time (the same bits as the table).
    if (const std::optional<CodeDecoder> d = code_decoder(*format, value); d && block.cols > 0) {
        parallel_for_chunks(rows, chunk_rows, [&](std::size_t, std::size_t r0, std::size_t r1) {
            for (std::size_t r = r0; r < r1; ++r)
                decode_row(*d, codes.data() + r * cols, cols, block.cols,
                           &block_scale_inv[(r / block.rows) * grid_cols], out.data() + r * cols);
        });
        return;
    }
    parallel_for_chunks(rows, chunk_rows, [&](std::size_t, std::size_t r0, std::size_t r1) {
        for (std::size_t r = r0; r < r1; ++r)
            for (std::size_t bc = 0; bc < grid_cols; ++bc) {  // one scale per row segment of a block
                const float s = block_scale_inv[(r / block.rows) * grid_cols + bc];
                const std::size_t first = r * cols + bc * block.cols,
                                  last = r * cols + std::min(cols, (bc + 1) * block.cols);
                for (std::size_t i = first; i < last; ++i) out[i] = value[codes[i]] * s;
            }
    });
}

float QuantizedTensor::tensor_amax() const {
    float a = 0.0f;
    for (float b : block_amax) a = std::max(a, b);  // block amaxes are never NaN
    return a;
}

QuantizationStats quantization_stats(std::span<const float> x, const QuantizedTensor& q) {
    QuantizationStats s;
    s.amax = amax(x);
    s.elements = q.counts.elements;
    s.overflowed = q.counts.overflowed;
    s.flushed_to_zero = q.counts.flushed_to_zero;
    s.subnormal = q.counts.subnormal;
    const std::vector<float> back = q.dequantize();
    const ErrorStats e = error_stats(x, back);
    s.mean_squared_error = e.mean_squared_error;
    s.max_rel_error = e.max_rel_error;
    s.rel_frobenius_error = e.rel_frobenius_error;
    return s;
}

}  // namespace fp8lab::emu
