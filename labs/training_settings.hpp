// The FP8 settings a lab step hands to the training panel (see StepLogic::training).
#pragma once

#include <string>

#include "emulator/operand_quantizer.hpp"

namespace fp8lab::labs {

// What a step's parameters can set; everything else keeps the trainer's defaults.
struct TrainingSettings {
    emu::Fp8Settings fp8;            // recipe, formats, history length, algorithm, margin
    bool first_last_in_bf16 = false;
    bool loss_scaling = false;
    int steps = 200;
};

// One line for the panel's list of runs: "FP8 delayed, hybrid (E5M2 gradients), history 16, ...".
std::string describe(const TrainingSettings& settings);

}  // namespace fp8lab::labs
