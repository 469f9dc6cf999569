// SPDX-License-Identifier: Apache-2.0
// The outlier task: its data, its loss without the massive rows, and the finding it exists
// for (a per-tensor scale loses where block scales do not, beyond the spread over 4 seeds).
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>

#include "emulator/training/experiment.hpp"
#include "emulator/models/mlp/mlp_trainer.hpp"
#include "emulator/training/seed_spread.hpp"
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
SeedSpread spread(Experiment e, int seeds) {
    std::vector<double> finals;
    for (int k = 0; k < seeds; ++k) finals.push_back(final_loss(train_mlp(with_seed(e, k)).loss));
    return spread_of(finals);
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

TEST_CASE("outliers 10^5 times the rest: per-tensor scaling loses beyond the 4-seed spread, block scaling does not") {
    // Past what E4M3's range holds beside the massive values, the other rows' values fall
    // into its subnormals and to zero under one per-tensor scale; block scales keep them.
    const int seeds = 4;
    const Experiment e = outlier_experiment(1e5f);
    const SeedSpread bf16 = spread(variant(e, Precision::Bf16, Fp8Recipe::Delayed), seeds);
    const SeedSpread delayed = spread(variant(e, Precision::Fp8, Fp8Recipe::Delayed), seeds);
    const SeedSpread mx = spread(variant(e, Precision::Fp8, Fp8Recipe::MxRceil), seeds);
    const SeedSpread blockwise = spread(variant(e, Precision::Fp8, Fp8Recipe::Blockwise), seeds);
    const double widest = std::max({bf16.largest - bf16.least, delayed.largest - delayed.least, mx.largest - mx.least,
                                    blockwise.largest - blockwise.least});
    const double delayed_excess = delayed.mean - bf16.mean;
    MESSAGE("final loss over BF16's: delayed " << delayed.mean / bf16.mean << ", MX " << mx.mean / bf16.mean
                                               << ", blockwise " << blockwise.mean / bf16.mean
                                               << "; widest 4-seed range " << widest);
    CHECK(delayed_excess - (mx.mean - bf16.mean) > widest);
    CHECK(delayed_excess - (blockwise.mean - bf16.mean) > widest);
    CHECK(differs_beyond_spread(delayed, bf16));
    CHECK_FALSE(differs_beyond_spread(mx, bf16));
    CHECK_FALSE(differs_beyond_spread(blockwise, bf16));
    // Lab 8's text: at 10^4 E4M3's range still holds both, and per-tensor scaling is back
    // within BF16's spread.
    const Experiment e4 = outlier_experiment(1e4f);
    CHECK_FALSE(differs_beyond_spread(spread(variant(e4, Precision::Fp8, Fp8Recipe::Delayed), seeds),
                                      spread(variant(e4, Precision::Bf16, Fp8Recipe::Delayed), seeds)));
}
