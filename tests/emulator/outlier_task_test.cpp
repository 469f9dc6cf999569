// SPDX-License-Identifier: Apache-2.0
// The outlier task: its data, its loss without the massive rows, and the finding it exists
// for (a per-tensor scale loses where block scales do not, on 4 paired seeds).
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "emulator/training/experiment.hpp"
#include "emulator/models/mlp/mlp_trainer.hpp"
#include "emulator/training/paired_comparison.hpp"
#include "emulator/training/training_task.hpp"

using namespace fp8lab::emu;

namespace {

Experiment outlier_experiment(float outlier_scale) {
    Experiment e;
    e.task.kind = TaskKind::OutlierFeatures;
    e.task.outlier_scale = outlier_scale;
    e.task.batches = 64;
    e.tokens = 64;  // as lab 8's outliers step
    e.steps = 200;
    e.optimizer.schedule = {LrScheduleKind::WarmupCosine, 10, 0.1f};  // the labs' schedule
    return e;
}

// One variant over `seeds` seeds, as a comparison trains it.
std::vector<double> finals_over(Experiment e, int seeds) {
    std::vector<double> finals;
    for (int k = 0; k < seeds; ++k) finals.push_back(final_loss(train_mlp(with_seed(e, k)).loss));
    return finals;
}

Experiment variant(Experiment e, Precision p, Fp8Recipe recipe) {
    e.numerics.precision = p;
    set_recipe(e, recipe);
    return e;
}

}  // namespace

TEST_CASE("the outlier task: one row in 32 holds the massive values, which no other row has") {
    const Experiment e = outlier_experiment(1e5f);
    const TrainingTask task(e);
    const Batch b = task.batch(3, e.tokens);
    REQUIRE(b.scored.size() == std::size_t(e.tokens));
    const int d = e.model.input;
    for (int t = 0; t < e.tokens; ++t) {
        CAPTURE(t);
        const bool massive = t % kMassiveRowEvery == 0;
        CHECK(b.scored[std::size_t(t)] == (massive ? 0 : 1));
        // The data are BF16 values: 10^5 is stored as 99840.
        CHECK(b.inputs[std::size_t(t) * d + kOutlierChannels[0]] == (massive ? 99840.0f : 0.0f));
        CHECK(b.inputs[std::size_t(t) * d + kOutlierChannels[1]] == (massive ? -99840.0f : 0.0f));
        // Every other value of the row an ordinary one.
        float largest = 0;
        for (int k = 0; k < d; ++k)
            if (k != kOutlierChannels[0] && k != kOutlierChannels[1])
                largest = std::max(largest, std::fabs(b.inputs[std::size_t(t) * d + k]));
        CHECK(largest < 8.0f);
    }
    // The massive channels' first-layer weights start outlier_scale times smaller.
    const std::vector<float> w = initial_weights(e, 0), plain = initial_weights(outlier_experiment(1.0f), 0);
    CHECK(w[kOutlierChannels[0]] == doctest::Approx(plain[kOutlierChannels[0]] / 1e5f).epsilon(1e-6));
    CHECK(w[kOutlierChannels[0] + 1] == plain[kOutlierChannels[0] + 1]);
}

TEST_CASE("the outlier task's loss leaves the massive rows out") {
    // BF16 at two outlier scales: only the massive rows differ, and their weights get no
    // gradient, so the losses are the same bit for bit when those rows are out of the loss.
    Experiment a = outlier_experiment(1e3f), b = outlier_experiment(1e5f);
    a.steps = b.steps = 20;
    a.numerics.precision = b.numerics.precision = Precision::Bf16;
    CHECK(train_mlp(a).loss == train_mlp(b).loss);
}

TEST_CASE("outliers 10^5 times the rest: per-tensor scaling loses on paired seeds, block scaling far less") {
    // Past what E4M3's range holds beside the massive values, the other rows' values fall
    // into its subnormals and to zero under one per-tensor scale; block scales keep them.
    const int seeds = 4;
    const Experiment e = outlier_experiment(1e5f);
    const std::vector<double> bf16 = finals_over(variant(e, Precision::Bf16, Fp8Recipe::Delayed), seeds);
    const std::vector<double> delayed = finals_over(variant(e, Precision::Fp8, Fp8Recipe::Delayed), seeds);
    const std::vector<double> mx = finals_over(variant(e, Precision::Fp8, Fp8Recipe::MxRceil), seeds);
    const std::vector<double> blockwise = finals_over(variant(e, Precision::Fp8, Fp8Recipe::Blockwise), seeds);
    const PairedComparison d = compare_paired(bf16, delayed), m = compare_paired(bf16, mx),
                           b = compare_paired(bf16, blockwise);
    MESSAGE("against BF16: delayed " << paired_words(d, "delayed", "BF16") << "; MX " << paired_words(m, "MX", "BF16")
                                     << "; blockwise " << paired_words(b, "blockwise", "BF16"));
    CHECK(d.differs());
    CHECK(d.low > 1.0);
    // Per-tensor against block scales, on the same seeds: the per-tensor run ends higher.
    CHECK(compare_paired(mx, delayed).low > 1.0);
    CHECK(compare_paired(blockwise, delayed).low > 1.0);
    // Lab 8's text: at 10^4 E4M3's range still holds both, and per-tensor scaling is far
    // closer to BF16 than at 10^5.
    const Experiment e4 = outlier_experiment(1e4f);
    const PairedComparison d4 = compare_paired(finals_over(variant(e4, Precision::Bf16, Fp8Recipe::Delayed), seeds),
                                               finals_over(variant(e4, Precision::Fp8, Fp8Recipe::Delayed), seeds));
    MESSAGE("at 10^4: delayed " << paired_words(d4, "delayed", "BF16"));
    CHECK(d4.mean_ratio < d.mean_ratio);
}
