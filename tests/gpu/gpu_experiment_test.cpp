// One experiment on both backends: the GPU starts from the emulator's weights and data bit
// for bit, its first loss matches the CPU's, and every recipe both run ends at the same loss.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "emulator/mlp_trainer.hpp"
#include "emulator/training_task.hpp"
#include "gpu/trainer.hpp"
#include "labs/training_mapping.hpp"
#include "tests/gpu/gpu_ready.hpp"

using namespace fp8lab;

namespace {

gpu::GpuTrainResult train_on_gpu(const emu::Experiment& e) {
    gpu::GpuTrainConfig c = gpu::gpu_config(e);
    c.record_trace = false;
    return gpu::train_mlp_on_gpu(c);
}

emu::Experiment with_recipe(emu::Experiment e, emu::Fp8Recipe r) {
    labs::set_recipe(e, r);
    return e;
}

}  // namespace

TEST_CASE("the GPU holds the emulator's initial weights and batches bit for bit") {
    if (!gpu_ready()) return;
    emu::Experiment e = labs::lab_experiment();
    for (std::uint64_t seed : {1ull, 7ull}) {
        e.task.seed = e.init_seed = seed;
        const gpu::GpuInitialState st = gpu::gpu_initial_state(gpu::gpu_config(e));
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
    const Case cases[] = {{"bf16", emu::with_precision(base, emu::Precision::Bf16)},
                          {"fp8 delayed", base},
                          {"fp8 current", with_recipe(base, emu::Fp8Recipe::Current)},
                          {"fp8 blockwise", with_recipe(base, emu::Fp8Recipe::Blockwise)}};
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
        std::printf("%-14s first-step loss gap %.2e, final loss GPU/CPU %+.3f%% (mean of 4 seeds), "
                    "largest per-step gap %.2f%%\n",
                    c.name, first_gap, 100 * agreement, 100 * worst_gap);
        // Both start from the same bits; the GPU's accumulation order and GELU differ in the
        // last bits, so the first loss agrees to float32-level rounding of the BF16 outputs.
        CHECK(first_gap < 1e-3);
        CHECK(std::fabs(agreement) < 0.02);
    }
}

TEST_CASE("the GPU refuses, by name, the recipes it cannot run yet") {
    const emu::Experiment base = labs::lab_experiment();
    for (emu::Fp8Recipe r : {emu::Fp8Recipe::MxFloor, emu::Fp8Recipe::MxRceil, emu::Fp8Recipe::Nvfp4}) {
        CAPTURE(emu::fp8_recipe_name(r));
        CHECK_THROWS_WITH_AS(gpu::gpu_config(with_recipe(base, r)), doctest::Contains("numerics.recipe"),
                             std::invalid_argument);
    }
}
