// SPDX-License-Identifier: Apache-2.0
// How lab steps hand their settings to the training experiment: the labs' default
// experiment and the helpers every step's mapping uses.
#pragma once

#include <optional>
#include <string>

#include "emulator/training/experiment.hpp"
#include "labs/framework/parameters.hpp"

namespace fp8lab::labs {

struct StepLogic;

// The experiment every step starts from: a 64-256-64 MLP without biases on the teacher
// task, 128 tokens, 200 steps, FP8 delayed scaling (hybrid): the same on both backends,
// and small enough that the CPU trains it in seconds; every comparison over 4 seeds.
emu::Experiment lab_experiment();

// The experiment a step produces with these parameters, or nullopt when the step has
// no training (StepLogic::no_training_reason says why).
std::optional<emu::Experiment> step_experiment(const StepLogic& step, const Parameters& parameters);

// The role a sampled tensor plays: weights -> weight, activations -> input, gradients -> gradient.
emu::TensorRole role_of_tensor(const std::string& tensor);

// The mappings several steps share, as StepLogic::training:
// the "format" parameter is every cast's element format ("all": the experiment's own);
void every_cast_in_format(const Parameters& p, emu::Experiment& e);
// the "format" parameter is the element format of the "tensor" parameter's role.
void tensor_role_in_format(const Parameters& p, emu::Experiment& e);

}  // namespace fp8lab::labs
