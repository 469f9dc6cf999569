// SPDX-License-Identifier: Apache-2.0
// The training panel's work: the same losses as the CPU trainer, progress, cancellation,
// and the GPU refusing settings it cannot run instead of running something else.
#include <doctest/doctest.h>

#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <fstream>
#include <string>

#include "gpu/probe.hpp"
#include "gpu/tensor_ops.hpp"
#include "emulator/models/cpu_training.hpp"
#include "emulator/models/mlp/mlp_trainer.hpp"
#include "emulator/training/training_task.hpp"
#include "labs/experiments/seed_comparison.hpp"
#include "labs/experiments/training_comparison.hpp"
#include "labs/framework/training_mapping.hpp"

using namespace fp8lab;

namespace {
emu::Experiment short_run() {
    emu::Experiment e = labs::lab_experiment();
    e.steps = 12;
    e.numerics.delayed.history_length = 4;
    return e;
}
}  // namespace

TEST_CASE("the CPU comparison trains BF16 and FP8 exactly as the trainer does") {
    emu::Experiment s = short_run();
    s.seeds = 1;  // one run each: the curves are the trainer's own
    labs::RunContext context(labs::Backend::Cpu);
    int partial_updates = 0;
    context.on_progress = [&](double, const std::string&) { ++partial_updates; };
    const labs::StepOutput out = labs::run_training_comparison(s, context);
    REQUIRE(out.figures.size() == 2);  // the losses, and the FP8 run's numerics
    REQUIRE(out.figures[0].series.size() == 2);
    const emu::TrainerResult bf16 = emu::train_mlp(emu::with_precision(s, emu::Precision::Bf16));
    const emu::TrainerResult fp8 = emu::train_mlp(s, {}, false, true);
    // The heatmap: one row per cast tensor (3 per layer), one column per step, the flushed
    // share of each cast as the trainer counted it.
    const labs::Figure& heat = out.figures[1];
    CHECK(heat.id == "numerics");
    REQUIRE(heat.series.size() == 1);
    const labs::Series& cells = heat.series[0];
    CHECK(cells.kind == labs::SeriesKind::Heatmap);
    CHECK(cells.rows == 3 * s.linear_layers());
    CHECK(cells.columns == 12);
    CHECK(heat.y_axis.categories.at(0) == "fc1 in");
    const emu::TensorNumerics& first = fp8.numerics.at(0);
    REQUIRE(first.tensor == "fc1.input");
    CHECK(cells.values.at(0) == doctest::Approx(100.0 * double(first.flushed) / double(first.elements)));
    REQUIRE(out.figures[0].series[0].y.size() == 12);
    for (std::size_t i = 0; i < 12; ++i) {
        CHECK(out.figures[0].series[0].y[i] == double(bf16.loss[i]));
        CHECK(out.figures[0].series[1].y[i] == double(fp8.loss[i]));
    }
    CHECK(partial_updates >= 2);
    CHECK(context.partial() != nullptr);
    bool found = false;
    for (const labs::Metric& m : out.metrics)
        if (m.name.find("FP8 final loss") == 0) {
            found = true;
            double mean = 0;
            for (std::size_t i = 2; i < 12; ++i) mean += fp8.loss[i];
            CHECK(m.value == doctest::Approx(mean / 10));
        }
    CHECK(found);
    CHECK(out.notes.at(0).find("CPU emulator") != std::string::npos);
    bool names_experiment = false;
    for (const std::string& n : out.notes)
        names_experiment = names_experiment || n.find("64-256-64") != std::string::npos;
    CHECK(names_experiment);
}

