// SPDX-License-Identifier: Apache-2.0
// The transformer on both backends: the GPU starts from the emulator's weights and bytes,
// its first loss matches the CPU's, its final loss agrees over seeds; fused and separate
// QKV agree; and the speed of the presets, measured side by side (printed).
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include "emulator/models/cpu_training.hpp"
#include "emulator/scaling/recipe.hpp"
#include "emulator/models/mlp/mlp_trainer.hpp"
#include "gpu/trainer.hpp"
#include "tests/gpu/gpu_ready.hpp"
#include "tests/gpu/same_bits.hpp"

using namespace fp8lab;

using fp8lab::test::same_bits;

namespace {

emu::Experiment transformer(emu::Precision p, int steps, emu::Fp8Recipe recipe = emu::Fp8Recipe::Current) {
    emu::Experiment e = emu::default_transformer_experiment();
    e.numerics.precision = p;
    emu::set_recipe(e, recipe);
    e.steps = steps;
    return e;
}

gpu::GpuTrainResult on_gpu(const emu::Experiment& e, int warmup = 10, bool text_report = true) {
    gpu::GpuRun run{e};
    run.warmup_steps = warmup;
    run.record_trace = false;
    run.text_report = text_report;
    return gpu::train_transformer_on_gpu(run);
}

}  // namespace

TEST_CASE("the transformer: first loss, final loss and validation loss over 4 seeds agree with the CPU emulator") {
    if (!gpu_ready()) return;
    const std::pair<emu::Precision, emu::Fp8Recipe> runs[] = {{emu::Precision::Bf16, emu::Fp8Recipe::Current},
                                                              {emu::Precision::Fp8, emu::Fp8Recipe::Current},
                                                              {emu::Precision::Fp8, emu::Fp8Recipe::Delayed}};
    for (const auto& [p, recipe] : runs) {
        const std::string name = p == emu::Precision::Bf16 ? "bf16" : "fp8 " + std::string(enum_name(recipe));
        CAPTURE(name);
        double cpu_mean = 0, gpu_mean = 0, largest_gap = 0, cpu_bits = 0, gpu_bits = 0, largest_bits_gap = 0;
        std::vector<double> cpu_finals, gpu_finals;
        for (int k = 0; k < 4; ++k) {
            const emu::Experiment e = emu::with_seed(transformer(p, 100, recipe), k);
            const emu::TrainerResult on_cpu = emu::train_on_cpu(e);
            const gpu::GpuTrainResult on_device = on_gpu(e);
            const std::vector<float>& cpu = on_cpu.loss;
            const std::vector<float>& gpu = on_device.loss;
            REQUIRE(gpu.size() == cpu.size());
            // The text report: the same evaluations, prompt and sample lengths.
            REQUIRE(on_cpu.text);
            REQUIRE(on_device.text);
            const emu::TextReport &ct = *on_cpu.text, &gt = *on_device.text;
            CHECK(gt.corpus == ct.corpus);
            CHECK(gt.prompt == ct.prompt);
            CHECK(gt.greedy.size() == ct.greedy.size());
            CHECK(gt.sampled.size() == ct.sampled.size());
            REQUIRE(gt.validation.size() == ct.validation.size());
            for (std::size_t v = 0; v < ct.validation.size(); ++v) {
                CHECK(gt.validation[v].step == ct.validation[v].step);
                largest_bits_gap = std::max(
                    largest_bits_gap, std::fabs(gt.validation[v].bits_per_byte / ct.validation[v].bits_per_byte - 1));
            }
            cpu_bits += ct.validation.back().bits_per_byte / 4;
            gpu_bits += gt.validation.back().bits_per_byte / 4;
            if (k == 0)
                std::printf("seed 1 greedy, CPU: \"%s\"\n               GPU: \"%s\"\n", ct.greedy.c_str(),
                            gt.greedy.c_str());
            CHECK(gpu[0] == doctest::Approx(cpu[0]).epsilon(1e-4));
            for (std::size_t s = 0; s < cpu.size(); ++s)
                largest_gap = std::max(largest_gap, std::fabs(double(gpu[s]) - cpu[s]) / cpu[s]);
            cpu_mean += emu::final_loss(cpu) / 4;
            gpu_mean += emu::final_loss(gpu) / 4;
            cpu_finals.push_back(emu::final_loss(cpu));
            gpu_finals.push_back(emu::final_loss(gpu));
        }
        std::printf(
            "transformer %s, 100 steps, 4 seeds: final loss CPU %.5f GPU %.5f (GPU/CPU %+.3f%%), largest "
            "per-step gap %.3f%%; seeds' final losses CPU %.5f to %.5f, GPU %.5f to %.5f\n",
            name.c_str(), cpu_mean, gpu_mean, 100 * (gpu_mean / cpu_mean - 1), 100 * largest_gap,
            *std::min_element(cpu_finals.begin(), cpu_finals.end()),
            *std::max_element(cpu_finals.begin(), cpu_finals.end()),
            *std::min_element(gpu_finals.begin(), gpu_finals.end()),
            *std::max_element(gpu_finals.begin(), gpu_finals.end()));
        std::printf(
            "transformer %s: final validation loss CPU %.4f GPU %.4f bits/byte (GPU/CPU %+.3f%%), largest gap over "
            "the evaluations %.3f%%\n",
            name.c_str(), cpu_bits, gpu_bits, 100 * (gpu_bits / cpu_bits - 1), 100 * largest_bits_gap);
        CHECK(gpu_mean == doctest::Approx(cpu_mean).epsilon(0.02));
        CHECK(gpu_bits == doctest::Approx(cpu_bits).epsilon(0.02));
    }
}

