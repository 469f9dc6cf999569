// SPDX-License-Identifier: Apache-2.0
// Scaling recipes against sequences and blocks worked out by hand (docs/numerics.md §4).
#include <doctest/doctest.h>

#include <cfloat>
#include <cmath>
#include <limits>
#include <random>
#include <stdexcept>
#include <vector>

#include "emulator/scaling/block_recipes.hpp"
#include "emulator/formats/convert.hpp"
#include "emulator/scaling/current_scaling.hpp"
#include "emulator/scaling/delayed_scaling.hpp"
#include "emulator/scaling/loss_scaler.hpp"

using namespace fp8lab::emu;

TEST_CASE("current scaling: guards, FLT_MAX clamp and power-of-two scales") {
    CHECK(current_scale(2.0f, e4m3()).scale == 224.0f);
    CHECK(current_scale(2.0f, e4m3()).scale_inv == 1.0f / 224.0f);
    CHECK(current_scale(0.0f, e4m3()).scale == 1.0f);
    CHECK(current_scale(INFINITY, e4m3()).scale == 1.0f);
    CHECK(current_scale(NAN, e4m3()).scale == 1.0f);
    CHECK(current_scale(1e-45f, e4m3()).scale == FLT_MAX);     // 448 / 1e-45 overflows
    CHECK(current_scale(3.0f, e4m3(), true).scale == 128.0f);  // 149.33 -> 2^7
    CHECK(current_scale(3.0f, e5m2(), true).scale == 16384.0f);
}

TEST_CASE("delayed scaling: the roll, max over the window, and the one-step delay") {
    DelayedScaling d(e4m3(), {3, AmaxAlgorithm::Max, 0});
    CHECK(d.scale().scale == 1.0f);  // step 0 quantises with the initial scale
    d.record_amax(2.0f);
    d.update();
    CHECK(d.scale().scale == 224.0f);                            // 448 / 2, used from step 1
    CHECK(d.history() == std::vector<float>{0.0f, 0.0f, 2.0f});  // rolled: newest went last
    d.record_amax(4.0f);
    d.update();
    CHECK(d.scale().scale == 112.0f);  // max(4, 2)
    CHECK(d.history() == std::vector<float>{0.0f, 2.0f, 4.0f});
    d.record_amax(1.0f);
    d.update();
    CHECK(d.scale().scale == 112.0f);  // 4 still in the window
    // The roll moved the 2 into slot 0 and zeroed it: a window of L keeps L - 1 old amaxes.
    CHECK(d.history() == std::vector<float>{0.0f, 4.0f, 1.0f});
    d.record_amax(1.0f);  // the window is {1, 4, 1}
    d.update();
    CHECK(d.scale().scale == 112.0f);
    d.record_amax(1.0f);
    d.update();  // window {1, 1, 1}: the 4 has left
    CHECK(d.scale().scale == 448.0f);
}

