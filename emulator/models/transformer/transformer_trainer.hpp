// SPDX-License-Identifier: Apache-2.0
// The CPU trainer of the byte-level transformer (model.kind "transformer"): every linear
// layer's GEMMs under the experiment's numerics, AdamW on float32 master weights.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "emulator/training/experiment.hpp"
#include "emulator/training/trainer_contract.hpp"

namespace fp8lab::emu {

// Trains experiment.model.transformer on the text task. Throws std::invalid_argument naming
// the field for an unusable experiment, std::runtime_error naming the corpus when it cannot
// be read. The result's `text` holds the corpus read, the validation curve and the samples.
TrainerResult train_transformer(const Experiment& experiment, const TrainStepCallback& on_step = {},
                                bool record_trace = false, bool record_numerics = false);

// The transformer's trained parameters, counted (embeddings, gains and weights).
std::uint64_t transformer_parameters(const TransformerSpec& spec);

// About how many bytes the CPU trainer holds: 24 per parameter (master weight, gradient,
// AdamW's two moments, a quantised copy and slack) and the activations a step keeps for
// its backward pass (float32, with their quantised copies).
std::uint64_t transformer_training_bytes(const Experiment& experiment);

// The parameter tensors' names and gradients for step 0's batch, without updating, and
// the loss (what the finite-difference test compares): name, shape, values, gradient.
struct ParameterGradient {
    std::string name;
    int rows = 0, cols = 0;
    std::vector<float> value, gradient;
};
struct TransformerGradients {
    double loss = 0;
    std::vector<ParameterGradient> parameters;
};
// With `parameters` (same order and shapes), from those instead of the initial ones.
// The initial parameters (gradients empty), in the trainer's order: what the GPU uploads.
std::vector<ParameterGradient> transformer_initial_parameters(const Experiment& experiment);
TransformerGradients transformer_first_step_gradients(const Experiment& experiment,
                                                      const std::vector<ParameterGradient>* parameters = nullptr);
// The loss of step 0's batch with the given parameters (same order and shapes as above).
double transformer_loss(const Experiment& experiment, const std::vector<ParameterGradient>& parameters);

}  // namespace fp8lab::emu