TEST_CASE("the GPU's transformer takes every FP8 recipe, and refuses per-tensor settings its casts do not implement") {
    for (const emu::Fp8Recipe r :
         {emu::Fp8Recipe::Delayed, emu::Fp8Recipe::Current, emu::Fp8Recipe::MxFloor, emu::Fp8Recipe::MxRceil,
          emu::Fp8Recipe::Nvfp4, emu::Fp8Recipe::Blockwise, emu::Fp8Recipe::Rowwise}) {
        CAPTURE(enum_name(r));
        CHECK_NOTHROW(gpu::validate(gpu::GpuRun{transformer(emu::Precision::Fp8, 10, r)}));
    }
    emu::Experiment hybrid_mx = transformer(emu::Precision::Fp8, 10, emu::Fp8Recipe::MxFloor);
    hybrid_mx.numerics.formats.gradient = &emu::e5m2();  // block recipes take any format the recipe allows
    CHECK_NOTHROW(gpu::validate(gpu::GpuRun{hybrid_mx}));
    emu::Experiment stochastic_delayed = transformer(emu::Precision::Fp8, 10, emu::Fp8Recipe::Delayed);
    stochastic_delayed.numerics.rounding.gradient = emu::RoundingMode::Stochastic;
    CHECK_THROWS_WITH_AS(gpu::validate(gpu::GpuRun{stochastic_delayed}), doctest::Contains("numerics.rounding"),
                         std::invalid_argument);
}

