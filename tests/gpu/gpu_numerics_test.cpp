// SPDX-License-Identifier: Apache-2.0
// Per-tensor numerics on the GPU: the cast kernel's counts against the emulator's on the
// hard cases, a training run's records against the CPU trainer's, and what recording costs.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "emulator/bulk.hpp"
#include "emulator/mlp_trainer.hpp"
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

TEST_CASE("a GPU run records every native cast's numerics: the CPU's at the first step, close to them after") {
    if (!gpu_ready()) return;
    for (const emu::Fp8Recipe recipe :
         {emu::Fp8Recipe::Delayed, emu::Fp8Recipe::Current, emu::Fp8Recipe::Blockwise, emu::Fp8Recipe::Rowwise}) {
        CAPTURE(emu::fp8_recipe_name(recipe));
        const gpu::GpuRun c = small_run(recipe);
        const gpu::GpuTrainResult g = gpu::train_mlp_on_gpu(c);
        const emu::TrainerResult cpu = emu::train_mlp(c.experiment, {}, false, true);
        REQUIRE(g.numerics.size() == std::size_t(c.experiment.steps) * 6);  // 2 layers x input, weight, gradient
        REQUIRE(cpu.numerics.size() == g.numerics.size());
        // The CPU lists the casts in the order it runs them, the GPU by tensor: match by name.
        std::map<std::pair<std::uint64_t, std::string>, const emu::TensorNumerics*> on_cpu;
        for (const emu::TensorNumerics& n : cpu.numerics) on_cpu[{n.step, n.tensor}] = &n;
        double worst_flushed_gap = 0, worst_error_ratio = 1;
        for (const emu::TensorNumerics& a : g.numerics) {
            CAPTURE(a.tensor);
            CAPTURE(a.step);
            const auto found = on_cpu.find({a.step, a.tensor});
            REQUIRE(found != on_cpu.end());
            const emu::TensorNumerics& b = *found->second;
            CHECK(a.elements == b.elements);
            // Step 0's input and weight are the same bits on both backends: the same counts.
            if (a.step == 0 && a.tensor == "fc1.input") {
                CHECK(a.amax == b.amax);
                CHECK(a.zeros == b.zeros);
                CHECK(a.flushed == b.flushed);
                CHECK(a.subnormal == b.subnormal);
            }
            if (a.step == 0 && a.tensor.ends_with(".weight")) {
                CHECK(a.amax == b.amax);
                CHECK(a.flushed == b.flushed);
                CHECK(a.subnormal == b.subnormal);
                CHECK(a.relative_error == doctest::Approx(b.relative_error).epsilon(1e-4));
            }
            const double n = double(a.elements);
            worst_flushed_gap = std::max(worst_flushed_gap, std::fabs(double(a.flushed) - double(b.flushed)) / n);
            if (b.relative_error > 0)
                worst_error_ratio = std::max(worst_error_ratio, std::max(a.relative_error / b.relative_error,
                                                                         b.relative_error / a.relative_error));
        }
        std::printf(
            "numerics GPU against CPU, %s, %d steps: largest gap in the flushed share %.4f%%, relative "
            "errors within a factor %.3f\n",
            std::string(emu::fp8_recipe_name(recipe)).c_str(), c.experiment.steps, 100 * worst_flushed_gap,
            worst_error_ratio);
        // Later tensors come from GEMMs that round differently: close, not equal.
        CHECK(worst_flushed_gap < 0.005);
        CHECK(worst_error_ratio < 1.1);
    }
}

TEST_CASE("recording numerics: what it costs a step, and where the GPU refuses it by name") {
    if (!gpu_ready()) return;
    gpu::GpuRun c{gpu::gpu_bench_experiment(4096, 16384, 4096)};
    c.experiment.steps = 60;
    c.warmup_steps = 10;
    c.record_trace = false;
    // Off and on alternately, three times each: the card's clock moves a few percent from
    // run to run at its power limit, so one pair says little.
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
        "numerics recording, %s, 4096-16384-4096 x 4096 tokens, delayed, 3 runs each alternately: median "
        "step %.4f ms off (%.4f to %.4f), %.4f ms on (%.4f to %.4f): on/off %.4f\n",
        on.device.c_str(), off_ms[1], off_ms[0], off_ms[2], on_ms[1], on_ms[0], on_ms[2], on_ms[1] / off_ms[1]);
    CHECK(on.loss == off.loss);  // counting changes nothing it counts
    CHECK(!on.numerics.empty());
    CHECK(off.numerics.empty());

    CHECK_NOTHROW(gpu::validate(small_run(emu::Fp8Recipe::Blockwise)));
    gpu::GpuRun refused = small_run(emu::Fp8Recipe::MxRceil);
    CHECK_THROWS_WITH_AS(gpu::validate(refused), doctest::Contains("numerics recording (--stats)"),
                         std::invalid_argument);
}

TEST_CASE("whether the GPU counts a run's casts is validate's answer, its reason one line") {
    CHECK(gpu::numerics_refusal(small_run(emu::Fp8Recipe::Delayed)).empty());
    CHECK(gpu::numerics_refusal(small_run(emu::Fp8Recipe::Rowwise)).empty());
    const std::string mx = gpu::numerics_refusal(small_run(emu::Fp8Recipe::MxRceil));
    CHECK(mx.rfind("numerics recording (--stats): ", 0) == 0);
    CHECK(mx.find("emulated path") != std::string::npos);
    CHECK(mx.find('\n') == std::string::npos);
}
