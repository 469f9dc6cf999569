// SPDX-License-Identifier: Apache-2.0
// The CPU reference trainer: an MLP with GELU, AdamW on float32 master weights, and
// GEMM operands in FP32, BF16 or FP8 (any recipe), emulated bit-exactly.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "emulator/training/experiment.hpp"
#include "emulator/training/trainer_contract.hpp"
#include "emulator/training/training_task.hpp"

namespace fp8lab::emu {

// Throws std::invalid_argument naming the field when the experiment is unusable or asks
// for what the CPU cannot emulate (check_cpu_supports). The hidden activation is GELU's
// tanh approximation; the loss is the mean squared error (regression) or the mean softmax
// cross-entropy (classification). With BF16 or FP8 operands every GEMM's output is stored
// in BF16 (as a GPU stores it); FP32 keeps float32 throughout.
// record_numerics: every GEMM operand's cast (not the block recipes' transposed re-casts)
// appends its TensorNumerics to the result.
TrainerResult train_mlp(const Experiment& experiment, const TrainStepCallback& on_step = {}, bool record_trace = false,
                        bool record_numerics = false);

// About how many bytes the CPU trainer holds for this experiment: 24 per parameter (master
// weights, gradients, AdamW's two moments, the quantised copies) and 24 per activation
// element of a step, measured with GNU time's peak RSS at three sizes (within 30%, above);
// with `trace`, the amax trace's records too (kept until the run ends).
std::uint64_t mlp_training_bytes(const Experiment& experiment, bool trace = false);

// One linear layer's parameters (weight row-major, outputs x inputs) and their gradients.
struct LayerGradients {
    int inputs = 0, outputs = 0;
    std::vector<float> weight, bias, weight_grad, bias_grad;
};
struct GradientSnapshot {
    float loss = 0;
    std::vector<LayerGradients> layers;
};
// The initial parameters and the gradients the backward pass computes for step 0's
// batch, without updating: what a finite-difference check compares against.
GradientSnapshot first_step_gradients(const Experiment& experiment);

}  // namespace fp8lab::emu
