// The training panel's work: the same losses as the CPU trainer, progress, cancellation,
// and the GPU refusing settings it cannot run instead of running something else.
#include <doctest/doctest.h>

#include "gpu/probe.hpp"
#include "gpu/tensor_ops.hpp"
#include "labs/training_comparison.hpp"

using namespace fp8lab;

namespace {
labs::TrainingSettings short_run() {
    labs::TrainingSettings s;
    s.steps = 12;
    s.fp8.delayed.history_length = 4;
    return s;
}
}  // namespace

TEST_CASE("the CPU comparison trains BF16 and FP8 exactly as the trainer does") {
    const labs::TrainingSettings s = short_run();
    labs::RunContext context(labs::Backend::Cpu);
    int partial_updates = 0;
    context.on_progress = [&](double, const std::string&) { ++partial_updates; };
    const labs::StepOutput out = labs::run_training_comparison(s, context);
    REQUIRE(out.figures.size() == 1);
    REQUIRE(out.figures[0].series.size() == 2);
    const emu::TrainerResult bf16 = emu::train_mlp(labs::cpu_training_config(s, emu::Precision::Bf16));
    const emu::TrainerResult fp8 = emu::train_mlp(labs::cpu_training_config(s, emu::Precision::Fp8));
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
}

TEST_CASE("a cancelled comparison stops with RunCancelled") {
    labs::RunContext context(labs::Backend::Cpu);
    context.request_cancel();
    CHECK_THROWS_AS(labs::run_training_comparison(short_run(), context), labs::RunCancelled);
}

TEST_CASE("settings describe themselves and the GPU refuses what it cannot run, naming it") {
    labs::TrainingSettings s = short_run();
    CHECK(labs::describe(s).find("history 4") != std::string::npos);
    CHECK_NOTHROW(labs::check_gpu_supports(s));
    s.fp8.recipe = emu::Fp8Recipe::Blockwise;  // the GPU runs blockwise (where cuBLASLt has block scales)
    CHECK_NOTHROW(labs::check_gpu_supports(s));
    CHECK(labs::describe(s).find("E4M3 everywhere") != std::string::npos);
    s.fp8.recipe = emu::Fp8Recipe::MxRceil;
    s.loss_scaling = true;
    CHECK_THROWS_WITH_AS(labs::check_gpu_supports(s), doctest::Contains("recipe 'mx-rceil'"), std::invalid_argument);
    CHECK_THROWS_WITH_AS(labs::check_gpu_supports(s), doctest::Contains("dynamic loss scaling"), std::invalid_argument);
    s.steps = 0;
    labs::RunContext context(labs::Backend::Cpu);
    CHECK_THROWS_AS(labs::run_training_comparison(s, context), std::invalid_argument);
}

TEST_CASE("without a usable GPU the GPU comparison says why instead of falling back") {
    if (gpu::probe().ready) {
        MESSAGE("a GPU is present: the GPU suite covers training on it");
        return;
    }
    labs::RunContext context(labs::Backend::Gpu);
    CHECK_THROWS_AS(labs::run_training_comparison(short_run(), context), gpu::GpuUnavailable);
}
