// SPDX-License-Identifier: Apache-2.0
// One experiment on both backends: the GPU starts from the emulator's weights and data bit
// for bit, its first loss matches the CPU's, and every recipe both run ends at the same loss.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>

#include "emulator/models/mlp/mlp_trainer.hpp"
#include "emulator/training/training_task.hpp"
#include "gpu/trainer.hpp"
#include "labs/framework/training_mapping.hpp"
#include "tests/gpu/gpu_ready.hpp"

using namespace fp8lab;

namespace {

gpu::GpuTrainResult train_on_gpu(const emu::Experiment& e) {
    gpu::GpuRun c{e};
    c.record_trace = false;
    return gpu::train_mlp_on_gpu(c);
}

emu::Experiment with_recipe(emu::Experiment e, emu::Fp8Recipe r) {
    emu::set_recipe(e, r);
    return e;
}

}  // namespace

TEST_CASE("the GPU holds the emulator's initial weights and batches bit for bit") {
    if (!gpu_ready()) return;
    emu::Experiment e = labs::lab_experiment();
    for (std::uint64_t seed : {1ull, 7ull}) {
        e.task.seed = e.init_seed = seed;
        const gpu::GpuInitialState st = gpu::gpu_initial_state(gpu::GpuRun{e});
        const std::vector<float> weights = emu::initial_weights(e, 0);
        const emu::Batch batch = emu::TrainingTask(e).batch(0, e.tokens);
        REQUIRE(st.first_weights.size() == weights.size());
        REQUIRE(st.first_inputs.size() == batch.inputs.size());
        REQUIRE(st.first_targets.size() == batch.targets.size());
        CHECK(std::equal(weights.begin(), weights.end(), st.first_weights.begin()));
        CHECK(std::equal(batch.inputs.begin(), batch.inputs.end(), st.first_inputs.begin()));
        CHECK(std::equal(batch.targets.begin(), batch.targets.end(), st.first_targets.begin()));
    }
}

TEST_CASE("the first step's loss is the CPU's, and every recipe both backends run ends at the same loss") {
    if (!gpu_ready()) return;
    const emu::Experiment base = labs::lab_experiment();
    struct Case {
        const char* name;
        emu::Experiment e;
    };
    // The emulated path's recipes train 100 steps: the CPU takes up to 14 s per NVFP4 run.
    const auto emulated = [](emu::Experiment e) {
        e.steps = 100;
        return e;
    };
    emu::Experiment fp6 = emulated(with_recipe(base, emu::Fp8Recipe::Current));
    fp6.numerics.formats = {&emu::e3m2(), &emu::e2m3(), &emu::e3m2()};
    emu::Experiment guarded = emulated(base);
    guarded.numerics.rounding.gradient = emu::RoundingMode::Stochastic;
    guarded.numerics.edge_layers_bf16 = true;
    guarded.numerics.loss_scaling = true;
    emu::Experiment e5m2 = emulated(base);
    e5m2.numerics.formats = {&emu::e5m2(), &emu::e5m2(), &emu::e5m2()};
    const Case cases[] = {{"bf16", emu::with_precision(base, emu::Precision::Bf16)},
                          {"fp8 delayed", base},
                          {"fp8 current", with_recipe(base, emu::Fp8Recipe::Current)},
                          {"fp8 blockwise", with_recipe(base, emu::Fp8Recipe::Blockwise)},
                          {"mx-floor", emulated(with_recipe(base, emu::Fp8Recipe::MxFloor))},
                          {"mx-rceil", emulated(with_recipe(base, emu::Fp8Recipe::MxRceil))},
                          {"nvfp4", emulated(with_recipe(base, emu::Fp8Recipe::Nvfp4))},
                          {"fp8 rowwise", with_recipe(base, emu::Fp8Recipe::Rowwise)},
                          {"fp6 current", fp6},
                          {"e5m2 delayed", e5m2},
                          {"sr+edge+ls", guarded}};
    for (const Case& c : cases) {
        CAPTURE(c.name);
        double cpu_sum = 0, gpu_sum = 0, worst_gap = 0, first_gap = 0;
        for (std::uint64_t seed = 1; seed <= 4; ++seed) {
            emu::Experiment e = c.e;
            e.task.seed = e.init_seed = seed;
            const emu::TrainerResult cpu = emu::train_mlp(e);
            const gpu::GpuTrainResult on_gpu = train_on_gpu(e);
            REQUIRE(on_gpu.loss.size() == cpu.loss.size());
            first_gap = std::max(first_gap, std::fabs(on_gpu.loss[0] / cpu.loss[0] - 1.0));
            for (std::size_t i = 0; i < cpu.loss.size(); ++i)
                worst_gap = std::max(worst_gap, std::fabs(double(on_gpu.loss[i]) / cpu.loss[i] - 1.0));
            cpu_sum += emu::final_loss(cpu.loss);
            gpu_sum += on_gpu.final_loss();
        }
        const double agreement = gpu_sum / cpu_sum - 1.0;
        std::printf(
            "%-14s (%s) first-step loss gap %.2e, final loss GPU/CPU %+.3f%% (mean of 4 seeds), "
            "largest per-step gap %.2f%%\n",
            c.name, std::string(gpu::gpu_path_name(gpu::gpu_path(c.e))).c_str(), first_gap, 100 * agreement,
            100 * worst_gap);
        // Both start from the same bits; the GPU's accumulation order and GELU differ in the
        // last bits, so the first loss agrees to float32-level rounding of the BF16 outputs.
        CHECK(first_gap < 1e-3);
        CHECK(std::fabs(agreement) < 0.02);
    }
}

