// SPDX-License-Identifier: Apache-2.0
// Training on the CPU emulator, whichever the model: the one entry point the CLI, the labs
// and the Python module call.
#pragma once

#include "emulator/training/experiment.hpp"
#include "emulator/models/mlp/mlp_trainer.hpp"

namespace fp8lab::emu {

// train_mlp or train_transformer, by experiment.model.kind.
TrainerResult train_on_cpu(const Experiment& experiment, const TrainStepCallback& on_step = {},
                           bool record_trace = false, bool record_numerics = false);

}  // namespace fp8lab::emu
