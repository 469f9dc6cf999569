// SPDX-License-Identifier: Apache-2.0
// Counting one cast's zeros, flushes and saturations, and its relative error; the CSV.
#include "emulator/scaling/tensor_numerics.hpp"

#include <cmath>
#include <cstdio>
#include <ostream>

namespace fp8lab::emu {

TensorNumerics tensor_numerics(std::uint64_t step, const std::string& tensor, float amax, float scale,
                               std::span<const float> x, const QuantizedTensor& q, std::span<const float> out) {
    TensorNumerics n;
    n.step = step;
    n.tensor = tensor;
    n.amax = amax;
    n.scale = scale;
    n.elements = x.size();
    n.flushed = q.counts.flushed_to_zero;
    n.saturated = q.counts.overflowed;
    n.subnormal = q.counts.subnormal;
    double error = 0, norm = 0;
    for (std::size_t i = 0; i < x.size(); ++i) {
        n.zeros += x[i] == 0.0f;
        const double d = double(out[i]) - double(x[i]);
        error += d * d;
        norm += double(x[i]) * double(x[i]);
    }
    n.relative_error = norm > 0 ? std::sqrt(error / norm) : 0.0;
    return n;
}

void write_tensor_numerics(std::ostream& out, const std::vector<TensorNumerics>& records) {
    out << "step,tensor,amax,scale,elements,zeros,flushed,saturated,subnormal,relative_error\n";
    char line[512];
    for (const TensorNumerics& r : records) {
        std::snprintf(line, sizeof line, "%llu,%s,%.9g,%.9g,%llu,%llu,%llu,%llu,%llu,%.6g\n",
                      static_cast<unsigned long long>(r.step), r.tensor.c_str(), double(r.amax), double(r.scale),
                      static_cast<unsigned long long>(r.elements), static_cast<unsigned long long>(r.zeros),
                      static_cast<unsigned long long>(r.flushed), static_cast<unsigned long long>(r.saturated),
                      static_cast<unsigned long long>(r.subnormal), r.relative_error);
        out << line;
    }
}

}  // namespace fp8lab::emu
