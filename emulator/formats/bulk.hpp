// SPDX-License-Identifier: Apache-2.0
// Bulk span functions: quantize, dequantize, amax, range counts and error statistics.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "emulator/formats/format.hpp"
#include "emulator/formats/rounding.hpp"

namespace fp8lab::emu {

// codes[i] = cvt(x[i] * scale): one float32 multiply, then one rounding (docs/numerics.md §4).
// `first_index` is the global index of x[0] for stochastic rounding, so a tensor split
// into pieces gets the same bits as the whole. Formats of at most 8 bits.
void quantize_span(const Format& format, std::span<const float> x, float scale, std::span<std::uint8_t> codes,
                   const ConvertOptions& options = {}, std::uint64_t first_index = 0);

// Every code's float32 value (exact: every format of at most 16 bits fits), made once per
// format and kept. In detail, so that the GPU's own 256-entry value_table is not ambiguous.
namespace detail {
const std::vector<float>& value_table(const Format& f);
}

// out[i] = value(codes[i]) * scale_inv, in float32.
void dequantize_span(const Format& format, std::span<const std::uint8_t> codes, float scale_inv, std::span<float> out);

// out[i] = value(cvt(x[i])): "fake quantisation", for every format including BF16/FP16.
void round_span(const Format& format, std::span<const float> x, std::span<float> out,
                const ConvertOptions& options = {}, std::uint64_t first_index = 0);

// max |x|: NaN is skipped, Inf propagates (docs/numerics.md §4).
float amax(std::span<const float> x);

// What happens to each element of x * scale when it is converted.
struct RangeCounts {
    std::size_t elements = 0;
    std::size_t nan_inputs = 0;
    std::size_t inf_inputs = 0;
    std::size_t overflowed = 0;       // finite, but rounds past the largest finite value
    std::size_t flushed_to_zero = 0;  // non-zero, but rounds to zero
    std::size_t subnormal = 0;        // rounds to a non-zero subnormal

    bool operator==(const RangeCounts&) const = default;
    RangeCounts& operator+=(const RangeCounts& o) {
        elements += o.elements;
        nan_inputs += o.nan_inputs;
        inf_inputs += o.inf_inputs;
        overflowed += o.overflowed;
        flushed_to_zero += o.flushed_to_zero;
        subnormal += o.subnormal;
        return *this;
    }
};
RangeCounts count_range(const Format& format, std::span<const float> x, float scale, const ConvertOptions& options = {},
                        std::uint64_t first_index = 0);

// Error of `approx` against `reference`, accumulated in float64 in a fixed order.
struct ErrorStats {
    std::size_t elements = 0;
    std::size_t non_finite = 0;  // pairs where either side is NaN or Inf (excluded)
    double mean_squared_error = 0;
    double max_abs_error = 0;
    double max_rel_error = 0;        // over non-zero reference values
    double rel_frobenius_error = 0;  // ||approx - ref|| / ||ref||
};
ErrorStats error_stats(std::span<const float> reference, std::span<const float> approx);

}  // namespace fp8lab::emu
