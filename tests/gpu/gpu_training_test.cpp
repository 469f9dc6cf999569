// SPDX-License-Identifier: Apache-2.0
// The GPU training step: its fused cast + transpose against the emulator bit for bit, its
// delayed scaling against the emulator's replay of the recorded amaxes, FP8 against BF16
// loss, bit-for-bit repeatability, graph against kernel-by-kernel launches.
#include <doctest/doctest.h>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>
#include <map>

#include "emulator/formats/bulk.hpp"
#include "emulator/formats/convert.hpp"
#include "emulator/scaling/current_scaling.hpp"
#include "emulator/scaling/delayed_scaling.hpp"
#include "emulator/training/training_task.hpp"
#include "gpu/probe.hpp"
#include "tests/gpu/gpu_ready.hpp"
#include "gpu/tensor_ops.hpp"
#include "gpu/trainer.hpp"
#include "tests/gpu/same_bits.hpp"

using namespace fp8lab;

using fp8lab::test::same_bits;

namespace {

// The bench's experiment at the tiny preset (d=768, h=3072, M=32) for 300 steps.
gpu::GpuRun test_config(emu::Precision precision) {
    gpu::GpuRun c{gpu::gpu_bench_experiment(768, 3072, 32)};
    c.experiment.steps = 300;
    c.experiment.numerics.precision = precision;
    c.warmup_steps = 5;
    return c;
}

}  // namespace

TEST_CASE("a GPU training configuration is checked before any GPU work, naming what is wrong") {
    const gpu::GpuRun tiny = test_config(emu::Precision::Fp8);
    gpu::GpuRun c = tiny;
    c.experiment.model.input = c.experiment.model.output = 100;
    CHECK_THROWS_WITH_AS(gpu::train_mlp_on_gpu(c), doctest::Contains("model.input: must be a multiple of 16"),
                         std::invalid_argument);
    c = tiny;
    c.experiment.tokens = 40;
    CHECK_THROWS_WITH_AS(gpu::validate(c), doctest::Contains("tokens: must be a multiple of 16"),
                         std::invalid_argument);
    c = tiny;
    c.warmup_steps = 0;
    CHECK_THROWS_WITH_AS(gpu::validate(c), doctest::Contains("warm-up"), std::invalid_argument);
    c = tiny;
    c.experiment.numerics.delayed.history_length = 0;
    CHECK_THROWS_WITH_AS(gpu::validate(c), doctest::Contains("numerics.delayed.history"), std::invalid_argument);
    c = tiny;  // every refusal at once, each named
    c.experiment.model.biases = true;
    c.experiment.optimizer.grad_clip = 1.0f;
    CHECK_THROWS_WITH_AS(gpu::validate(c), doctest::Contains("model.biases"), std::invalid_argument);
    CHECK_THROWS_WITH_AS(gpu::validate(c), doctest::Contains("optimizer.grad_clip"), std::invalid_argument);
    // d -> h -> d: model FLOPs 6 x (2 d h parameters) x tokens; the GEMMs run are the
    // forward and wgrad of the first layer and all three of the last.
    emu::Experiment e = tiny.experiment;
    CHECK(gpu::model_flops_per_step(e) == doctest::Approx(6.0 * (2.0 * 768 * 3072) * 32));
    CHECK(gpu::gemm_flops_per_step(e) == doctest::Approx(2.0 * 32 * 768 * 3072 * 5));
    e.model.hidden_layers = 3;  // two h -> h layers more, each with all three GEMMs
    CHECK(gpu::model_flops_per_step(e) == doctest::Approx(6.0 * (2.0 * 768 * 3072 + 2.0 * 3072 * 3072) * 32));
    CHECK(gpu::gemm_flops_per_step(e) == doctest::Approx(2.0 * 32 * (768 * 3072 * 5.0 + 3072 * 3072 * 6.0)));
    // Bytes moved at the tiny preset, counted by hand per kernel (p = 768 x 3072 weights a
    // layer, M = 32 tokens). BF16: per weight, 2 (forward) + 4 (dW) + 28 (AdamW) + 2 (its
    // BF16 copy), and 2 more for the second layer's dgrad: 74 p; the activations' kernels
    // M x 73728 bytes, which is p again. FP8 delayed: 1 + 4 + 28 + 6 (the weights' cast:
    // float32 read, codes and their transpose written), 1 more for the dgrad: 79 p;
    // activations M x 61440.
    const double p = 768.0 * 3072;
    e = tiny.experiment;
    CHECK(gpu::mlp_step_bytes(e) == doctest::Approx(79 * p + 32 * 61440.0));
    e.numerics.precision = emu::Precision::Bf16;
    CHECK(gpu::mlp_step_bytes(e) == doctest::Approx(75 * p));
    e = tiny.experiment;
    emu::set_recipe(e, emu::Fp8Recipe::MxFloor);  // emulated: not counted
    CHECK(gpu::mlp_step_bytes(e) == 0);
}

