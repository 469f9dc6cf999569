// SPDX-License-Identifier: Apache-2.0
// The training panel's work: one experiment trained in BF16 and at its own precision, on
// the CPU emulator or the GPU, as a StepOutput that grows while it runs.
#pragma once

#include "emulator/training/experiment.hpp"
#include "labs/framework/run_context.hpp"
#include "labs/framework/step_output.hpp"

namespace fp8lab::labs {

// Trains the experiment at BF16, then at its own precision, on context.backend().
// Publishes the growing loss curves through the context. The output has one figure (both
// loss curves), metrics (final losses; on the GPU ms/step, speedup, memory) and notes
// naming the backend, the device and the whole experiment. Throws RunCancelled when
// cancelled; std::invalid_argument naming every setting the backend cannot run;
// GpuUnavailable when there is no GPU.
StepOutput run_training_comparison(const emu::Experiment& experiment, RunContext& context);

// Throws std::invalid_argument naming every setting `backend` cannot run, with the reason.
void check_backend_supports(const emu::Experiment& experiment, Backend backend);

}  // namespace fp8lab::labs