TEST_CASE(
    "the transformer's block and row recipes on the GPU (blockwise and rowwise native, MX and NVFP4 emulated) agree "
    "with the CPU") {
    if (!gpu_ready()) return;
    for (const emu::Fp8Recipe recipe :
         {emu::Fp8Recipe::MxFloor, emu::Fp8Recipe::Nvfp4, emu::Fp8Recipe::Blockwise, emu::Fp8Recipe::Rowwise}) {
        CAPTURE(enum_name(recipe));
        const bool native = recipe == emu::Fp8Recipe::Blockwise || recipe == emu::Fp8Recipe::Rowwise;
        double cpu_mean = 0, gpu_mean = 0, cpu_bits = 0, gpu_bits = 0, largest_gap = 0;
        std::vector<double> cpu_finals, gpu_finals;
        for (int k = 0; k < 4; ++k) {
            const emu::Experiment e = emu::with_seed(transformer(emu::Precision::Fp8, 60, recipe), k);
            const emu::TrainerResult cpu = emu::train_on_cpu(e);
            const gpu::GpuTrainResult gpu = on_gpu(e);
            // Blockwise and rowwise on Hopper's tensor cores (cuBLASLt's scaled GEMMs), the rest emulated.
            CHECK(gpu.path == (native ? gpu::GpuPath::Native : gpu::GpuPath::Emulated));
            cpu_finals.push_back(emu::final_loss(cpu.loss));
            gpu_finals.push_back(gpu.final_loss());
            REQUIRE(gpu.loss.size() == cpu.loss.size());
            CHECK(gpu.loss[0] == doctest::Approx(cpu.loss[0]).epsilon(1e-3));
            for (std::size_t s = 0; s < cpu.loss.size(); ++s)
                largest_gap = std::max(largest_gap, std::fabs(double(gpu.loss[s]) / cpu.loss[s] - 1));
            cpu_mean += emu::final_loss(cpu.loss) / 4;
            gpu_mean += gpu.final_loss() / 4;
            REQUIRE(cpu.text);
            REQUIRE(gpu.text);
            cpu_bits += cpu.text->validation.back().bits_per_byte / 4;
            gpu_bits += gpu.text->validation.back().bits_per_byte / 4;
        }
        std::printf(
            "transformer %s (%s on the GPU), 60 steps, 4 seeds: final loss CPU %.5f GPU %.5f (%+.3f%%), "
            "validation CPU %.4f GPU %.4f bits/byte (%+.3f%%), largest per-step gap %.3f%%; seeds' final losses CPU "
            "%.5f to %.5f, GPU %.5f to %.5f\n",
            std::string(enum_name(recipe)).c_str(), native ? "native" : "emulated", cpu_mean, gpu_mean,
            100 * (gpu_mean / cpu_mean - 1), cpu_bits, gpu_bits, 100 * (gpu_bits / cpu_bits - 1), 100 * largest_gap,
            *std::min_element(cpu_finals.begin(), cpu_finals.end()),
            *std::max_element(cpu_finals.begin(), cpu_finals.end()),
            *std::min_element(gpu_finals.begin(), gpu_finals.end()),
            *std::max_element(gpu_finals.begin(), gpu_finals.end()));
        CHECK(gpu_mean == doctest::Approx(cpu_mean).epsilon(0.02));
        CHECK(gpu_bits == doctest::Approx(cpu_bits).epsilon(0.02));
    }
}

TEST_CASE("the transformer on the GPU: fused and separate QKV start alike and train alike") {
    if (!gpu_ready()) return;
    for (const emu::Precision p : {emu::Precision::Bf16, emu::Precision::Fp8}) {
        CAPTURE(emu::precision_name(p));
        emu::Experiment fused = transformer(p, 60), separate = fused;
        separate.model.transformer.fused_qkv = false;
        const gpu::GpuTrainResult a = on_gpu(fused), b = on_gpu(separate);
        // BF16: the same weights and products; FP8: one scale for the fused weight, three apart.
        CHECK(a.loss[0] == doctest::Approx(b.loss[0]).epsilon(p == emu::Precision::Bf16 ? 1e-6 : 1e-3));
        CHECK(a.final_loss() == doctest::Approx(b.final_loss()).epsilon(0.02));
    }
}

