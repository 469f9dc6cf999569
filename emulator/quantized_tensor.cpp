// Block walking, dequantisation and statistics shared by every scaling recipe.
#include "emulator/quantized_tensor.hpp"

#include <algorithm>
#include <stdexcept>

#include "emulator/bulk_loops.hpp"
#include "emulator/convert.hpp"
#include "emulator/parallel.hpp"

namespace fp8lab::emu {

void check_shape(std::span<const float> x, std::size_t rows, std::size_t cols, BlockShape block) {
    if (rows * cols != x.size())
        throw std::invalid_argument("tensor of " + std::to_string(x.size()) +
                                    " elements is not " + std::to_string(rows) + " x " +
                                    std::to_string(cols));
    if (block.rows == 0 || block.cols == 0)
        throw std::invalid_argument("block shape must be at least 1 x 1");
}

QuantizedTensor quantize_blocks(std::span<const float> x, std::size_t rows, std::size_t cols,
                                BlockShape block, const Format& element_format,
                                const ConvertOptions& options,
                                const std::function<BlockScale(float amax)>& scale_of) {
    check_shape(x, rows, cols, block);
    if (element_format.total_bits > 8 || !detail::float32_kernel_supports(element_format))
        throw std::invalid_argument("block scaling needs an FP8, FP6 or FP4 element format, not " +
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

    const std::size_t grid_rows = q.block_grid_rows(), grid_cols = q.block_grid_cols();
    std::vector<RangeCounts> partial(grid_rows);
    // One chunk per row of blocks: results are the same for any number of threads.
    parallel_for_chunks(grid_rows, 1, [&](std::size_t br, std::size_t, std::size_t) {
        const std::size_t r0 = br * block.rows, r1 = std::min(rows, r0 + block.rows);
        RangeCounts& counts = partial[br];
        for (std::size_t bc = 0; bc < grid_cols; ++bc) {
            const std::size_t c0 = bc * block.cols, c1 = std::min(cols, c0 + block.cols);
            float a = 0.0f;
            for (std::size_t r = r0; r < r1; ++r) {
                const float m = amax(x.subspan(r * cols + c0, c1 - c0));
                a = std::max(a, m);  // amax already skipped NaN
            }
            const BlockScale s = scale_of(a);
            const std::size_t b = br * grid_cols + bc;
            q.block_amax[b] = a;
            q.block_scale_inv[b] = s.scale_inv;
            q.scale_codes[b] = s.code;
            // Blocks are short: call the vectorised loops directly, not the threaded spans.
            detail::LoopParams p{kernel, s.multiplier, options.seed, options.random_bits, 0};
            for (std::size_t r = r0; r < r1; ++r) {
                const std::size_t first = r * cols + c0, n = c1 - c0;
                p.first_index = first;
                detail::quantize_loop(options.rounding, x.data() + first, q.codes.data() + first, n, p);
                const detail::RangeTally t =
                    detail::range_loop(options.rounding, x.data() + first, n, first_normal, p);
                counts += RangeCounts{n, t.nan, t.inf, t.overflowed, t.flushed, t.subnormal};
            }
        }
    });
    for (const RangeCounts& c : partial) q.counts += c;
    return q;
}

std::vector<float> QuantizedTensor::dequantize() const {
    float value[256];
    for (std::uint32_t c = 0; c < 256; ++c)
        value[c] = c < format->code_count() ? static_cast<float>(decode(*format, c)) : 0.0f;
    std::vector<float> out(codes.size());
    for (std::size_t r = 0; r < rows; ++r)
        for (std::size_t c = 0; c < cols; ++c) {
            const std::size_t i = r * cols + c;
            out[i] = value[codes[i]] * block_scale_inv[block_of(r, c)];
        }
    return out;
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
