// SPDX-License-Identifier: Apache-2.0
// Several variants of a step's experiment trained on the CPU emulator over the same seeds,
// whichever the model: their mean curves, each run's loss over BF16's, the seeds' ratios,
// and a table of final losses compared with BF16 (and a reference run) seed by seed.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "emulator/training/experiment.hpp"
#include "labs/framework/run_context.hpp"
#include "labs/framework/step_output.hpp"

namespace fp8lab::labs {

struct TrainingVariant {
    std::string name;
    emu::Experiment config;
};

// What the comparison's table counts beside each run's loss: the gradient elements that reach
// their GEMMs as zero and those flushed by their own cast (what breaks: a gradient flushed at
// the last layer makes exact zeros upstream, which no later cast flushes), or the forward
// GEMMs' activations flushed to zero and left in the format's subnormals (the outlier task).
enum class CastCounts { Gradients, Activations };

// Trains each variant in turn on the CPU emulator, over the experiment's seeds, and shows
// the mean losses, each run's mean loss over BF16's step by step, and a table of final
// losses, each run compared with BF16 seed by seed (and, given `reference`, with that run
// too: the options of a recipe against the whole recipe).
// The first variant is the baseline (BF16); a text task's final loss is its validation loss.
StepOutput compare_variants(const std::vector<TrainingVariant>& variants, RunContext& ctx,
                            CastCounts counts = CastCounts::Gradients, std::optional<std::size_t> reference = {});

}  // namespace fp8lab::labs