TEST_CASE("over several seeds the comparison draws each mean with its range and says whether they differ") {
    const emu::Experiment s = short_run();  // the labs' experiment: 4 seeds
    REQUIRE(s.seeds == 4);
    labs::RunContext context(labs::Backend::Cpu);
    const labs::StepOutput out = labs::run_training_comparison(s, context);
    const labs::Figure& f = out.figures.at(0);
    REQUIRE(f.series.size() == 4);  // a band and a mean for each of BF16 and FP8
    CHECK(f.series[0].kind == labs::SeriesKind::Band);
    std::vector<std::vector<float>> fp8;
    for (int k = 0; k < 4; ++k) fp8.push_back(emu::train_mlp(emu::with_seed(s, k)).loss);
    for (std::size_t i = 0; i < 12; ++i) {
        double mean = 0, least = fp8[0][i], largest = fp8[0][i];
        for (const auto& c : fp8) {
            mean += c[i] / 4.0;
            least = std::min(least, double(c[i]));
            largest = std::max(largest, double(c[i]));
        }
        CHECK(f.series[3].y[i] == doctest::Approx(mean));
        CHECK(f.series[2].y[i] == double(least));
        CHECK(f.series[2].y_upper[i] == double(largest));
    }
    // Each seed changes the data and the initial weights: the runs differ.
    CHECK(fp8[0] != fp8[1]);
    bool worded = false;
    for (const std::string& n : out.notes)
        worded = worded || n.find("FP8 against BF16: no difference found at 4 seeds") != std::string::npos ||
                 n.find("than BF16 (95% interval") != std::string::npos;
    CHECK(worded);
    // Beside the curves, the seeds' ratios: one dot a seed, the interval as a bar.
    const auto ratios = std::find_if(out.figures.begin(), out.figures.end(),
                                     [](const labs::Figure& g) { return g.id == "seed-ratios"; });
    REQUIRE(ratios != out.figures.end());
    const labs::Series& dots = ratios->series.back();
    CHECK(dots.kind == labs::SeriesKind::Scatter);
    CHECK(dots.y.size() == 4);
}

TEST_CASE("a run that ends lower than BF16 on the paired seeds is said so, with what was measured of both") {
    const std::vector<double> bf16{1.0, 1.1, 1.2};
    const labs::RunMeasures bf16_measures{0.0, 0.25}, fp8_measures{0.125, 0.5};
    const std::string note = labs::lower_than_bf16_note("FP8", labs::compare_paired(bf16, std::vector{0.9, 1.0, 1.09}),
                                                        &bf16_measures, &fp8_measures);
    CHECK(note.find("FP8 ends lower than BF16: ") == 0);
    CHECK(note.find("better on 3 of 3 seeds") != std::string::npos);
    CHECK(note.find("12.5% of this run's gradient elements") != std::string::npos);
    CHECK(note.find("moved its weights by 50% of their starting size, against 25% for BF16") != std::string::npos);
    // The GPU measures neither: the note says where they are measured.
    CHECK(labs::lower_than_bf16_note("FP8", labs::compare_paired(bf16, std::vector{0.9, 1.0, 1.09}), nullptr, nullptr)
              .find("CPU emulator measures") != std::string::npos);
    // No difference found, or higher: nothing to explain here.
    CHECK(labs::lower_than_bf16_note("FP8", labs::compare_paired(bf16, std::vector{0.9, 1.2, 1.1}), &bf16_measures,
                                     &fp8_measures)
              .empty());
    CHECK(labs::lower_than_bf16_note("FP8", labs::compare_paired(bf16, std::vector{1.5, 1.6, 1.7}), &bf16_measures,
                                     &fp8_measures)
              .empty());
}

TEST_CASE("how far training moved the weights: more with a larger learning rate, as the weights say") {
    emu::Experiment e = short_run();
    e.seeds = 1;
    const emu::TrainerResult r = emu::train_on_cpu(e);
    CHECK(r.weight_change > 0);
    // Independently: the final weights against the initial ones, layer by layer.
    double moved = 0, size = 0;
    for (std::size_t l = 0; l < r.final_layers.size(); ++l) {
        const std::vector<float> start = emu::initial_weights(e, int(l));
        for (std::size_t i = 0; i < start.size(); ++i) {
            moved +=
                (double(r.final_layers[l].weight[i]) - start[i]) * (double(r.final_layers[l].weight[i]) - start[i]);
            size += double(start[i]) * start[i];
        }
    }
    CHECK(r.weight_change == doctest::Approx(std::sqrt(moved / size)).epsilon(1e-6));
    e.optimizer.learning_rate *= 4;
    CHECK(emu::train_on_cpu(e).weight_change > r.weight_change);
}

TEST_CASE("a cancelled comparison stops with RunCancelled") {
    labs::RunContext context(labs::Backend::Cpu);
    context.request_cancel();
    CHECK_THROWS_AS(labs::run_training_comparison(short_run(), context), labs::RunCancelled);
}