TEST_CASE("the step's fused cast + transpose equals the emulator bit for bit, transpose and amax included") {
    if (!gpu_ready()) return;
    const int rows = 80, cols = 48;  // not multiples of the 32 x 32 tile
    std::vector<float> x(std::size_t(rows) * cols);
    for (std::size_t i = 0; i < x.size(); ++i) {
        float v = emu::normal_sample(21, i);
        if (i % 53 == 0) v *= 3000.0f;
        if (i % 59 == 1) v = 0.0f;
        if (i % 61 == 2) v *= 1e-6f;
        x[i] = v;
    }
    x[7] = std::numeric_limits<float>::quiet_NaN();
    x[8] = -std::numeric_limits<float>::infinity();
    for (const emu::Format* f : {&emu::e4m3(), &emu::e5m2()})
        for (float scale : {1.0f, 0.0625f, 0.75f, 448.0f / 3000.0f}) {
            const gpu::CastTransposedOnGpu got = gpu::cast_transpose_per_tensor(*f, x, rows, cols, scale);
            std::vector<std::uint8_t> want(x.size());
            emu::quantize_span(*f, x, scale, want);
            int mismatches = 0, transposed_mismatches = 0;
            for (int r = 0; r < rows; ++r)
                for (int c = 0; c < cols; ++c) {
                    const std::uint8_t w = want[std::size_t(r) * cols + c];
                    mismatches += got.codes[std::size_t(r) * cols + c] != w;
                    transposed_mismatches += got.codes_t[std::size_t(c) * rows + r] != w;
                }
            CHECK(mismatches == 0);
            CHECK(transposed_mismatches == 0);
            CHECK(got.amax == emu::amax(x));
        }
}