TEST_CASE("delayed scaling: most_recent, margin, zero and Inf guards, FLT_MAX") {
    DelayedScaling recent(e4m3(), {4, AmaxAlgorithm::MostRecent, 0});
    recent.record_amax(8.0f);
    recent.update();
    recent.record_amax(1.0f);
    recent.update();
    CHECK(recent.scale().scale == 448.0f);  // ignores the 8 still in the history

    DelayedScaling margin(e4m3(), {1, AmaxAlgorithm::Max, 2});
    margin.record_amax(7.0f);
    margin.update();
    CHECK(margin.scale().scale == (448.0f / 4.0f) / 7.0f);  // numerator formed first
    CHECK(margin.history() == std::vector<float>{0.0f});    // L = 1: the roll zeroes it

    DelayedScaling zero(e4m3(), {4, AmaxAlgorithm::Max, 0});
    zero.record_amax(2.0f);
    zero.update();
    const auto before = zero.history();
    zero.record_amax(0.0f);
    zero.update();  // the tensor saw nothing: no roll, same scale
    CHECK(zero.scale().scale == 224.0f);
    CHECK(zero.history() == before);

    DelayedScaling inf(e4m3(), {2, AmaxAlgorithm::Max, 0});
    inf.record_amax(2.0f);
    inf.update();
    inf.record_amax(INFINITY);
    inf.update();
    CHECK(inf.scale().scale == 224.0f);  // Inf keeps the old scale...
    inf.record_amax(1.0f);
    inf.update();
    CHECK(inf.scale().scale == 224.0f);  // ...for as long as it stays in the window
    inf.record_amax(1.0f);
    inf.update();
    CHECK(inf.scale().scale == 448.0f);

    DelayedScaling nan(e4m3(), {2, AmaxAlgorithm::Max, 0});
    nan.record_amax(NAN);
    nan.update();
    CHECK(nan.scale().scale == 1.0f);  // a NaN alone: no finite amax, keep the scale
    nan.record_amax(2.0f);
    nan.update();
    CHECK(nan.scale().scale == 224.0f);  // fmax skips the NaN still in the window

    DelayedScaling tiny(e4m3(), {1, AmaxAlgorithm::Max, 0});
    tiny.record_amax(1e-45f);
    tiny.update();
    CHECK(tiny.scale().scale == FLT_MAX);
    CHECK_THROWS_AS(DelayedScaling(e4m3(), {0, AmaxAlgorithm::Max, 0}), std::invalid_argument);
    CHECK_THROWS_AS(DelayedScaling(e4m3(), {4, AmaxAlgorithm::Max, -1}), std::invalid_argument);
}

TEST_CASE("HYBRID uses E4M3 forward and E5M2 for gradients") {
    CHECK(&format_for(FormatRecipe::Hybrid, TensorRole::Input) == &e4m3());
    CHECK(&format_for(FormatRecipe::Hybrid, TensorRole::Weight) == &e4m3());
    CHECK(&format_for(FormatRecipe::Hybrid, TensorRole::GradOutput) == &e5m2());
    CHECK(&format_for(FormatRecipe::E4M3, TensorRole::GradOutput) == &e4m3());
}

TEST_CASE("MX: the floor rule clips 957 to 896, RCEIL keeps it") {
    std::vector<float> block(32, 1.0f);
    block[5] = 957.0f;
    const QuantizedTensor floor_q = quantize_mx(block, 1, 32, e4m3(), MxScaleRule::OcpFloor);
    // floor(log2 957) = 9, X = 2^(9-8) = 2: 957/2 = 478.5 saturates to 448, read as 896.
    CHECK(floor_q.scale_codes[0] == 127 + 1);
    CHECK(floor_q.dequantize()[5] == 896.0f);
    CHECK(floor_q.counts.overflowed == 1);
    // RCEIL: 957 * (1/448) = 2.14 rounds up to 4 (e = 129): 957/4 = 239.25 -> 240 -> 960.
    const QuantizedTensor rceil_q = quantize_mx(block, 1, 32, e4m3(), MxScaleRule::Rceil);
    CHECK(rceil_q.scale_codes[0] == 127 + 2);
    CHECK(rceil_q.dequantize()[5] == 960.0f);
    CHECK(rceil_q.counts.overflowed == 0);
}

TEST_CASE("MX E2M1 block worked by hand") {
    // amax 5: floor(log2 5) = 2, emax(E2M1) = 2, X = 1. Elements round to the FP4 grid.
    std::vector<float> x = {5.0f, -2.6f, 0.2f, 0.3f, 1.25f, 3.5f, -6.0f, 0.0f};
    x.resize(32, 0.0f);
    x[6] = -4.0f;  // keep amax at 5
    const QuantizedTensor q = quantize_mx(x, 1, 32, e2m1(), MxScaleRule::OcpFloor);
    CHECK(q.scale_codes[0] == 127);
    const std::vector<float> back = q.dequantize();
    const std::vector<float> want = {4.0f, -3.0f, 0.0f, 0.5f, 1.0f, 4.0f, -4.0f, 0.0f};
    for (std::size_t i = 0; i < want.size(); ++i) CHECK(back[i] == want[i]);
    // 5 is a tie between 4 and 6 (codes 0x6, 0x7): even wins. 0.2 < 0.25 flushes; 0.3 -> 0.5.
    CHECK(q.counts.flushed_to_zero == 1);
}

