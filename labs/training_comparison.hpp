// The training panel's work: the lab's MLP trained in BF16 and in FP8 with a step's
// settings, on the CPU emulator or the GPU, as a StepOutput that grows while it runs.
#pragma once

#include <string>

#include "emulator/mlp_trainer.hpp"
#include "labs/run_context.hpp"
#include "labs/step_output.hpp"
#include "labs/training_settings.hpp"

namespace fp8lab::labs {

// The CPU emulator's configuration (the trainer's default task and model).
emu::TrainerConfig cpu_training_config(const TrainingSettings& settings, emu::Precision precision);

// Throws std::invalid_argument naming each setting the GPU step cannot run (it runs
// delayed, current and blockwise scaling, all layers in FP8, no loss scaling) instead of
// silently running something else.
void check_gpu_supports(const TrainingSettings& settings);

// Trains BF16, then FP8, on context.backend(). Publishes the growing loss curves through
// the context. The output has one figure (both loss curves), metrics (final losses; on the
// GPU ms/step, speedup, memory) and notes naming the backend and device. Throws
// RunCancelled when cancelled, GpuUnavailable / std::invalid_argument when the GPU cannot.
StepOutput run_training_comparison(const TrainingSettings& settings, RunContext& context);

}  // namespace fp8lab::labs
