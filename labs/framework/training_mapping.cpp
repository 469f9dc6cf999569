// SPDX-License-Identifier: Apache-2.0
// The labs' default experiment and the mapping helpers of the steps.
#include "labs/framework/training_mapping.hpp"

#include "labs/framework/lab.hpp"

namespace fp8lab::labs {

emu::Experiment lab_experiment() {
    emu::Experiment e;
    e.seeds = 4;  // every comparison a lab makes shows its spread over four seeds
    // A short linear warm-up, then a cosine decay to a tenth: the schedule current
    // training uses, and without it a constant rate can end a run in a late loss spike.
    e.optimizer.schedule = {emu::LrScheduleKind::WarmupCosine, 10, 0.1f};
    return e;
}

std::optional<emu::Experiment> step_experiment(const StepLogic& step, const Parameters& parameters) {
    if (!step.training) return std::nullopt;
    emu::Experiment e = lab_experiment();
    step.training(parameters, e);
    return e;
}

emu::TensorRole role_of_tensor(const std::string& tensor) {
    if (tensor == "weights") return emu::TensorRole::Weight;
    if (tensor == "activations") return emu::TensorRole::Input;
    return emu::TensorRole::GradOutput;
}

void every_cast_in_format(const Parameters& p, emu::Experiment& e) {
    if (p.choice("format") != "all") emu::set_all_formats(e, emu::format_by_name(p.choice("format")));
}

void tensor_role_in_format(const Parameters& p, emu::Experiment& e) {
    const emu::TensorRole role = role_of_tensor(p.choice("tensor"));
    auto& roles = e.numerics.formats;
    (role == emu::TensorRole::Weight  ? roles.weight
     : role == emu::TensorRole::Input ? roles.input
                                      : roles.gradient) = &emu::format_by_name(p.choice("format"));
}

}  // namespace fp8lab::labs
