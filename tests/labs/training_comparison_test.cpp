// The training panel's work: the same losses as the CPU trainer, progress, cancellation,
// and the GPU refusing settings it cannot run instead of running something else.
#include <doctest/doctest.h>

#include "gpu/probe.hpp"
#include "gpu/tensor_ops.hpp"
#include "emulator/mlp_trainer.hpp"
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
    const emu::Experiment s = short_run();
    labs::RunContext context(labs::Backend::Cpu);
    int partial_updates = 0;
    context.on_progress = [&](double, const std::string&) { ++partial_updates; };
    const labs::StepOutput out = labs::run_training_comparison(s, context);
    REQUIRE(out.figures.size() == 1);
    REQUIRE(out.figures[0].series.size() == 2);
    const emu::TrainerResult bf16 = emu::train_mlp(emu::with_precision(s, emu::Precision::Bf16));
    const emu::TrainerResult fp8 = emu::train_mlp(s);
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
    s.numerics.fast_accumulation.forward = true;
    CHECK_THROWS_WITH_AS(labs::check_backend_supports(s, labs::Backend::Cpu),
                         doctest::Contains("numerics.fast_accumulation.forward"), std::invalid_argument);
    CHECK_NOTHROW(labs::check_backend_supports(s, labs::Backend::Gpu));
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
