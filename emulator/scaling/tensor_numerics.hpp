// SPDX-License-Identifier: Apache-2.0
// Per cast of a GEMM operand, what Transformer Engine's precision-debugging tools log: the
// amax and scale, how many elements were zero already, flushed to zero, saturated, and the
// cast's relative error; written as CSV by `train --stats` and returned by the Python module.
#pragma once

#include <cstdint>
#include <iosfwd>
#include <span>
#include <string>
#include <vector>

#include "emulator/formats/format.hpp"
#include "emulator/formats/quantized_tensor.hpp"

namespace fp8lab::emu {

struct TensorNumerics {
    std::uint64_t step = 0;
    std::string tensor;  // "blocks.0.qkv.input", "fc1.grad_output"
    float amax = 0;      // max |x| before the cast
    float scale = 1;     // the per-tensor multiplier (block recipes: 1, their scales are per block)
    std::uint64_t elements = 0;
    std::uint64_t zeros = 0;      // zero before the cast (upstream: a ReLU, a flushed gradient)
    std::uint64_t flushed = 0;    // non-zero before, zero after
    std::uint64_t saturated = 0;  // past the format's largest value after scaling (clamped, or Inf without saturation)
    std::uint64_t subnormal = 0;  // non-zero results in the format's subnormal range
    double relative_error = 0;    // ||cast(x) - x|| / ||x|| (0 for an all-zero x)
};

// The record of one cast: x before it, q its codes and scales, out its dequantised values.
TensorNumerics tensor_numerics(std::uint64_t step, const std::string& tensor, float amax, float scale,
                               std::span<const float> x, const QuantizedTensor& q, std::span<const float> out);

// CSV: "step,tensor,amax,scale,elements,zeros,flushed,saturated,subnormal,relative_error",
// then one line per record (amax and scale as %.9g, the error as %.6g).
void write_tensor_numerics(std::ostream& out, const std::vector<TensorNumerics>& records);

}  // namespace fp8lab::emu