TEST_CASE(
    "the transformer's FP8 casts that compute SwiGLU, its gradient or AdamW's new weights give the bits of separate "
    "passes") {
    if (!gpu_ready()) return;
    // Delayed: every fusion (the weights cast by AdamW); current, blockwise and rowwise:
    // SwiGLU and its gradient through each kind of native cast (per tensor after an amax
    // pass, block and row scales). MX and NVFP4 are not here: their emulated layers take
    // their operands stored whether fusion is on or off, so there is no fusion to compare.
    for (const emu::Fp8Recipe recipe :
         {emu::Fp8Recipe::Delayed, emu::Fp8Recipe::Current, emu::Fp8Recipe::Blockwise, emu::Fp8Recipe::Rowwise}) {
        CAPTURE(enum_name(recipe));
        emu::Experiment e = transformer(emu::Precision::Fp8, 24, recipe);
        e.task.eval_every = 8;  // evaluations between steps read the weights' codes too
        e.model.transformer.tied_output = true;
        e.model.transformer.output_bf16 = false;  // the tied output layer's weight is the embedding, in FP8
        gpu::GpuRun run{e};
        run.warmup_steps = 4;
        run.record_numerics = true;
        gpu::GpuRun separate = run;
        separate.fuse_into_casts = false;
        const gpu::GpuTrainResult a = gpu::train_transformer_on_gpu(run), b = gpu::train_transformer_on_gpu(separate);
        REQUIRE(a.loss.size() == 24);
        CHECK(std::isfinite(a.final_loss()));
        CHECK(same_bits(a.loss, b.loss));
        REQUIRE(a.text);
        REQUIRE(b.text);
        REQUIRE(a.text->validation.size() == b.text->validation.size());
        for (std::size_t k = 0; k < a.text->validation.size(); ++k)
            CHECK(a.text->validation[k].bits_per_byte == b.text->validation[k].bits_per_byte);
        CHECK(a.text->greedy == b.text->greedy);
        CHECK(a.text->sampled == b.text->sampled);
        REQUIRE(a.numerics.size() == b.numerics.size());
        REQUIRE(!a.numerics.empty());
        int differ = 0;
        for (std::size_t k = 0; k < a.numerics.size(); ++k) {
            const emu::TensorNumerics &x = a.numerics[k], &y = b.numerics[k];
            const bool same = x.step == y.step && x.tensor == y.tensor && x.amax == y.amax && x.scale == y.scale &&
                              x.zeros == y.zeros && x.flushed == y.flushed && x.saturated == y.saturated &&
                              x.subnormal == y.subnormal &&
                              std::fabs(x.relative_error - y.relative_error) <= 1e-9 * y.relative_error;
            if (!same && differ++ < 3) INFO("step " << x.step << " " << x.tensor << " differs");
        }
        CHECK(differ == 0);
    }
}

TEST_CASE(
    "the transformer's presets on the GPU, BF16 against FP8 current scaling, fused QKV on and off, blockwise and "
    "rowwise") {
    if (!gpu_ready()) return;
    std::printf("preset\tvariant\tms/step\ttokens/s\tmodel TFLOP/s\tpeak MiB\tfinal loss\n");
    for (const gpu::TransformerPreset& pr : gpu::transformer_presets()) {
        double bf16_ms = 0;
        for (const bool fused : {true, false})
            for (const emu::Precision p : {emu::Precision::Bf16, emu::Precision::Fp8}) {
                const gpu::GpuTrainResult r = on_gpu(gpu::transformer_preset_experiment(pr, p, fused, 30), 5, false);
                if (fused && p == emu::Precision::Bf16) bf16_ms = r.median_step_ms;
                std::printf("%s\t%s %s QKV\t%.3f\t%.0f\t%.1f\t%.0f\t%.4f\t%.3fx BF16 fused\n", pr.name.c_str(),
                            std::string(emu::precision_name(p)).c_str(), fused ? "fused" : "separate", r.median_step_ms,
                            r.tokens_per_second, r.model_tflops, double(r.peak_memory_bytes) / (1 << 20),
                            r.final_loss(), bf16_ms / r.median_step_ms);
                CHECK(std::isfinite(r.final_loss()));
            }
        // Blockwise (1 x 128 and 128 x 128 scales) and rowwise on the tensor cores, fused QKV.
        for (const emu::Fp8Recipe recipe : {emu::Fp8Recipe::Blockwise, emu::Fp8Recipe::Rowwise}) {
            emu::Experiment scaled = gpu::transformer_preset_experiment(pr, emu::Precision::Fp8, true, 30);
            emu::set_recipe(scaled, recipe);
            scaled.numerics.fast_accumulation = {};
            const gpu::GpuTrainResult r = on_gpu(scaled, 5, false);
            std::printf("%s\tFP8 %s fused QKV\t%.3f\t%.0f\t%.1f\t%.0f\t%.4f\t%.3fx BF16 fused\n", pr.name.c_str(),
                        std::string(enum_name(recipe)).c_str(), r.median_step_ms, r.tokens_per_second, r.model_tflops,
                        double(r.peak_memory_bytes) / (1 << 20), r.final_loss(), bf16_ms / r.median_step_ms);
            std::fflush(stdout);
            CHECK(r.path == gpu::GpuPath::Native);
            CHECK(std::isfinite(r.final_loss()));
        }
    }
}