TEST_CASE("each backend refuses what it cannot run, naming the field and the reason") {
    emu::Experiment s = short_run();
    CHECK(emu::describe(s).find("history 4") != std::string::npos);
    CHECK_NOTHROW(labs::check_backend_supports(s, labs::Backend::Gpu));  // the labs' default runs on both
    CHECK_NOTHROW(labs::check_backend_supports(s, labs::Backend::Cpu));
    s.numerics.recipe = emu::Fp8Recipe::Blockwise;
    s.numerics.formats = {&emu::e4m3(), &emu::e4m3(), &emu::e4m3()};
    CHECK_NOTHROW(labs::check_backend_supports(s, labs::Backend::Gpu));
    // MX with loss scaling runs on the GPU's emulated path; with fast accumulation it cannot.
    s.numerics.recipe = emu::Fp8Recipe::MxRceil;
    s.numerics.loss_scaling = true;
    CHECK_NOTHROW(labs::check_backend_supports(s, labs::Backend::Gpu));
    s.numerics.fast_accumulation.wgrad = true;
    CHECK_THROWS_WITH_AS(labs::check_backend_supports(s, labs::Backend::Gpu),
                         doctest::Contains("numerics.fast_accumulation"), std::invalid_argument);
    s = short_run();
    s.numerics.fast_accumulation.forward = true;  // the CPU models it, the GPU has it
    CHECK_NOTHROW(labs::check_backend_supports(s, labs::Backend::Cpu));
    CHECK_NOTHROW(labs::check_backend_supports(s, labs::Backend::Gpu));
    s.numerics.recipe = emu::Fp8Recipe::Blockwise;  // whose GEMMs always promote
    s.numerics.formats = {&emu::e4m3(), &emu::e4m3(), &emu::e4m3()};
    CHECK_THROWS_WITH_AS(labs::check_backend_supports(s, labs::Backend::Cpu),
                         doctest::Contains("numerics.fast_accumulation.forward"), std::invalid_argument);
    s = short_run();
    s.model.biases = true;
    s.task.kind = emu::TaskKind::GaussianClusters;
    CHECK_THROWS_WITH_AS(labs::check_backend_supports(s, labs::Backend::Gpu), doctest::Contains("model.biases"),
                         std::invalid_argument);
    CHECK_THROWS_WITH_AS(labs::check_backend_supports(s, labs::Backend::Gpu), doctest::Contains("task.kind"),
                         std::invalid_argument);
    s.steps = 0;
    labs::RunContext context(labs::Backend::Cpu);
    CHECK_THROWS_WITH_AS(labs::run_training_comparison(s, context), doctest::Contains("steps"), std::invalid_argument);
}

TEST_CASE("without a usable GPU the GPU comparison says why instead of falling back") {
    if (gpu::probe().ready) {
        MESSAGE("a GPU is present: the GPU suite covers training on it");
        return;
    }
    labs::RunContext context(labs::Backend::Gpu);
    CHECK_THROWS_AS(labs::run_training_comparison(short_run(), context), gpu::GpuUnavailable);
}

TEST_CASE("the transformer's comparison reports the text: corpus, validation loss and what each model writes") {
    const std::string corpus = "/tmp/fp8lab-comparison-corpus-" + std::to_string(::getpid()) + ".txt";
    {
        std::ofstream out(corpus);
        for (int i = 0; i < 1000; ++i) out << "A format's range and its precision are two different things.\n";
    }
    emu::Experiment e = emu::default_transformer_experiment();
    e.model.transformer.width = 32, e.model.transformer.ffn = 64, e.model.transformer.sequence = 16;
    e.tokens = 32;
    e.steps = 4;
    e.seeds = 1;
    e.task.corpus = corpus;
    labs::RunContext context(labs::Backend::Cpu);
    const labs::StepOutput out = labs::run_training_comparison(e, context);
    const emu::TrainerResult fp8 = emu::train_on_cpu(e);
    REQUIRE(out.figures.at(0).series.size() == 2);
    for (std::size_t i = 0; i < 4; ++i) CHECK(out.figures[0].series[1].y.at(i) == double(fp8.loss[i]));
    int validation = 0, writes = 0;
    for (const labs::Metric& m : out.metrics)
        if (m.name.find("validation loss") != std::string::npos) {
            ++validation;
            CHECK(m.unit == "bits/byte");
        }
    bool names_corpus = false;
    for (const std::string& n : out.notes) {
        writes += n.find(" writes (") != std::string::npos;
        names_corpus = names_corpus || n.find("Text: " + corpus) == 0;
    }
    CHECK(validation == 2);
    CHECK(writes == 4);
    CHECK(names_corpus);
    std::remove(corpus.c_str());
}
