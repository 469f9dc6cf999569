// SPDX-License-Identifier: Apache-2.0
// Block walking, dequantisation and statistics shared by every scaling recipe.
#include "emulator/formats/quantized_tensor.hpp"

#include <algorithm>
#include <functional>
#include <bit>
#include <cmath>
#include <optional>
#include <stdexcept>

#include "emulator/formats/bulk_loops.hpp"
#include "emulator/formats/code_decode.hpp"
#include "emulator/formats/convert.hpp"
#include "emulator/base/parallel.hpp"

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

namespace {

// Every code's value (0 past the format's codes).
void fill_value_table(const Format& format, float* table) {
    for (std::uint32_t c = 0; c < 256; ++c)
        table[c] = c < format.code_count() ? static_cast<float>(decode(format, c)) : 0.0f;
}

// A cast's tensor before its blocks are walked: the checks, the format and the sizes.
QuantizedTensor start_cast(std::span<const float> x, std::size_t rows, std::size_t cols, BlockShape block,
                           const Format& element_format, const ConvertOptions& options, std::span<float> values) {
    check_shape(x, rows, cols, block);
    if (element_format.total_bits > 8 || !detail::float32_kernel_supports(element_format) ||
        !element_format.has_negative_zero)  // E8M0, and FNUZ, whose zero the block kernels do not handle
        throw std::invalid_argument("block scaling needs an OCP FP8, FP6 or FP4 element format, not " +
                                    std::string(element_format.name));
    if (options.rounding == RoundingMode::Stochastic &&
        (options.random_bits < 1 || options.random_bits > kMaxRandomBits))
        throw std::invalid_argument("stochastic rounding needs 1 to 32 random bits");
    if (!values.empty() && values.size() != x.size())
        throw std::invalid_argument("a cast of " + std::to_string(x.size()) + " elements into " +
                                    std::to_string(values.size()) + " values");
    QuantizedTensor q;
    q.format = &element_format;
    q.rows = rows;
    q.cols = cols;
    q.block = block;
    if (values.empty()) q.codes.resize(x.size());
    q.block_scale_inv.resize(q.block_count());
    q.block_amax.resize(q.block_count());
    q.scale_codes.resize(q.block_count());
    return q;
}

// Rows per chunk of work. Work is cut by rows, not by blocks, so that a per-tensor scale
// (one block) or a tall block still spreads over every thread. Each chunk's rows give the
// same codes and counts whatever thread runs them, and maxima and integer counts combine
// in any order: the results are the same for any number of threads.
std::size_t chunk_rows_of(std::size_t cols) {
    return std::max<std::size_t>(1, (std::size_t(1) << 15) / std::max<std::size_t>(cols, 1));
}

// The codes (or, with `values`, the dequantised values) and the range counts of each row,
// block by block, in one pass; with `amax` (a tensor of one block), its amax from the same
// pass. `prepare_row(r)`, where given, runs just before row r is cast (on its thread): it
// may set that row's multipliers and scales. `chunk_rows` (default chunk_rows_of) is the
// rows a thread takes at a time: a multiple of the block's height keeps a band on one thread.
void cast_rows(std::span<const float> x, QuantizedTensor& q, const std::vector<float>& multiplier,
               const ConvertOptions& options, std::span<float> values, float* amax,
               const std::function<void(std::size_t)>& prepare_row = {}, std::size_t chunk_rows = 0) {
    const std::size_t rows = q.rows, cols = q.cols, grid_cols = q.block_grid_cols();
    if (chunk_rows == 0) chunk_rows = chunk_rows_of(cols);
    const detail::LoopParams params{detail::make_float32_kernel_constants(*q.format, options.saturation), 1.0f,
                                    options.seed, options.random_bits, 0};
    const std::uint32_t first_normal = 1u << q.format->mantissa_bits;
    // The values' decode (its table only for the specials): every format start_cast takes
    // (OCP FP8, FP6, FP4) has one.
    float table[256];
    std::optional<CodeDecoder> decoder;
    if (!values.empty()) {
        fill_value_table(*q.format, table);
        decoder = code_decoder(*q.format, table);
        if (!decoder) throw std::logic_error("cast: no arithmetic decode for " + std::string(q.format->name));
    }
    std::vector<RangeCounts> partial(chunk_count(rows, chunk_rows));
    std::vector<std::uint32_t> partial_amax(partial.size(), 0);
    parallel_for_chunks(rows, chunk_rows, [&](std::size_t chunk, std::size_t r0, std::size_t r1) {
        RangeCounts& counts = partial[chunk];
        std::vector<std::uint8_t> redo;  // a row whose values need the codes' specials
        for (std::size_t r = r0; r < r1; ++r) {
            if (prepare_row) prepare_row(r);
            detail::LoopParams p = params;
            p.first_index = r * cols;
            const float* in = x.data() + r * cols;
            const float* row_multipliers = multiplier.data() + (r / q.block.rows) * grid_cols;
            const float* row_scale_invs = q.block_scale_inv.data() + (r / q.block.rows) * grid_cols;
            detail::RowOutput out;
            if (values.empty()) {
                out.codes = q.codes.data() + r * cols;
            } else {
                out.values = values.data() + r * cols;
                out.scale_invs = row_scale_invs;
                out.decoder = &*decoder;
            }
            if (amax) out.amax_bits = &partial_amax[chunk];
            const detail::RangeTally t = detail::quantize_row_blocks(options.rounding, in, out, cols, q.block.cols,
                                                                     row_multipliers, first_normal, p);
            // Saturating casts make a special code of NaN only; others of Inf and overflow too.
            if (!values.empty() && (t.nan || (!params.k.saturate_finite && (t.inf || t.overflowed)))) {
                // Inf and NaN codes take the table's bits: this row again, through its codes.
                redo.resize(cols);
                detail::RowOutput codes;
                codes.codes = redo.data();
                detail::quantize_row_blocks(options.rounding, in, codes, cols, q.block.cols, row_multipliers,
                                            first_normal, p);
                decode_row(*decoder, redo.data(), cols, q.block.cols, row_scale_invs, out.values);
            }
            counts += RangeCounts{cols, t.nan, t.inf, t.overflowed, t.flushed, t.subnormal};
        }
    });
    for (const RangeCounts& c : partial) q.counts += c;
    if (amax) {
        std::uint32_t largest = 0;
        for (const std::uint32_t a : partial_amax) largest = std::max(largest, a);
        *amax = std::bit_cast<float>(largest);
    }
}

}  // namespace

