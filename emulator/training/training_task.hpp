// SPDX-License-Identifier: Apache-2.0
// Training data made from a seed: a teacher-network regression and Gaussian clusters,
// stored in BF16 as a GPU holds them, so both backends train on the same bits.
// The outlier task is the teacher's with "massive activations", as Sun et al. measured them
// in LLMs (arXiv 2402.17762: a few activations up to 100,000 times larger than the rest, in
// a few fixed channels of a few tokens, the first one above all): one row in
// kMassiveRowEvery holds +-outlier_scale (in the other values' standard deviation) in the
// channels kOutlierChannels, which are zero in every other row. Those rows are left out
// of the loss (their target would have the optimiser chase the massive channels' weights),
// so all they do is what they do to the casts: a per-tensor scale, set by them, pushes the
// other rows' values into E4M3's subnormals and to zero; a block scale confines the damage
// to their blocks.
#pragma once

#include <cstdint>
#include <vector>

#include "emulator/training/experiment.hpp"

namespace fp8lab::emu {

// A batch, row-major: inputs tokens x input; targets tokens x output (one-hot for
// classification) and labels (classification only). Every value is a BF16 value.
struct Batch {
    int tokens = 0;
    std::vector<float> inputs, targets;
    std::vector<int> labels;
    std::vector<std::uint8_t> scored;  // per row, 1 if the loss counts it; empty: every row
};

// The outlier task's massive rows: row t of every batch with t % kMassiveRowEvery == 0.
inline constexpr int kMassiveRowEvery = 32;
constexpr bool is_massive_row(int row) { return row % kMassiveRowEvery == 0; }

class TrainingTask {
  public:
    // The task of an experiment: its kind and seed, the model's input and output sizes.
    explicit TrainingTask(const Experiment& experiment);

    // Batch `index` of `tokens` rows: a function of (seed, index, tokens) only, so any
    // run, thread count or backend sees the same data. Training uses indices 0 to
    // task.batches - 1; larger ones are held-out data.
    Batch batch(std::uint64_t index, int tokens) const;
    // The batch that step `step` trains on: batch(step mod task.batches).
    Batch batch_of_step(std::uint64_t step) const;

  private:
    TaskKind kind_;
    std::uint64_t seed_;
    int input_, output_, tokens_, batches_;
    float outlier_scale_;
    std::vector<float> outliers_;  // the massive channels' values (BF16), in kOutlierChannels' order
    std::vector<float> teacher_;   // teacher: output x input, target = tanh(x teacher^T)
    std::vector<float> centers_;   // clusters: classes x input
};

// Normal(0, 1) from the counter-based generator: a pure function of (seed, index).
float normal_sample(std::uint64_t seed, std::uint64_t index);

// Layer l's initial weights (outputs x inputs, row-major): N(0, 1/inputs) from the
// experiment's init_seed. Both backends start from these.
std::vector<float> initial_weights(const Experiment& experiment, int layer);

}  // namespace fp8lab::emu