TEST_CASE("FP8 training on the GPU reaches BF16's loss, repeatably, with the emulator's delayed scaling") {
    if (!gpu_ready()) return;
    const gpu::GpuTrainResult bf16 = gpu::train_mlp_on_gpu(test_config(emu::Precision::Bf16));
    const gpu::GpuTrainResult fp8 = gpu::train_mlp_on_gpu(test_config(emu::Precision::Fp8));
    REQUIRE(bf16.loss.size() == 300);
    REQUIRE(fp8.loss.size() == 300);
    std::printf(
        "GPU training d=768 h=3072 M=32, 300 steps: loss %.5f -> %.5f (BF16), %.5f -> %.5f (FP8 delayed); "
        "%.4f vs %.4f ms/step\n",
        bf16.loss.front(), bf16.final_loss(), fp8.loss.front(), fp8.final_loss(), bf16.median_step_ms,
        fp8.median_step_ms);
    CHECK(bf16.final_loss() < 0.5 * bf16.loss.front());  // it trains
    // The same initial weights: FP8's first loss (computed in the gradient's cast) is
    // BF16's up to the forward's quantisation (0.2% measured).
    CHECK(std::abs(fp8.loss.front() - bf16.loss.front()) < 0.02 * bf16.loss.front());

    SUBCASE("the same seed gives the same losses and trace bit for bit, graph or not") {
        gpu::GpuRun again = test_config(emu::Precision::Fp8);
        const gpu::GpuTrainResult repeat = gpu::train_mlp_on_gpu(again);
        CHECK(same_bits(repeat.loss, fp8.loss));
        again.use_graph = false;
        const gpu::GpuTrainResult eager = gpu::train_mlp_on_gpu(again);
        CHECK(same_bits(eager.loss, fp8.loss));
        CHECK(same_bits(gpu::train_mlp_on_gpu(test_config(emu::Precision::Bf16)).loss, bf16.loss));
    }

    SUBCASE("the scales used on the device are the emulator's for the recorded amaxes") {
        // 2 layers x (input, weight, grad_output) per step.
        REQUIRE(fp8.trace.records.size() == 300 * 6);
        std::map<std::string, emu::DelayedScaling> replay;
        int checked = 0, mismatched = 0;
        for (const emu::AmaxTraceRecord& r : fp8.trace.records) {
            const emu::Format& f = emu::format_for(emu::FormatRecipe::Hybrid, emu::role_of_tensor(r.tensor));
            auto it =
                replay.try_emplace(r.tensor, f, test_config(emu::Precision::Fp8).experiment.numerics.delayed).first;
            mismatched += it->second.scale().scale != r.scale;
            ++checked;
            it->second.record_amax(r.amax);
            it->second.update();
        }
        CHECK(checked == 1800);
        CHECK(mismatched == 0);
        CHECK(fp8.trace.records[0].tensor == "fc1.input");
        CHECK(fp8.trace.records[5].tensor == "fc2.grad_output");
    }
}

TEST_CASE("the output gradient's cast with the loss in it equals the emulator bit for bit, per-tile sums included") {
    if (!gpu_ready()) return;
    const int rows = 80, cols = 144;  // 2 x 3 tiles of 64 x 64, the last ones partial
    const std::size_t n = std::size_t(rows) * cols;
    std::vector<std::uint16_t> y(n), t(n);
    for (std::size_t i = 0; i < n; ++i) {
        float yv = emu::normal_sample(31, i), tv = std::tanh(emu::normal_sample(32, i));
        if (i % 41 == 0) yv *= 3000.0f;    // an outlier: the largest gradients
        if (i % 43 == 1) tv = yv;          // a zero gradient
        if (i % 47 == 2) tv = yv + 1e-3f;  // a tiny one
        y[i] = std::uint16_t(emu::encode(emu::bf16(), yv));
        t[i] = std::uint16_t(emu::encode(emu::bf16(), tv));
    }
    y[5] = std::uint16_t(emu::encode(emu::bf16(), std::numeric_limits<float>::infinity()));
    // What mse_loss writes: (y - t) * (2 / n) in float32, rounded to BF16.
    const float grad_scale = 2.0f / float(n);
    std::vector<float> grad(n);
    std::vector<double> tile_sums(std::size_t(2 * 3), 0.0);
    for (int r = 0; r < rows; ++r)
        for (int c = 0; c < cols; ++c) {
            const std::size_t i = std::size_t(r) * cols + c;
            const float d = float(emu::decode(emu::bf16(), y[i])) - float(emu::decode(emu::bf16(), t[i]));
            const float g = d * grad_scale;
            grad[i] = float(emu::decode(emu::bf16(), emu::encode(emu::bf16(), g)));
            tile_sums[std::size_t((r / 64) * 3 + c / 64)] += double(d) * double(d);
        }
    for (const emu::Format* f : {&emu::e4m3(), &emu::e5m2()})
        for (float scale : {1.0f, 4096.0f, 0.5f}) {
            const gpu::MseGradientCastOnGpu got = gpu::cast_mse_gradient_per_tensor(*f, y, t, rows, cols, scale);
            std::vector<std::uint8_t> want(n);
            emu::quantize_span(*f, grad, scale, want);
            int mismatches = 0, transposed_mismatches = 0;
            for (int r = 0; r < rows; ++r)
                for (int c = 0; c < cols; ++c) {
                    const std::uint8_t w = want[std::size_t(r) * cols + c];
                    mismatches += got.cast.codes[std::size_t(r) * cols + c] != w;
                    transposed_mismatches += got.cast.codes_t[std::size_t(c) * rows + r] != w;
                }
            CHECK(mismatches == 0);
            CHECK(transposed_mismatches == 0);
            CHECK(got.cast.amax == emu::amax(grad));
            REQUIRE(got.loss_partials.size() == tile_sums.size());
            CHECK(std::isinf(got.loss_partials[0]));            // the tile with the Inf output
            for (std::size_t k = 1; k < tile_sums.size(); ++k)  // float32 sums in another order
                CHECK(got.loss_partials[k] == doctest::Approx(tile_sums[k]).epsilon(1e-5));
        }
}

