// SPDX-License-Identifier: Apache-2.0
// The labs written in code; each function builds one lab's steps.
#pragma once

#include "labs/framework/lab.hpp"
#include "labs/framework/training_mapping.hpp"

namespace fp8lab::labs {

LabLogic formats_lab();          // 01: FP8 formats
LabLogic values_lab();           // 02: representable values and error by magnitude
LabLogic rounding_lab();         // 03: rounding and saturation
LabLogic why_scale_lab();        // 04: why scale
LabLogic loss_scaling_lab();     // 05: loss scaling
LabLogic delayed_scaling_lab();  // 06: delayed scaling
LabLogic block_scaling_lab();    // 07: block scaling and 4/6-bit formats
LabLogic training_lab();         // 08: training an MLP, BF16 versus FP8
LabLogic inference_lab();        // 09: FP8 for inference
LabLogic accumulation_lab();     // 10: inside the tensor core
LabLogic transformer_lab();      // 11: FP8 in a transformer

}  // namespace fp8lab::labs
