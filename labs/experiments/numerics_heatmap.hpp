// SPDX-License-Identifier: Apache-2.0
// A training run's per-tensor numerics as a student reads them: short tensor names and a
// heatmap of the share of each tensor's elements flushed to zero, tensor by step.
#pragma once

#include <string>
#include <vector>

#include "emulator/scaling/tensor_numerics.hpp"
#include "labs/framework/figure.hpp"

namespace fp8lab::labs {

// "0.qkv in" for blocks.0.qkv.input, "fc1 grad" for fc1.grad_output.
std::string short_tensor_name(const std::string& tensor);

// Rows: the tensors in the order of the run's first casts; columns: steps 0..steps-1; cell:
// the percentage of the cast's elements flushed to zero. The figure's id is `id`, its
// title left to the caller; no legend (the colour bar says what the colours mean).
Figure flushed_heatmap(const std::string& id, const std::vector<emu::TensorNumerics>& numerics, int steps);

}  // namespace fp8lab::labs
