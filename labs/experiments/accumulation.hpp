// SPDX-License-Identifier: Apache-2.0
// Accumulating an FP8 GEMM's products: exact products, inexact sums. An emulated
// accumulator of limited width (with and without periodic promotion to float32), and the
// real tensor cores measured with and without cuBLASLt's fast accumulation.
#pragma once

#include <cstdint>
#include <functional>
#include <iosfwd>
#include <string>
#include <utility>
#include <vector>

#include "labs/experiments/recorded_csv.hpp"

namespace fp8lab::labs {

// Operands of the experiment: rows x k E4M3 values from |N(0, 1)| (all positive, so
// the sums grow with k and the accumulator's width shows) or N(0, 1), current-scaled.
struct DotOperands {
    int rows = 0, k = 0;
    std::vector<std::uint8_t> a, b;  // E4M3 codes, row-major rows x k
    float a_scale_inv = 1, b_scale_inv = 1;
};
DotOperands dot_operands(int rows, int k, bool all_positive, std::uint64_t seed);

// The float64 sum of products of row i of a with row j of b (dequantised), and the sum of
// their magnitudes, against which errors are measured.
struct ExactDot {
    double value = 0, magnitude = 0;
};
ExactDot exact_dot(const DotOperands& ops, int i, int j);
// exact_dot for every (i, j) of the first `outputs` rows of a and b, row-major.
std::vector<ExactDot> exact_dots(const DotOperands& ops, int outputs);

// Mean and worst |result - exact| / sum |products| over the outputs; result(o) is
// output o in the same row-major order as exact_dots.
struct DotErrors {
    double mean = 0, max = 0;
};
DotErrors dot_errors(const std::vector<ExactDot>& exact, const std::function<double(std::size_t)>& result);

// An accumulator that keeps `mantissa_bits` fraction bits, truncating after every addition
// (a model of a narrow tensor-core accumulator), promoted into a float32 sum every
// `promote_every` products (0: never). mantissa_bits 23 is plain float32.
double emulated_dot(const DotOperands& ops, int i, int j, int mantissa_bits, int promote_every);

struct AccumulationPoint {
    bool all_positive = true;  // |N(0,1)| operands, the worst case; N(0,1) (zero mean) otherwise
    int k = 0;
    bool fast_accumulation = false;
    double mean_error = 0, max_error = 0;  // |result - exact| / sum |products|, over outputs
};
struct AccumulationSweep {
    RecordedHeader header;  // device, date, configuration
    std::vector<AccumulationPoint> points;
};

// The real tensor cores: 64 x 64 outputs for each k, all-positive and zero-mean operands,
// fast accumulation off and on, float32 output. Throws GpuUnavailable without a GPU;
// `progress(done, total)` false cancels.
AccumulationSweep measure_tensor_core_accumulation(const std::function<bool(int, int)>& progress);
std::vector<int> accumulation_depths();  // the k values measured

// Version 2 (with an operands column) is written; version 1 (all-positive operands only)
// still reads.
void write_accumulation_csv(std::ostream& out, const AccumulationSweep& sweep);
AccumulationSweep read_accumulation_csv(std::istream& in, const std::string& source_name);  // errors name the line

}  // namespace fp8lab::labs
