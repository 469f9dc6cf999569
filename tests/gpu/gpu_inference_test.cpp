// SPDX-License-Identifier: Apache-2.0
// Inference timing on the GPU: every variant computes the model's forward pass (its output
// close to BF16's by the error FP8 allows), stores fewer weight bytes, and is timed.
#include <doctest/doctest.h>

#include <sstream>

#include "gpu/inference_timing.hpp"
#include "labs/experiments/inference_speed.hpp"
#include "tests/gpu/gpu_ready.hpp"

using namespace fp8lab;

namespace {
void check_variants(const std::vector<gpu::InferenceTiming>& timings, int tokens) {
    REQUIRE(timings.size() == gpu::kInferenceVariants.size());
    const gpu::InferenceTiming& bf16 = timings.front();
    REQUIRE(bf16.variant == gpu::InferenceVariant::Bf16);
    CHECK(bf16.output_error == 0);
    for (const gpu::InferenceTiming& t : timings) {
        INFO(gpu::inference_variant_name(t.variant).id << " at " << tokens << " tokens: " << t.kernels);
        CHECK(t.tokens == tokens);
        CHECK(t.median_us > 0);
        CHECK_FALSE(t.kernels.empty());
        if (t.variant == gpu::InferenceVariant::Bf16) continue;
        // E4M3 rounds each value by at most 2^-4 relative: an output off by more than a few
        // percent is a wrong scale, layout or transpose, not rounding.
        CHECK(t.output_error > 0);
        CHECK(t.output_error < (t.variant == gpu::InferenceVariant::WeightOnly ? 0.06 : 0.12));
        CHECK(t.weight_mib < 0.6 * bf16.weight_mib);
    }
}
}  // namespace

TEST_CASE("every inference variant computes the forward pass, at one token, a small batch and many") {
    if (!gpu_ready()) return;
    for (int tokens : {1, 3, 32, 512}) check_variants(gpu::time_inference({{64, 128, 128, 16}}, tokens), tokens);
    check_variants(gpu::time_inference({{1024, 4096, 1024}}, 1), 1);  // the fused weight-only kernel, wide rows
    check_variants(gpu::time_inference({{1024, 4096, 1024}}, 256), 256);
    CHECK_THROWS_AS(gpu::time_inference({{64, 100, 16}}, 1), std::invalid_argument);
}

TEST_CASE("the inference sweep measures every shape and batch and survives its CSV round trip") {
    if (!gpu_ready()) return;
    int calls = 0;
    const labs::InferenceSweep sweep = labs::measure_inference([&](int, int) { return ++calls < 1000; });
    CHECK(calls == int(labs::inference_shapes().size() * labs::inference_batches().size()));
    CHECK(sweep.points.size() == std::size_t(calls) * gpu::kInferenceVariants.size());
    std::stringstream csv;
    labs::write_inference_csv(csv, sweep);
    const labs::InferenceSweep back = labs::read_inference_csv(csv, "memory");
    REQUIRE(back.points.size() == sweep.points.size());
    CHECK(back.points[7].timing.median_us == sweep.points[7].timing.median_us);
}
