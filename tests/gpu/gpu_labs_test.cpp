// SPDX-License-Identifier: Apache-2.0
// The labs on the GPU backend: the training panel's comparison and the crossover sweep
// run on the real training step (skipped with the probe's reason elsewhere).
#include <doctest/doctest.h>

#include <sstream>

#include "labs/experiments/accumulation.hpp"
#include "labs/experiments/crossover.hpp"
#include "labs/experiments/training_comparison.hpp"
#include "labs/framework/training_mapping.hpp"
#include "tests/gpu/gpu_ready.hpp"

using namespace fp8lab;

namespace {

const labs::Figure& figure_of(const labs::StepOutput& out, const std::string& id) {
    for (const labs::Figure& f : out.figures)
        if (f.id == id) return f;
    FAIL("no figure " << id);
    return out.figures.at(0);
}

}  // namespace

TEST_CASE("the training panel's comparison runs on the GPU and reports speed and memory") {
    if (!gpu_ready()) return;
    emu::Experiment s = labs::lab_experiment();
    s.steps = 40;
    labs::RunContext context(labs::Backend::Gpu);
    const labs::StepOutput out = labs::run_training_comparison(s, context);
    // The losses, the seeds' ratios (4 seeds), and the FP8 run's numerics counted by the GPU.
    REQUIRE(out.figures.size() == 3);
    CHECK(figure_of(out, "seed-ratios").series.back().y.size() == 4);
    const labs::Figure& losses = figure_of(out, "training-loss");
    CHECK(losses.series.at(losses.series.size() - 1).y.size() == 40);
    const labs::Figure& numerics = figure_of(out, "numerics");
    CHECK(numerics.title.find("GPU") != std::string::npos);
    CHECK(numerics.series.at(0).columns == 40);
    bool speed = false, memory = false;
    for (const labs::Metric& m : out.metrics) {
        if (m.name == "FP8 speedup over BF16") speed = m.value > 0;
        if (m.name == "FP8 peak memory") memory = m.value > 0;
    }
    CHECK(speed);
    CHECK(memory);
    CHECK(out.notes.at(0).find("GPU") != std::string::npos);
    // MX runs on Hopper's emulated path, and its time says so.
    s.numerics.recipe = emu::Fp8Recipe::MxRceil;
    labs::RunContext again(labs::Backend::Gpu);
    const labs::StepOutput mx = labs::run_training_comparison(s, again);
    bool labelled = false;
    for (const std::string& note : mx.notes) labelled = labelled || note.find("FP8 speed emulated") == 0;
    CHECK(labelled);
    REQUIRE(mx.figures.size() == 3);  // the emulated path counts its casts too
    CHECK(figure_of(mx, "numerics").title.find("GPU") != std::string::npos);
    // Settings the GPU cannot run are refused, not run as something else.
    s.model.biases = true;
    labs::RunContext refused(labs::Backend::Gpu);
    CHECK_THROWS_WITH_AS(labs::run_training_comparison(s, refused), doctest::Contains("model.biases"),
                         std::invalid_argument);
}

TEST_CASE("a crossover sweep measures every shape and survives its CSV round trip") {
    if (!gpu_ready()) return;
    int calls = 0;
    const labs::CrossoverSweep sweep = labs::measure_crossover(12, [&](int, int) { return ++calls < 1000; });
    CHECK(sweep.points.size() == labs::crossover_shapes().size());
    CHECK(calls == int(2 * sweep.points.size()));
    for (const labs::CrossoverPoint& p : sweep.points) {
        CHECK(p.bf16_ms > 0);
        CHECK(p.fp8_ms > 0);
    }
    std::stringstream csv;
    labs::write_crossover_csv(csv, sweep);
    const labs::CrossoverSweep back = labs::read_crossover_csv(csv, "memory");
    REQUIRE(back.points.size() == sweep.points.size());
    CHECK(back.points[3].fp8_ms == sweep.points[3].fp8_ms);
    CHECK(back.header == sweep.header);
}

TEST_CASE("the tensor cores' accumulation error is measured with and without fast accumulation, both operand kinds") {
    if (!gpu_ready()) return;
    const labs::AccumulationSweep sweep = labs::measure_tensor_core_accumulation({});
    REQUIRE(sweep.points.size() == 4 * labs::accumulation_depths().size());
    double off = 0, on = 0;
    int random_sign = 0;
    for (const labs::AccumulationPoint& p : sweep.points) {
        CHECK(p.mean_error >= 0);
        CHECK(p.max_error >= p.mean_error);
        random_sign += !p.all_positive;
        if (p.k == 4096 && p.all_positive) (p.fast_accumulation ? on : off) = p.mean_error;
    }
    CHECK(random_sign == 2 * int(labs::accumulation_depths().size()));
    // What lab 10 teaches: promotion (fast accumulation off) keeps long sums more accurate.
    CHECK(off < on);
    std::ostringstream csv;
    labs::write_accumulation_csv(csv, sweep);
    std::istringstream in(csv.str());
    const labs::AccumulationSweep back = labs::read_accumulation_csv(in, "round trip");
    REQUIRE(back.points.size() == sweep.points.size());
    CHECK(back.points.back().all_positive == sweep.points.back().all_positive);
}
