// SPDX-License-Identifier: Apache-2.0
// Counting the fate of every element under one scale and one format: the emulator's range
// counts, plus the error of the rounded values.
#include "labs/experiments/quantization_census.hpp"

#include <cmath>
#include <vector>

#include "emulator/formats/bulk.hpp"

namespace fp8lab::labs {

QuantizationCensus census(const emu::Format& f, std::span<const float> x, float scale) {
    QuantizationCensus c;
    if (x.empty()) return c;
    // emu::count_range decides overflow after rounding for every format, FP6/FP4 included
    // (they saturate, so "became NaN or Inf" would never see their overflow).
    const emu::RangeCounts counts = emu::count_range(f, x, scale);
    std::vector<float> scaled(x.size()), rounded(x.size());
    for (std::size_t i = 0; i < x.size(); ++i) scaled[i] = x[i] * scale;  // float32, as the cast kernels do
    emu::round_span(f, scaled, rounded);                                  // saturating
    double squared = 0;
    std::size_t nonzero = 0;
    for (std::size_t i = 0; i < x.size(); ++i)
        if (x[i] != 0) {
            const double back = double(rounded[i]) / double(scale);
            squared += (back - x[i]) * (back - x[i]) / (double(x[i]) * x[i]);
            ++nonzero;
        }
    const double n = double(x.size());
    c.overflow = double(counts.overflowed) / n;
    c.flushed = double(counts.flushed_to_zero) / n;
    c.subnormal = double(counts.subnormal) / n;
    c.normal = 1.0 - c.overflow - c.flushed - c.subnormal;
    c.rms_relative_error = nonzero ? std::sqrt(squared / double(nonzero)) : 0;
    return c;
}

}  // namespace fp8lab::labs