TEST_CASE("MX: zero and Inf blocks, and ragged tensors") {
    std::vector<float> x(64, 0.0f);
    x[40] = INFINITY;
    const QuantizedTensor q = quantize_mx(x, 1, 64, e4m3(), MxScaleRule::Rceil);
    CHECK(q.scale_codes[0] == 0);  // amax 0: the smallest scale, elements stay 0
    CHECK(q.dequantize()[0] == 0.0f);
    CHECK(q.scale_codes[1] == 0xFF);  // Inf in the block: the NaN scale
    CHECK(std::isnan(q.dequantize()[33]));
    const QuantizedTensor ragged = quantize_mx(std::vector<float>(40, 1.0f), 2, 20, e5m2(), MxScaleRule::OcpFloor);
    CHECK(ragged.block_count() == 2);
    CHECK(ragged.dequantize() == std::vector<float>(40, 1.0f));
}

TEST_CASE("NVFP4 block worked by hand") {
    // Tensor amax 6 => S_enc = 2688/6 = 448. Block amax 3 => d = cvt_e4m3(3 * (448 * (1/6)))
    // = cvt(224) = 224; scale_inv = 224 * (1/448) = 0.5, multiplier 2: 3 -> 6, 1 -> 2.
    std::vector<float> x(32, 0.0f);
    x[0] = 3.0f;
    x[1] = 1.0f;
    x[2] = -0.3f;
    x[16] = 6.0f;
    x[17] = 1.4f;
    const QuantizedTensor q = quantize_nvfp4(x, 1, 32);
    CHECK(q.tensor_scale_inv == 1.0f / 448.0f);
    CHECK(decode(e4m3(), q.scale_codes[0]) == 224.0);
    CHECK(q.block_scale_inv[0] == 0.5f);
    CHECK(q.block_scale_inv[1] == 1.0f);
    const std::vector<float> back = q.dequantize();
    CHECK(back[0] == 3.0f);
    CHECK(back[1] == 1.0f);
    CHECK(back[2] == -0.25f);  // -0.6 in element units -> -0.5 -> times 0.5
    CHECK(back[16] == 6.0f);
    CHECK(back[17] == 1.5f);
    const QuantizedTensor zero = quantize_nvfp4(std::vector<float>(16, 0.0f), 1, 16);
    CHECK(zero.tensor_scale_inv == 1.0f);
    CHECK(zero.dequantize() == std::vector<float>(16, 0.0f));
}

TEST_CASE("NVFP4 options: 16x16 tiles, stochastic rounding, Hadamard transform") {
    std::mt19937 rng(1);
    std::normal_distribution<float> n(0, 1);
    std::vector<float> x(32 * 32);
    for (float& v : x) v = n(rng);
    const QuantizedTensor tiles = quantize_nvfp4(x, 32, 32, {true});
    CHECK(tiles.block_count() == 4);
    // Stochastic rounding is unbiased: the mean error over many seeds shrinks.
    std::vector<float> small(1024, 0.3f);
    small[0] = 6.0f;  // fixes the scales so 0.3 falls between grid points
    double sum = 0;
    for (std::uint64_t seed = 0; seed < 64; ++seed) {
        const QuantizedTensor q = quantize_nvfp4(small, 1, 1024, {false, true, seed, 32});
        const std::vector<float> back = q.dequantize();
        for (std::size_t i = 16; i < back.size(); ++i) sum += back[i] - 0.3;
    }
    CHECK(std::fabs(sum / (64.0 * 1008.0)) < 0.01);
    // The transform is orthogonal: dot products of transformed rows are preserved.
    std::vector<float> a(x.begin(), x.begin() + 32), b(x.begin() + 32, x.begin() + 64);
    double dot = 0;
    for (int i = 0; i < 32; ++i) dot += double(a[i]) * b[i];
    random_hadamard_transform_16(a, 1, 32, 5);
    random_hadamard_transform_16(b, 1, 32, 5);
    double dot_t = 0;
    for (int i = 0; i < 32; ++i) dot_t += double(a[i]) * b[i];
    CHECK(dot_t == doctest::Approx(dot).epsilon(1e-5));
    // As a quantiser option: the tensor holds the transformed values.
    std::vector<float> row(x.begin(), x.begin() + 32);
    const QuantizedTensor plain = quantize_nvfp4(row, 1, 32);
    Nvfp4Options with_rht;
    with_rht.hadamard = true;
    with_rht.hadamard_seed = 5;
    const QuantizedTensor rotated = quantize_nvfp4(row, 1, 32, with_rht);
    std::vector<float> expected = row;
    random_hadamard_transform_16(expected, 1, 32, 5);
    const std::vector<float> back = rotated.dequantize();
    double err = 0, norm = 0;
    for (int i = 0; i < 32; ++i) {
        err += (back[i] - expected[i]) * (back[i] - expected[i]);
        norm += expected[i] * expected[i];
    }
    CHECK(std::sqrt(err / norm) < 0.2);  // FP4 error, around the transformed values
    CHECK(rotated.codes != plain.codes);
}

