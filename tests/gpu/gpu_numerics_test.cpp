// SPDX-License-Identifier: Apache-2.0
// Per-tensor numerics on the GPU: the cast kernel's counts against the emulator's on the
// hard cases, training runs' records against the CPU trainer's (the MLP's native and
// emulated paths, the transformer's), and what recording costs.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <functional>
#include <map>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "emulator/formats/bulk.hpp"
#include "emulator/models/cpu_training.hpp"
#include "emulator/models/mlp/mlp_trainer.hpp"
#include "gpu/tensor_ops.hpp"
#include "gpu/trainer.hpp"
#include "tests/gpu/gpu_ready.hpp"

using namespace fp8lab;

namespace {

// The emulator's count of one per-tensor cast: what the cast kernel must report.
emu::TensorNumerics expected(const emu::Format& f, const std::vector<float>& x, float scale) {
    const emu::RangeCounts range = emu::count_range(f, x, scale);
    std::vector<std::uint8_t> codes(x.size());
    emu::quantize_span(f, x, scale, codes);
    std::vector<float> out(x.size());
    emu::dequantize_span(f, codes, 1.0f / scale, out);
    emu::TensorNumerics n;
    n.elements = x.size();
    n.flushed = range.flushed_to_zero;
    n.saturated = range.overflowed;
    n.subnormal = range.subnormal;
    double error = 0, norm = 0;
    for (std::size_t i = 0; i < x.size(); ++i) {
        n.zeros += x[i] == 0.0f;
        error += (double(out[i]) - x[i]) * (double(out[i]) - x[i]);
        norm += double(x[i]) * x[i];
    }
    n.relative_error = std::sqrt(error / norm);
    return n;
}

gpu::GpuRun small_run(emu::Fp8Recipe recipe) {
    gpu::GpuRun c{gpu::gpu_bench_experiment(256, 1024, 64)};
    c.experiment.steps = 12;
    emu::set_recipe(c.experiment, recipe);
    c.experiment.numerics.fast_accumulation = {};
    c.warmup_steps = 2;
    c.record_numerics = true;
    return c;
}

struct Agreement {
    double worst_flushed_gap = 0, worst_error_ratio = 1;
    std::string worst_flushed, worst_error;  // where, and the two records
};

std::string describe_pair(const emu::TensorNumerics& g, const emu::TensorNumerics& c) {
    const auto side = [](const emu::TensorNumerics& n) {
        char text[200];
        std::snprintf(text, sizeof text, "flushed %llu zeros %llu saturated %llu error %.4g amax %.4g scale %.4g",
                      static_cast<unsigned long long>(n.flushed), static_cast<unsigned long long>(n.zeros),
                      static_cast<unsigned long long>(n.saturated), n.relative_error, double(n.amax), double(n.scale));
        return std::string(text);
    };
    return g.tensor + " at step " + std::to_string(g.step) + " of " + std::to_string(g.elements) + ": GPU " + side(g) +
           "; CPU " + side(c);
}

// The GPU's records against the CPU's, matched by step and tensor (the CPU lists them in
// the order it casts, the GPU by tensor): the same records, with the same counts where both
// cast the same bits (`exact` says which), close everywhere else.
// `last_step`: the agreement is measured up to this step (every record is compared).
Agreement compare_records(const std::vector<emu::TensorNumerics>& gpu, const std::vector<emu::TensorNumerics>& cpu,
                          const std::function<bool(const emu::TensorNumerics&)>& exact,
                          std::uint64_t last_step = ~std::uint64_t(0)) {
    REQUIRE(!gpu.empty());
    REQUIRE(cpu.size() == gpu.size());
    std::map<std::pair<std::uint64_t, std::string>, const emu::TensorNumerics*> on_cpu;
    for (const emu::TensorNumerics& n : cpu) on_cpu[{n.step, n.tensor}] = &n;
    Agreement a;
    for (const emu::TensorNumerics& g : gpu) {
        CAPTURE(g.tensor);
        CAPTURE(g.step);
        const auto found = on_cpu.find({g.step, g.tensor});
        REQUIRE(found != on_cpu.end());
        const emu::TensorNumerics& c = *found->second;
        CHECK(g.elements == c.elements);
        CHECK(g.zeros + g.flushed <= g.elements);  // one step's counts, not a sum over steps
        CHECK(g.saturated + g.subnormal <= g.elements);
        if (exact(g)) {
            CHECK(g.amax == c.amax);
            CHECK(g.scale == doctest::Approx(c.scale).epsilon(1e-6));  // 1 / (1 / s) on the CPU
            CHECK(g.zeros == c.zeros);
            CHECK(g.flushed == c.flushed);
            CHECK(g.saturated == c.saturated);
            CHECK(g.subnormal == c.subnormal);
            CHECK(g.relative_error == doctest::Approx(c.relative_error).epsilon(1e-4));
        }
        if (g.step > last_step) continue;
        const double gap = std::fabs(double(g.flushed) - double(c.flushed)) / double(g.elements);
        if (gap > a.worst_flushed_gap) a.worst_flushed_gap = gap, a.worst_flushed = describe_pair(g, c);
        if (c.relative_error > 0 && g.relative_error > 0) {
            const double ratio = std::max(g.relative_error / c.relative_error, c.relative_error / g.relative_error);
            if (ratio > a.worst_error_ratio) a.worst_error_ratio = ratio, a.worst_error = describe_pair(g, c);
        }
    }
    return a;
}

}  // namespace

