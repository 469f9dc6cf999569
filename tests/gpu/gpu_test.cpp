// SPDX-License-Identifier: Apache-2.0
// GPU backend against the emulator, bit for bit; the FP8 GEMM against float64. Every case
// prints why it is skipped where no FP8-capable GPU is usable.
#include <doctest/doctest.h>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>

#include "emulator/formats/bulk.hpp"
#include "emulator/formats/convert.hpp"
#include "emulator/scaling/delayed_scaling.hpp"
#include "emulator/training/training_task.hpp"
#include "gpu/probe.hpp"
#include "tests/gpu/gpu_ready.hpp"
#include "tests/gpu/hard_tensor.hpp"
#include "gpu/tensor_ops.hpp"

using namespace fp8lab;

TEST_CASE("GEMM shapes that are not multiples of 16 are refused naming the dimension") {
    CHECK_THROWS_WITH_AS(gpu::check_gemm_shape(32, 40, 64), doctest::Contains("n (output features) is 40"),
                         std::invalid_argument);
    CHECK_THROWS_WITH_AS(gpu::check_gemm_shape(32, 48, 0), doctest::Contains("k (input features"),
                         std::invalid_argument);
    CHECK_NOTHROW(gpu::check_gemm_shape(16, 32, 48));
}

TEST_CASE("per-tensor quantisation on the GPU equals the emulator bit for bit, amax included") {
    if (!gpu_ready()) return;
    const std::vector<float> x = hard_tensor(1 << 20, 7);
    for (const emu::Format* f : {&emu::e4m3(), &emu::e5m2()}) {
        for (float scale : {1.0f, 0.37f, 448.0f / 1000.0f, 3.0e4f}) {
            CAPTURE(f->name);
            CAPTURE(scale);
            const gpu::QuantizedOnGpu q = gpu::quantize_per_tensor(*f, x, scale);
            std::vector<std::uint8_t> expected(x.size());
            emu::quantize_span(*f, x, scale, expected);
            std::size_t mismatches = 0;
            for (std::size_t i = 0; i < x.size(); ++i) mismatches += q.codes[i] != expected[i];
            CHECK(mismatches == 0);
            CHECK(std::memcmp(&q.amax, &static_cast<const float&>(emu::amax(x)), sizeof(float)) == 0);
        }
    }
    // BF16 input: the same as quantising its float32 value.
    std::vector<std::uint16_t> bf16(x.size());
    std::vector<float> widened(x.size());
    for (std::size_t i = 0; i < x.size(); ++i) {
        const std::uint32_t code = emu::encode(emu::bf16(), x[i]);
        bf16[i] = std::uint16_t(code);
        const std::uint32_t bits = code << 16;
        std::memcpy(&widened[i], &bits, sizeof bits);
    }
    const gpu::QuantizedOnGpu q = gpu::quantize_per_tensor_bf16(emu::e4m3(), bf16, 0.5f);
    std::vector<std::uint8_t> expected(x.size());
    emu::quantize_span(emu::e4m3(), widened, 0.5f, expected);
    CHECK(q.codes == expected);
}

TEST_CASE("delayed scaling on the device gives the emulator's scales bit for bit") {
    if (!gpu_ready()) return;
    const float inf = std::numeric_limits<float>::infinity(), nan = std::numeric_limits<float>::quiet_NaN();
    std::vector<float> amaxes = {2.0f, 8.0f, 0.0f, 4.0f, 1e-38f, 3.0f, nan, 5.0f, inf, 1.0f, 1.0f, 2.5f, 0.5f};
    for (int i = 0; i < 200; ++i)
        amaxes.push_back(std::exp(emu::normal_sample(3, std::uint64_t(i))) * (i % 50 == 0 ? 100.0f : 1.0f));
    for (const emu::Format* f : {&emu::e4m3(), &emu::e5m2()})
        for (int history : {1, 4, 16, 40, 100, 1024})  // the warp's rounds of 32, full and partial
            for (emu::AmaxAlgorithm algo : {emu::AmaxAlgorithm::Max, emu::AmaxAlgorithm::MostRecent})
                for (int margin : {0, 2}) {
                    emu::DelayedScalingConfig config{history, algo, margin};
                    const std::vector<emu::ScalePair> device = gpu::delayed_scaling_on_gpu(*f, config, amaxes);
                    emu::DelayedScaling host(*f, config);
                    REQUIRE(device.size() == amaxes.size());
                    int mismatches = 0;
                    for (std::size_t t = 0; t < amaxes.size(); ++t) {
                        const emu::ScalePair s = host.scale();
                        mismatches += std::memcmp(&s.scale, &device[t].scale, 4) != 0 ||
                                      std::memcmp(&s.scale_inv, &device[t].scale_inv, 4) != 0;
                        host.record_amax(amaxes[t]);
                        host.update();
                    }
                    CAPTURE(history);
                    CHECK(mismatches == 0);
                }
}

TEST_CASE("the FP8 GEMM matches a float64 product of the dequantised operands") {
    if (!gpu_ready()) return;
    const int m = 256, n = 192, k = 512;
    std::vector<float> a(std::size_t(m) * k), b(std::size_t(n) * k);
    for (std::size_t i = 0; i < a.size(); ++i) a[i] = emu::normal_sample(11, i);
    for (std::size_t i = 0; i < b.size(); ++i) b[i] = 0.05f * emu::normal_sample(12, i);
    for (const emu::Format* af : {&emu::e4m3(), &emu::e5m2()})
        for (bool fast : {false, true}) {
            const emu::ScalePair sa = emu::current_scale(emu::amax(a), *af);
            const emu::ScalePair sb = emu::current_scale(emu::amax(b), emu::e4m3());
            std::vector<std::uint8_t> qa(a.size()), qb(b.size());
            emu::quantize_span(*af, a, sa.scale, qa);
            emu::quantize_span(emu::e4m3(), b, sb.scale, qb);
            const std::vector<float> y =
                gpu::fp8_gemm(m, n, k, *af, qa, sa.scale_inv, emu::e4m3(), qb, sb.scale_inv, fast);
            double err = 0, norm = 0;
            for (int i = 0; i < m; ++i)
                for (int j = 0; j < n; ++j) {
                    double ref = 0;
                    for (int p = 0; p < k; ++p)
                        ref += emu::decode(*af, qa[std::size_t(i) * k + p]) * double(sa.scale_inv) *
                               emu::decode(emu::e4m3(), qb[std::size_t(j) * k + p]) * double(sb.scale_inv);
                    const double d = double(y[std::size_t(i) * n + j]) - ref;
                    err += d * d;
                    norm += ref * ref;
                }
            const double relative = std::sqrt(err / norm);
            std::printf("FP8 GEMM %s x e4m3, fast accumulation %s: relative Frobenius error %.3g\n",
                        std::string(af->name).c_str(), fast ? "on" : "off", relative);
            // The BF16 output alone rounds each element by up to 2^-9 relative; FP32
            // accumulation over k = 512 adds far less. Fast accumulation stays within it.
            CHECK(relative < std::ldexp(1.0, -8));
        }
}