TEST_CASE("NVFP4 with its amax given (AdamW's, for a weight): the same cast, and a wrong one refused") {
    std::mt19937 rng(3);
    std::normal_distribution<float> n(0, 1);
    std::vector<float> x(48 * 64);
    for (float& v : x) v = n(rng);
    x[100] = -7.5f;  // the amax, negative
    for (const bool tiles : {false, true}) {
        CAPTURE(tiles);
        Nvfp4Options given;
        given.weight_tiles = tiles;
        const QuantizedTensor plain = quantize_nvfp4(x, 48, 64, given);
        given.tensor_amax = 7.5f;
        const QuantizedTensor hinted = quantize_nvfp4(x, 48, 64, given);
        CHECK(hinted.codes == plain.codes);
        CHECK(hinted.scale_codes == plain.scale_codes);
        CHECK(hinted.tensor_scale_inv == plain.tensor_scale_inv);
        given.tensor_amax = 7.0f;
        CHECK_THROWS_AS(quantize_nvfp4(x, 48, 64, given), std::logic_error);
    }
    // Under the Hadamard transform the tensor's values change: the given amax is not used.
    Nvfp4Options rotated;
    rotated.hadamard = true;
    rotated.hadamard_seed = 9;
    const QuantizedTensor want = quantize_nvfp4(x, 48, 64, rotated);
    rotated.tensor_amax = 7.0f;
    CHECK(quantize_nvfp4(x, 48, 64, rotated).codes == want.codes);
}

TEST_CASE("blockwise FP8: power-of-two scale per 1x128 block and 128x128 tile") {
    std::vector<float> x(2 * 256, 1.0f);
    x[3] = 100.0f;  // block (0,0): amax 100 -> 448/100 = 4.48 -> scale 4
    const QuantizedTensor rows = quantize_blockwise(x, 2, 256, {1, 128});
    CHECK(rows.block_count() == 4);
    CHECK(rows.block_scale_inv[0] == 0.25f);
    CHECK(rows.block_scale_inv[1] == 1.0f / 256.0f);  // amax 1 -> 448 -> 256
    const QuantizedTensor tiles = quantize_blockwise(x, 2, 256, {128, 128});
    CHECK(tiles.block_count() == 2);
    CHECK(tiles.block_scale_inv[0] == 0.25f);
}

TEST_CASE("dynamic loss scaling: backoff on overflow, growth after the interval") {
    DynamicLossScaler s({8.0f, 2.0f, 0.5f, 3});
    CHECK(s.update(false));
    CHECK(s.update(false));
    CHECK(s.scale() == 8.0f);
    CHECK(s.update(false));
    CHECK(s.scale() == 16.0f);  // three clean steps
    CHECK_FALSE(s.update(true));
    CHECK(s.scale() == 8.0f);  // backed off, step skipped
    CHECK(s.update(false));
    CHECK(s.update(false));
    CHECK(s.scale() == 8.0f);  // the count restarted at the overflow
    CHECK(s.update(false));
    CHECK(s.scale() == 16.0f);
    CHECK(s.scale_per_step() == std::vector<float>{8, 8, 8, 16, 8, 8, 8});
    CHECK(s.skipped_steps() == std::vector<std::size_t>{3});
    CHECK(DynamicLossScaler().scale() == 65536.0f);
}