// FP8's final loss against BF16's (the goal: within 1%), as a mean over seeds: one seed's
// FP8 / BF16 ratio at 300 steps is mostly noise of the rounding. Measured on an H200 over
// seeds 1 to 8: from -3.2% to +1.0%, mean -1.0% (FP8 a little lower); with the earlier
// tanhf GELU from -4.1% to +1.5%, where seed 1 alone had passed a two-sided 1% check by
// chance. The mean of eight is about three times steadier than one run, so the check is
// the side that matters, FP8 no more than 1% above BF16, plus a bound on the other side
// that only a broken loss would cross. (Trained on, the two part: at 1000 steps BF16
// reaches about 5e-5 and FP8 stays near 1e-3, the floor of E4M3's 3 mantissa bits.)
TEST_CASE("FP8 training on the GPU reaches BF16's loss on the default task, over eight seeds") {
    if (!gpu_ready()) return;
    double bf16_sum = 0, fp8_sum = 0;
    for (std::uint64_t seed = 1; seed <= 8; ++seed) {
        gpu::GpuRun bf16 = test_config(emu::Precision::Bf16), fp8 = test_config(emu::Precision::Fp8);
        bf16.experiment.task.seed = fp8.experiment.task.seed = seed;
        bf16.record_trace = fp8.record_trace = false;
        const double b = gpu::train_mlp_on_gpu(bf16).final_loss(), f = gpu::train_mlp_on_gpu(fp8).final_loss();
        std::printf("seed %d: BF16 %.6f, FP8 %.6f (%+.2f%%)\n", int(seed), b, f, 100.0 * (f / b - 1.0));
        bf16_sum += b;
        fp8_sum += f;
    }
    std::printf("mean over 8 seeds: FP8 %+.2f%% against BF16\n", 100.0 * (fp8_sum / bf16_sum - 1.0));
    CHECK(fp8_sum <= 1.01 * bf16_sum);
    CHECK(fp8_sum >= 0.95 * bf16_sum);
}

TEST_CASE("current scaling on the GPU uses the emulator's current scale of each tensor's own amax") {
    if (!gpu_ready()) return;
    gpu::GpuRun c = test_config(emu::Precision::Fp8);
    emu::set_recipe(c.experiment, emu::Fp8Recipe::Current);
    c.experiment.steps = 60;
    c.experiment.model.hidden_layers = 2;  // a hidden-to-hidden layer: the dgrad path with two FP8 gradient buffers
    const gpu::GpuTrainResult r = gpu::train_mlp_on_gpu(c);
    REQUIRE(r.trace.records.size() == 60 * 9);
    int mismatched = 0;
    for (const emu::AmaxTraceRecord& rec : r.trace.records) {
        const emu::Format& f = emu::format_for(emu::FormatRecipe::Hybrid, emu::role_of_tensor(rec.tensor));
        mismatched += emu::current_scale(rec.amax, f).scale != rec.scale;
    }
    CHECK(mismatched == 0);
    CHECK(std::isfinite(r.final_loss()));
    CHECK(r.final_loss() < r.loss.front());
}
