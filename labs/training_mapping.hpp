// How lab steps hand their settings to the training experiment: the labs' default
// experiment and the helpers every step's mapping uses.
#pragma once

#include <optional>
#include <string>

#include "emulator/experiment.hpp"
#include "labs/parameters.hpp"

namespace fp8lab::labs {

struct StepLogic;

// The experiment every step starts from: a 64-256-64 MLP without biases on the teacher
// task, 128 tokens, 200 steps, FP8 delayed scaling (hybrid): the same on both backends,
// and small enough that the CPU trains it in seconds.
emu::Experiment lab_experiment();

// The experiment a step produces with these parameters, or nullopt when the step has
// no training (StepLogic::no_training_reason says why).
std::optional<emu::Experiment> step_experiment(const StepLogic& step, const Parameters& parameters);

// Every role's element format (when `format` is an element format; others leave it).
void set_all_formats(emu::Experiment& e, const emu::Format& format);
// The role a sampled tensor plays: weights -> weight, activations -> input, gradients -> gradient.
emu::TensorRole role_of_tensor(const std::string& tensor);
// The recipe and the element formats it dictates (blockwise E4M3, NVFP4 E2M1); a
// per-tensor or MX recipe coming from those gets the hybrid formats back.
void set_recipe(emu::Experiment& e, emu::Fp8Recipe recipe);

}  // namespace fp8lab::labs