QuantizedTensor quantize_blocks(std::span<const float> x, std::size_t rows, std::size_t cols, BlockShape block,
                                const Format& element_format, const ConvertOptions& options,
                                const std::function<BlockScale(float amax)>& scale_of, std::span<float> values) {
    return quantize_blocks(x, rows, cols, block, element_format, options,
                           scale_each([&scale_of](float a) { return scale_of(a); }), values);
}

QuantizedTensor quantize_blocks(std::span<const float> x, std::size_t rows, std::size_t cols, BlockShape block,
                                const Format& element_format, const ConvertOptions& options,
                                const BlockScaleRun& scales_of, std::span<float> values) {
    QuantizedTensor q = start_cast(x, rows, cols, block, element_format, options, values);
    std::vector<float> multiplier(q.block_count());
    const auto set_scales = [&](std::size_t b0, std::size_t b1) {
        scales_of({q.block_amax.data() + b0, b1 - b0}, multiplier.data() + b0, q.block_scale_inv.data() + b0,
                  q.scale_codes.data() + b0);
    };
    // Blocks within a row (MX, NVFP4, blockwise's 1 x 128, rowwise): each row's amaxes,
    // scales and elements in turn, so the row comes from memory once and from L1 after.
    if (block.rows == 1 && block.cols > 1) {
        const std::size_t grid_cols = q.block_grid_cols();
        cast_rows(x, q, multiplier, options, values, nullptr, [&](std::size_t r) {
            detail::row_block_amax(x.data() + r * cols, cols, block.cols, q.block_amax.data() + r * grid_cols);
            set_scales(r * grid_cols, (r + 1) * grid_cols);
        });
        return q;
    }
    // Bands of a few rows (NVFP4's 16 x 16 weight tiles, blockwise's 128 x 128, MX's 32 x 1
    // on a transposed operand): each band's
    // amaxes, scales and elements in turn, a thread taking whole bands, so the band comes
    // from memory once and from cache after (a separate amax pass read the tensor twice).
    // A band's amaxes: every column's largest |x| over the band's rows (an element-wise max,
    // in vectors), then each block's over its columns of that one row. (Each row's block
    // amaxes first, then their max over the rows, spent most of the time in the blocks'
    // horizontal reductions: 28% of an NVFP4 weight's cast.) The same maxima, NaN skipped.
    // A tensor of one or two bands keeps the passes below, which spread its rows over threads.
    // Blocks one column wide took the passes below too, until the notebook's MX weights,
    // cast 32 x 1 twice a step, showed what the second read costs (1.31 against 1.00 ms at
    // 3072 x 768 on two threads).
    if (block.rows > 1 && block.rows <= 128 && rows >= 4 * block.rows) {
        const std::size_t grid_cols = q.block_grid_cols();
        const std::size_t chunk_rows = (chunk_rows_of(cols) + block.rows - 1) / block.rows * block.rows;
        cast_rows(
            x, q, multiplier, options, values, nullptr,
            [&](std::size_t r) {
                if (r % block.rows != 0) return;
                // The worker's scratch row, kept from band to band and call to call.
                thread_local std::vector<float> column_amax;
                column_amax.assign(cols, 0.0f);
                for (std::size_t i = r; i < std::min(rows, r + block.rows); ++i)
                    detail::column_amax(x.data() + i * cols, cols, column_amax.data());
                detail::row_block_amax(column_amax.data(), cols, block.cols,
                                       q.block_amax.data() + (r / block.rows) * grid_cols);
                set_scales((r / block.rows) * grid_cols, (r / block.rows + 1) * grid_cols);
            },
            chunk_rows);
        return q;
    }
    // 1. Each block's amax (NaN skipped, Inf kept).
    if (block.cols == 1)
        tall_block_amax(x, rows, cols, block.rows, q.block_amax);
    else
        wide_block_amax(x, rows, cols, block, chunk_rows_of(cols), q.block_amax);
    // 2. Each block's scale; the scale rules are scalar, so blocks run in parallel.
    parallel_for_chunks(q.block_count(), 4096,
                        [&](std::size_t, std::size_t b0, std::size_t b1) { set_scales(b0, b1); });
    // 3. The elements.
    cast_rows(x, q, multiplier, options, values, nullptr);
    return q;
}

QuantizedTensor quantize_with_scale(std::span<const float> x, std::size_t rows, std::size_t cols,
                                    const Format& element_format, const ConvertOptions& options, BlockScale scale,
                                    std::span<float> values) {
    QuantizedTensor q = start_cast(x, rows, cols, {std::max<std::size_t>(rows, 1), std::max<std::size_t>(cols, 1)},
                                   element_format, options, values);
    q.block_scale_inv[0] = scale.scale_inv;
    q.scale_codes[0] = scale.code;
    cast_rows(x, q, {scale.multiplier}, options, values, &q.block_amax[0]);
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
    fill_value_table(*format, value);
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
