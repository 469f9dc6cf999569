// SPDX-License-Identifier: Apache-2.0
// "From the lab to your code": an experiment's numerics written as the code or flags of
// Transformer Engine, torchao, Megatron-LM, or as a runnable plain-PyTorch script.
#pragma once

#include <string>
#include <vector>

#include "emulator/base/enum_names.hpp"
#include "emulator/training/experiment.hpp"
#include "labs/framework/step_output.hpp"
#include "labs/framework/table.hpp"

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

// A "to your code" step's output: the experiment as each target's listing (the PyTorch
// script too with `with_script`), and the table "differences" of what each does otherwise.
StepOutput code_listings(const emu::Experiment& experiment, bool with_script);

// The table "hardware": for NVIDIA's Hopper and Blackwell and AMD's MI300 and MI350, the
// recipes whose scales their tensor (matrix) cores take (fp8lab's recipe table) and the
// recipe the library on that hardware picks or allows (Transformer Engine's checks, ROCm's
// Transformer Engine's).
Table recipe_hardware_table();

}  // namespace fp8lab::labs

namespace fp8lab {
template <>
std::span<const EnumName<labs::CodeTarget>> enum_names<labs::CodeTarget>();
}  // namespace fp8lab
