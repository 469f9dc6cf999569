// The labs' default experiment and the mapping helpers of the steps.
#include "labs/training_mapping.hpp"

#include "labs/lab.hpp"

namespace fp8lab::labs {

emu::Experiment lab_experiment() { return emu::Experiment{}; }

std::optional<emu::Experiment> step_experiment(const StepLogic& step, const Parameters& parameters) {
    if (!step.training) return std::nullopt;
    emu::Experiment e = lab_experiment();
    step.training(parameters, e);
    return e;
}

void set_all_formats(emu::Experiment& e, const emu::Format& f) {
    if (!emu::recipe_allows(emu::Fp8Recipe::Delayed, f)) return;  // BF16, FP16: not an element format
    e.numerics.formats = {&f, &f, &f};
}

emu::TensorRole role_of_tensor(const std::string& tensor) {
    if (tensor == "weights") return emu::TensorRole::Weight;
    if (tensor == "activations") return emu::TensorRole::Input;
    return emu::TensorRole::GradOutput;
}

void set_recipe(emu::Experiment& e, emu::Fp8Recipe recipe) {
    emu::Numerics& n = e.numerics;
    const bool dictated = n.recipe == emu::Fp8Recipe::Blockwise || n.recipe == emu::Fp8Recipe::Nvfp4;
    n.recipe = recipe;
    if (recipe == emu::Fp8Recipe::Blockwise) n.formats = {&emu::e4m3(), &emu::e4m3(), &emu::e4m3()};
    else if (recipe == emu::Fp8Recipe::Nvfp4) n.formats = {&emu::e2m1(), &emu::e2m1(), &emu::e2m1()};
    else if (dictated) n.formats = emu::Numerics{}.formats;
}

}  // namespace fp8lab::labs