TEST_CASE("the cast kernel counts zeros, flushes, saturations and subnormals as the emulator does") {
    if (!gpu_ready()) return;
    const int rows = 64, cols = 96;
    std::mt19937 rng(7);
    std::uniform_real_distribution<float> exponent(-40.0f, 22.0f);
    std::vector<float> x(std::size_t(rows) * cols);
    for (std::size_t i = 0; i < x.size(); ++i) {
        // Magnitudes from far below the subnormals to past the maximum, a zero in 9.
        x[i] = i % 9 == 0 ? 0.0f : (rng() & 1 ? 1.0f : -1.0f) * std::exp2(exponent(rng));
    }
    for (const emu::Format* f : {&emu::e4m3(), &emu::e5m2()})
        for (const float scale : {1.0f, 0.0625f, 448.0f / 3000.0f, 64.0f}) {
            CAPTURE(f->name);
            CAPTURE(scale);
            const emu::TensorNumerics want = expected(*f, x, scale);
            const emu::TensorNumerics got = gpu::cast_transpose_per_tensor(*f, x, rows, cols, scale).numerics;
            // The case has every kind in it.
            CHECK(want.zeros > 0);
            CHECK(want.flushed > 0);
            CHECK(want.saturated > 0);
            CHECK(want.subnormal > 0);
            CHECK(got.elements == want.elements);
            CHECK(got.zeros == want.zeros);
            CHECK(got.flushed == want.flushed);
            CHECK(got.saturated == want.saturated);
            CHECK(got.subnormal == want.subnormal);
            // Float32 partial sums on the device, float64 here.
            CHECK(got.relative_error == doctest::Approx(want.relative_error).epsilon(1e-4));
        }
}

TEST_CASE("an MLP run on the GPU records every cast's numerics: the CPU's at the first step, close after") {
    if (!gpu_ready()) return;
    // The native path's four recipes, and three the emulated path runs (its casts give the
    // CPU's codes bit for bit, so its first step's weights count the same).
    for (const emu::Fp8Recipe recipe :
         {emu::Fp8Recipe::Delayed, emu::Fp8Recipe::Current, emu::Fp8Recipe::Blockwise, emu::Fp8Recipe::Rowwise,
          emu::Fp8Recipe::MxRceil, emu::Fp8Recipe::MxFloor, emu::Fp8Recipe::Nvfp4}) {
        CAPTURE(emu::fp8_recipe_name(recipe));
        const gpu::GpuRun c = small_run(recipe);
        const gpu::GpuTrainResult g = gpu::train_mlp_on_gpu(c);
        const emu::TrainerResult cpu = emu::train_mlp(c.experiment, {}, false, true);
        REQUIRE(g.numerics.size() == std::size_t(c.experiment.steps) * 6);  // 2 layers x input, weight, gradient
        // Step 0's input and weights are the same bits on both backends.
        const Agreement a = compare_records(g.numerics, cpu.numerics, [](const emu::TensorNumerics& n) {
            return n.step == 0 && (n.tensor == "fc1.input" || n.tensor.ends_with(".weight"));
        });
        std::printf(
            "numerics GPU against CPU, MLP, %s (%s path), %d steps: largest gap in the flushed share %.4f%%, "
            "relative errors within a factor %.3f\n",
            std::string(emu::fp8_recipe_name(recipe)).c_str(), g.path == gpu::GpuPath::Native ? "native" : "emulated",
            c.experiment.steps, 100 * a.worst_flushed_gap, a.worst_error_ratio);
        // Later tensors come from GEMMs that round differently: close, not equal.
        CHECK(a.worst_flushed_gap < 0.005);
        CHECK(a.worst_error_ratio < 1.1);
    }
}

