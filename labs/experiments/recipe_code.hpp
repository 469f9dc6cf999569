// SPDX-License-Identifier: Apache-2.0
// "From the lab to your code": an experiment's numerics written as the code or flags of
// Transformer Engine, torchao, Megatron-LM, or as a runnable plain-PyTorch script.
#pragma once

#include <string>
#include <vector>

#include "emulator/enum_names.hpp"
#include "emulator/experiment.hpp"

namespace fp8lab::labs {

enum class CodeTarget { TransformerEngine, Torchao, Megatron, Pytorch };

struct RecipeCode {
    std::string language;  // "python" or "shell": how the listing is highlighted and saved
    std::string code;      // generated from the experiment, every setting written out
    // What the target does differently from fp8lab's run of the same experiment, or cannot
    // express at all: one sentence each.
    std::vector<std::string> differences;
};

// The experiment's precision, recipe, formats and options as `target` spells them. The
// Python forms import what they use and run as they are where the library is installed;
// Megatron-LM's is the flags to add to a pretraining command. The PyTorch script is the
// experiment's MLP and task, trained in BF16 and FP8 (per-tensor current scaling through
// torch._scaled_mm), printing each seed's final loss.
RecipeCode recipe_code(const emu::Experiment& experiment, CodeTarget target);

}  // namespace fp8lab::labs

namespace fp8lab {
template <>
std::span<const EnumName<labs::CodeTarget>> enum_names<labs::CodeTarget>();
}  // namespace fp8lab