TEST_CASE("every recipe runs on the GPU: natively where its tensor cores can, else emulated, refusing by name") {
    const emu::Experiment base = labs::lab_experiment();
    CHECK(gpu::gpu_path(base) == gpu::GpuPath::Native);
    CHECK(gpu::gpu_path(with_recipe(base, emu::Fp8Recipe::Blockwise)) == gpu::GpuPath::Native);
    CHECK(gpu::gpu_path(with_recipe(base, emu::Fp8Recipe::Rowwise)) == gpu::GpuPath::Native);
    for (emu::Fp8Recipe r : {emu::Fp8Recipe::MxFloor, emu::Fp8Recipe::MxRceil, emu::Fp8Recipe::Nvfp4}) {
        CAPTURE(emu::fp8_recipe_name(r));
        CHECK(gpu::gpu_path(with_recipe(base, r)) == gpu::GpuPath::Emulated);
        gpu::validate(gpu::GpuRun{with_recipe(base, r)});
        emu::Experiment fast = with_recipe(base, r);
        fast.numerics.fast_accumulation.dgrad = true;
        CHECK_THROWS_WITH_AS(gpu::validate(gpu::GpuRun{fast}), doctest::Contains("numerics.fast_accumulation"),
                             std::invalid_argument);
    }
    emu::Experiment biases = base;
    biases.model.biases = true;
    CHECK_THROWS_WITH_AS(gpu::validate(gpu::GpuRun{biases}), doctest::Contains("model.biases"), std::invalid_argument);
}

TEST_CASE("the outlier task on the GPU: the massive rows out of the loss, the same losses as the CPU's") {
    gpu::GpuRun refused{labs::lab_experiment()};
    refused.experiment.task.kind = emu::TaskKind::OutlierFeatures;
    CHECK_NOTHROW(gpu::validate(refused));  // accepted now that the loss takes a row mask
    if (!gpu_ready()) return;
    emu::Experiment base = labs::lab_experiment();
    base.task.kind = emu::TaskKind::OutlierFeatures;
    base.steps = 100;
    struct Case {
        const char* name;
        emu::Experiment e;
    };
    const Case cases[] = {{"bf16", emu::with_precision(base, emu::Precision::Bf16)},
                          {"delayed (native)", with_recipe(base, emu::Fp8Recipe::Delayed)},
                          {"mx-rceil (emulated)", with_recipe(base, emu::Fp8Recipe::MxRceil)}};
    for (const Case& c : cases) {
        CAPTURE(c.name);
        double cpu_mean = 0, gpu_mean = 0;
        for (int k = 0; k < 4; ++k) {
            const emu::Experiment e = emu::with_seed(c.e, k);
            const std::vector<float> cpu = emu::train_mlp(e).loss;
            const gpu::GpuTrainResult gpu = train_on_gpu(e);
            REQUIRE(gpu.loss.size() == cpu.size());
            CHECK(gpu.loss[0] == doctest::Approx(cpu[0]).epsilon(1e-3));
            cpu_mean += emu::final_loss(cpu) / 4;
            gpu_mean += gpu.final_loss() / 4;
        }
        std::printf("outlier task, %s, 100 steps, 4 seeds: final loss CPU %.6f GPU %.6f (GPU/CPU %+.3f%%)\n", c.name,
                    cpu_mean, gpu_mean, 100 * (gpu_mean / cpu_mean - 1));
        CHECK(gpu_mean == doctest::Approx(cpu_mean).epsilon(0.02));
    }
}