TEST_CASE("a transformer run on the GPU records every FP8 linear layer's casts as the CPU does") {
    if (!gpu_ready()) return;
    for (const emu::Fp8Recipe recipe : {emu::Fp8Recipe::Delayed, emu::Fp8Recipe::Current, emu::Fp8Recipe::MxRceil,
                                        emu::Fp8Recipe::Nvfp4, emu::Fp8Recipe::Blockwise, emu::Fp8Recipe::Rowwise}) {
        CAPTURE(emu::fp8_recipe_name(recipe));
        emu::Experiment e = emu::default_transformer_experiment();
        e.numerics.precision = emu::Precision::Fp8;
        emu::set_recipe(e, recipe);
        e.steps = 12;
        gpu::GpuRun run{e};
        run.warmup_steps = 2;
        run.record_trace = true;
        run.record_numerics = true;
        const gpu::GpuTrainResult g = gpu::train_transformer_on_gpu(run);
        const emu::TrainerResult cpu = emu::train_on_cpu(e, {}, false, true);
        // The amax trace (`train --trace`): a record per recorded cast, as many as the CPU's.
        REQUIRE(g.trace.records.size() == g.numerics.size());
        CHECK(g.trace.records.size() == cpu.numerics.size());
        for (std::size_t k = 0; k < g.trace.records.size(); ++k) {
            CHECK(g.trace.records[k].tensor == g.numerics[k].tensor);
            CHECK(g.trace.records[k].step == g.numerics[k].step);
            CHECK(g.trace.records[k].amax == g.numerics[k].amax);
        }
        // Step 0's weights are the same bits on both backends (the inputs come from norms
        // computed on each, equal to rounding): the same counts for the weights, close ones
        // for the rest. Later steps' tensors drift apart as the two runs do (attention,
        // norms and GEMMs round differently): their gaps are reported, not bounded.
        const auto weights_at_step_0 = [](const emu::TensorNumerics& n) {
            return n.step == 0 && n.tensor.ends_with(".weight");
        };
        const Agreement first = compare_records(g.numerics, cpu.numerics, weights_at_step_0, 0);
        const Agreement all = compare_records(g.numerics, cpu.numerics, weights_at_step_0);
        std::printf(
            "numerics GPU against CPU, transformer, %s, %zu records: largest gap in the flushed share %.4f%% at "
            "step 0 (%.4f%% over %d steps), relative errors within a factor %.3f at step 0 (%.3f over all)\n",
            std::string(emu::fp8_recipe_name(recipe)).c_str(), g.numerics.size(), 100 * first.worst_flushed_gap,
            100 * all.worst_flushed_gap, e.steps, first.worst_error_ratio, all.worst_error_ratio);
        std::printf("  step 0's largest flushed gap: %s\n  step 0's largest error ratio: %s\n",
                    first.worst_flushed.c_str(), first.worst_error.c_str());
        std::printf("  largest error ratio over all steps: %s\n", all.worst_error.c_str());
        CHECK(first.worst_flushed_gap < 0.005);
        CHECK(first.worst_error_ratio < 1.1);
    }
}

namespace {

// A 4096-16384-4096 step at 4096 tokens under `recipe`, recording off and on alternately,
// three times each (the card's clock moves a few percent from run to run at its power
// limit, so one pair says little): the medians printed, the last run of each returned.
std::pair<gpu::GpuTrainResult, gpu::GpuTrainResult> recording_cost(emu::Fp8Recipe recipe, int steps) {
    gpu::GpuRun c{gpu::gpu_bench_experiment(4096, 16384, 4096)};
    if (recipe != emu::Fp8Recipe::Delayed) {
        emu::set_recipe(c.experiment, recipe);
        c.experiment.numerics.fast_accumulation = {};
    }
    c.experiment.steps = steps;
    c.warmup_steps = 10;
    c.record_trace = false;
    std::vector<double> off_ms, on_ms;
    gpu::GpuTrainResult off, on;
    for (int round = 0; round < 3; ++round)
        for (const bool record : {false, true}) {
            c.record_numerics = record;
            gpu::GpuTrainResult r = gpu::train_mlp_on_gpu(c);
            (record ? on_ms : off_ms).push_back(r.median_step_ms);
            (record ? on : off) = std::move(r);
        }
    std::sort(off_ms.begin(), off_ms.end());
    std::sort(on_ms.begin(), on_ms.end());
    std::printf(
        "numerics recording, %s, 4096-16384-4096 x 4096 tokens, %s (%s path), 3 runs each alternately: median "
        "step %.4f ms off (%.4f to %.4f), %.4f ms on (%.4f to %.4f): on/off %.4f\n",
        on.device.c_str(), std::string(emu::fp8_recipe_name(recipe)).c_str(),
        on.path == gpu::GpuPath::Native ? "native" : "emulated", off_ms[1], off_ms[0], off_ms[2], on_ms[1], on_ms[0],
        on_ms[2], on_ms[1] / off_ms[1]);
    return {std::move(off), std::move(on)};
}

}  // namespace

TEST_CASE("recording numerics: what it costs a native step, and it changes nothing") {
    if (!gpu_ready()) return;
    const auto [off, on] = recording_cost(emu::Fp8Recipe::Delayed, 60);
    CHECK(on.path == gpu::GpuPath::Native);
    CHECK(on.loss == off.loss);  // counting changes nothing it counts
    CHECK(!on.numerics.empty());
    CHECK(off.numerics.empty());
}

TEST_CASE("recording numerics on the emulated path: what it costs a step, and it changes nothing") {
    if (!gpu_ready()) return;
    const auto [off, on] = recording_cost(emu::Fp8Recipe::MxRceil, 40);
    CHECK(on.path == gpu::GpuPath::Emulated);
    CHECK(on.loss == off.loss);
    CHECK(on.numerics.size() == std::size_t(40) * 6);
    CHECK(off.numerics.empty());
}
