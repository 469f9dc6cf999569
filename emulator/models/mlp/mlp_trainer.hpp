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

#include "emulator/scaling/amax_trace.hpp"
#include "emulator/training/experiment.hpp"
#include "emulator/scaling/loss_scaler.hpp"
#include "emulator/training/operand_quantizer.hpp"
#include "emulator/training/training_task.hpp"

namespace fp8lab::emu {

// The mean of the last min(10, n) losses: batches differ from step to step, so one step's
// loss depends on which batch it saw. Every "final loss" in fp8lab (CPU and GPU) is this.
double final_loss(const std::vector<float>& loss);

// One linear layer's trained parameters (weight row-major, outputs x inputs).
struct LayerWeights {
    int inputs = 0, outputs = 0;
    std::vector<float> weight, bias;
};

// The text task's report (the transformer): which corpus was read, the validation loss
// every task.eval_every steps, and text the trained model wrote after a prompt.
struct ValidationPoint {
    int step = 0;                // after this step's update
    double bits_per_byte = 0.0;  // the mean cross-entropy over the validation windows, in bits
};
struct TextReport {
    std::string corpus;  // "PATH: N text files, B bytes"
    std::uint64_t parameters = 0;
    std::vector<ValidationPoint> validation;
    std::string prompt, greedy, sampled;  // printable: other bytes shown as '?'
};

struct TrainerResult {
    std::vector<float> loss;      // per step
    std::vector<float> accuracy;  // per step, classification only
    AmaxTrace trace;
    std::uint64_t gradient_elements = 0, gradients_flushed = 0;  // FP8 gradient operands
    std::uint64_t gradients_zero = 0;  // of those, zero in their GEMM: flushed, or zero already upstream
    std::uint64_t input_elements = 0, inputs_flushed = 0, inputs_subnormal = 0;  // forward GEMMs' FP8 activations
    std::vector<float> loss_scale;                                               // per step, with loss scaling
    // How far training moved the weights: ||W_end - W_start|| / ||W_start|| over every weight
    // matrix (the updates' size over the run, beside the loss it bought).
    double weight_change = 0;
    std::vector<std::size_t> skipped_steps;              // steps not applied: a gradient was not finite
    std::map<std::string, DelayedScalingState> scaling;  // per tensor, delayed scaling only
    std::vector<LayerWeights> final_layers;              // the parameters after the last step (inference labs)
    std::optional<InferenceResult> inference;            // experiment.inference's evaluation, when enabled
    std::optional<TextReport> text;                      // the transformer's text task
    std::vector<TensorNumerics> numerics;                // per traced cast, when recorded
    bool cancelled = false;
    double flushed_fraction() const {
        return gradient_elements ? double(gradients_flushed) / double(gradient_elements) : 0.0;
    }
    double zero_gradient_fraction() const {
        return gradient_elements ? double(gradients_zero) / double(gradient_elements) : 0.0;
    }
    double input_flushed_fraction() const {
        return input_elements ? double(inputs_flushed) / double(input_elements) : 0.0;
    }
    double input_subnormal_fraction() const {
        return input_elements ? double(inputs_subnormal) / double(input_elements) : 0.0;
    }
};

// Called after every step with its loss; returning false cancels the run (the result
// then holds the steps done so far and cancelled = true).
using TrainStepCallback = std::function<bool(int step, float loss)>;

// Throws std::invalid_argument naming the field when the experiment is unusable or asks
// for what the CPU cannot emulate (check_cpu_supports). The hidden activation is GELU's
// tanh approximation; the loss is the mean squared error (regression) or the mean softmax
// cross-entropy (classification). With BF16 or FP8 operands every GEMM's output is stored
// in BF16 (as a GPU stores it); FP32 keeps float32 throughout.
// record_numerics: every GEMM operand's cast (not the block recipes' transposed re-casts)
// appends its TensorNumerics to the result.
TrainerResult train_mlp(const Experiment& experiment, const TrainStepCallback& on_step = {}, bool record_trace = false,
                        bool record_numerics = false);

// Throws std::invalid_argument naming each setting the CPU emulator cannot run.
void check_cpu_supports(const Experiment& experiment);

// About how many bytes the CPU trainer holds for this experiment: 24 per parameter (master
// weights, gradients, AdamW's two moments, the quantised copies) and 24 per activation
// element of a step, measured with GNU time's peak RSS at three sizes (within 30%, above);
// with `trace`, the amax trace's records too (kept until the run ends).
std::uint64_t cpu_training_bytes(const Experiment& experiment, bool trace = false);

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
