// SPDX-License-Identifier: Apache-2.0
// What every CPU trainer gives and takes, whichever the model: the result (losses, traces,
// numerics, the text report), the per-step callback that reports progress and cancels,
// the final loss every comparison reads, and the numerics checks common to all models.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "emulator/scaling/amax_trace.hpp"
#include "emulator/scaling/delayed_scaling.hpp"
#include "emulator/scaling/tensor_numerics.hpp"
#include "emulator/training/experiment.hpp"
#include "emulator/training/inference_spec.hpp"

namespace fp8lab::emu {

// The mean of the last min(10, n) losses: batches differ from step to step, so one step's
// loss depends on which batch it saw. Every "final loss" in fp8lab (CPU and GPU) is this.
double final_loss(const std::vector<float>& loss);

// What a comparison of runs reads of one run (docs/numerics.md §5.3): its validation loss at
// the end, in bits per byte, where the task holds text out (the transformer), else its final
// loss. A template: the CPU's TrainerResult and the GPU's result both have `text` and `loss`.
template <class Result>
double compared_loss(const Result& r) {
    if (r.text && !r.text->validation.empty()) return r.text->validation.back().bits_per_byte;
    return final_loss(r.loss);
}

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

// Throws std::invalid_argument naming each setting the CPU emulator cannot run.
void check_cpu_supports(const Experiment& experiment);

}  // namespace fp8lab::emu
