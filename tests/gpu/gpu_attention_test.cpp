// SPDX-License-Identifier: Apache-2.0
// The GPU transformer's two attention kernels (fused, and cuBLASLt's GEMMs through memory)
// against a float64 causal grouped-query attention and its gradients, at every head size
// the fused kernels take, with sequences that end inside a tile. Skipped without a GPU.
#include <doctest/doctest.h>

#include <cmath>
#include <cstring>
#include <random>
#include <vector>

#include "gpu/tensor_ops.hpp"
#include "tests/gpu/gpu_ready.hpp"

using namespace fp8lab;

namespace {

struct Shape {
    int sequences, n, heads, kv_heads, head_size;
    int rows() const { return sequences * n; }
    int qkv_w() const { return (heads + 2 * kv_heads) * head_size; }
};

float bf16(float x) {  // nearest-even to BF16, as the device's inputs are
    std::uint32_t u;
    std::memcpy(&u, &x, 4);
    u = (u + 0x7fffu + ((u >> 16) & 1u)) & 0xffff0000u;
    std::memcpy(&x, &u, 4);
    return x;
}

std::vector<float> random_bf16(std::size_t count, float sigma, std::uint32_t seed) {
    std::mt19937 rng(seed);
    std::normal_distribution<float> normal(0.0f, sigma);
    std::vector<float> x(count);
    for (float& v : x) v = bf16(normal(rng));
    return x;
}

// out and dqkv in float64 (softmax unrounded), the layout attention_on_gpu takes.
struct Reference {
    std::vector<double> out, dqkv;
};
Reference reference(const Shape& s, const std::vector<float>& qkv, const std::vector<float>& dout) {
    const int n = s.n, hs = s.head_size, w = s.qkv_w(), ow = s.heads * hs, group = s.heads / s.kv_heads;
    const double scale = 1.0 / std::sqrt(double(hs));
    Reference r{std::vector<double>(std::size_t(s.rows()) * ow), std::vector<double>(std::size_t(s.rows()) * w)};
    std::vector<double> p(std::size_t(n) * n), dp(std::size_t(n) * n);
    for (int b = 0; b < s.sequences; ++b)
        for (int h = 0; h < s.heads; ++h) {
            const int g = h / group;
            const std::size_t row0 = std::size_t(b) * n;
            const auto q = [&](int i, int d) { return double(qkv[(row0 + i) * w + std::size_t(h) * hs + d]); };
            const auto k = [&](int j, int d) {
                return double(qkv[(row0 + j) * w + std::size_t(s.heads + g) * hs + d]);
            };
            const auto v = [&](int j, int d) {
                return double(qkv[(row0 + j) * w + std::size_t(s.heads + s.kv_heads + g) * hs + d]);
            };
            const auto d_o = [&](int i, int d) { return double(dout[(row0 + i) * ow + std::size_t(h) * hs + d]); };
            for (int i = 0; i < n; ++i) {
                double top = -INFINITY, sum = 0, dsum = 0;
                for (int j = 0; j <= i; ++j) {
                    double dot = 0;
                    for (int d = 0; d < hs; ++d) dot += q(i, d) * k(j, d);
                    p[std::size_t(i) * n + j] = dot * scale;
                    top = std::max(top, dot * scale);
                }
                for (int j = 0; j <= i; ++j)
                    sum += (p[std::size_t(i) * n + j] = std::exp(p[std::size_t(i) * n + j] - top));
                for (int j = 0; j <= i; ++j) {
                    double& pij = p[std::size_t(i) * n + j];
                    pij /= sum;
                    double dot = 0;
                    for (int d = 0; d < hs; ++d) dot += d_o(i, d) * v(j, d);
                    dp[std::size_t(i) * n + j] = dot;
                    dsum += pij * dot;
                }
                for (int d = 0; d < hs; ++d) {
                    double o = 0;
                    for (int j = 0; j <= i; ++j) o += p[std::size_t(i) * n + j] * v(j, d);
                    r.out[(row0 + i) * ow + std::size_t(h) * hs + d] = o;
                }
                for (int j = 0; j <= i; ++j) {
                    const double pij = p[std::size_t(i) * n + j],
                                 ds = pij * (dp[std::size_t(i) * n + j] - dsum) * scale;
                    for (int d = 0; d < hs; ++d) {
                        r.dqkv[(row0 + i) * w + std::size_t(h) * hs + d] += ds * k(j, d);
                        r.dqkv[(row0 + j) * w + std::size_t(s.heads + g) * hs + d] += ds * q(i, d);
                        r.dqkv[(row0 + j) * w + std::size_t(s.heads + s.kv_heads + g) * hs + d] += pij * d_o(i, d);
                    }
                }
            }
        }
    return r;
}

// ||x - ref|| / ||ref||; infinite where x holds a NaN (an element no kernel wrote).
double relative_error(const std::vector<float>& x, const std::vector<double>& ref) {
    double err = 0, norm = 0;
    for (std::size_t i = 0; i < x.size(); ++i) {
        if (std::isnan(x[i])) return INFINITY;
        err += (x[i] - ref[i]) * (x[i] - ref[i]);
        norm += ref[i] * ref[i];
    }
    return std::sqrt(err / norm);
}

}  // namespace

TEST_CASE("both attention kernels match a float64 attention and its gradients, grouped heads and ragged ends") {
    if (!gpu_ready()) return;
    for (const Shape s :
         {Shape{2, 80, 4, 2, 32}, Shape{2, 144, 4, 1, 64}, Shape{1, 200, 4, 2, 128}, Shape{3, 64, 2, 2, 64}}) {
        const std::vector<float> qkv = random_bf16(std::size_t(s.rows()) * s.qkv_w(), 1.5f, 7u + s.n);
        const std::vector<float> dout = random_bf16(std::size_t(s.rows()) * s.heads * s.head_size, 1.0f, 11u + s.n);
        const Reference ref = reference(s, qkv, dout);
        double errors[2][2] = {};
        for (const gpu::AttentionKernel kernel : {gpu::AttentionKernel::Fused, gpu::AttentionKernel::Gemms}) {
            const gpu::AttentionOnGpu a =
                gpu::attention_on_gpu(kernel, qkv, dout, s.sequences, s.n, s.heads, s.kv_heads, s.head_size);
            const int i = kernel == gpu::AttentionKernel::Fused ? 0 : 1;
            errors[i][0] = relative_error(a.out, ref.out);
            errors[i][1] = relative_error(a.dqkv, ref.dqkv);
            CAPTURE(s.n);
            CAPTURE(s.head_size);
            CAPTURE(i);
            // BF16 operands of P V and dS K (8 significant bits) and BF16 results: ~2^-8 each.
            CHECK(errors[i][0] < 1e-2);
            CHECK(errors[i][1] < 2e-2);
            if (kernel == gpu::AttentionKernel::Fused) {  // no atomics: the same bits again
                const gpu::AttentionOnGpu again =
                    gpu::attention_on_gpu(kernel, qkv, dout, s.sequences, s.n, s.heads, s.kv_heads, s.head_size);
                CHECK(std::memcmp(again.dqkv.data(), a.dqkv.data(), a.dqkv.size() * sizeof(float)) == 0);
                CHECK(std::memcmp(again.out.data(), a.out.data(), a.out.size() * sizeof(float)) == 0);
            }
        }
        std::printf(
            "attention n=%d heads=%d/%d head=%d: relative error fused out %.2e dqkv %.2e, gemms out %.2e dqkv "
            "%.2e\n",
            s.n, s.heads, s.kv_heads, s.head_size, errors[0][0], errors[0][1], errors[1][0], errors[1][1]);
        // The fused kernels round P once, unnormalised: no further from float64 than the GEMMs' path.
        CHECK(errors[0][0] < 1.5 * errors[1][0] + 1e-4);
        CHECK(errors[0][1] < 1.5 * errors[1][1] + 1e-4);
    }
}

TEST_CASE("the fused backward's dQ from stored dS, one sequence at a time, and recomputed, all match float64") {
    if (!gpu_ready()) return;
    for (const Shape s : {Shape{2, 80, 4, 2, 32}, Shape{3, 200, 4, 2, 128}, Shape{2, 144, 4, 1, 64}}) {
        const std::vector<float> qkv = random_bf16(std::size_t(s.rows()) * s.qkv_w(), 1.5f, 5u + s.n);
        const std::vector<float> dout = random_bf16(std::size_t(s.rows()) * s.heads * s.head_size, 1.0f, 3u + s.n);
        const Reference ref = reference(s, qkv, dout);
        // One sequence's dS: a square of n rounded up to 128 per head, BF16 (flash_attention.cu).
        const std::size_t ld = (std::size_t(s.n) + 127) / 128 * 128, one = std::size_t(s.heads) * ld * ld * 2;
        const auto run = [&](std::size_t budget) {
            return gpu::attention_on_gpu(gpu::AttentionKernel::Fused, qkv, dout, s.sequences, s.n, s.heads, s.kv_heads,
                                         s.head_size, budget);
        };
        const gpu::AttentionOnGpu all = run(gpu::kFusedAttentionScoresBudget), each = run(one),
                                  recomputed = run(one - 1);
        CAPTURE(s.n);
        CAPTURE(s.head_size);
        // A sequence at a time is the same work per sequence: the same bits.
        CHECK(std::memcmp(each.dqkv.data(), all.dqkv.data(), all.dqkv.size() * sizeof(float)) == 0);
        CHECK(std::memcmp(recomputed.out.data(), all.out.data(), all.out.size() * sizeof(float)) == 0);
        const double stored = relative_error(all.dqkv, ref.dqkv), again = relative_error(recomputed.dqkv, ref.dqkv);
        std::printf("attention n=%d head=%d: dqkv relative error, dS stored %.3e, recomputed %.3e\n", s.n, s.head_size,
                    stored, again);
        CHECK(stored < 2e-2);
        CHECK(again < 2e-2);
        // Both take dS rounded to BF16 from the same formula: equally close to float64.
        CHECK(stored < 1.05 * again + 1e-5);
        CHECK(again < 1.05 * stored + 1e-5);
    }
}

TEST_CASE("the fused attention refuses a head size it has no kernel for, naming it") {
    if (!gpu_ready()) return;
    const std::vector<float> qkv(std::size_t(64) * 4 * 48), dout(std::size_t(64) * 2 * 48);
    CHECK_THROWS_WITH_AS(gpu::attention_on_gpu(gpu::AttentionKernel::Fused, qkv, dout, 1, 64, 2, 1, 48),
                         doctest::Contains("not 48"), std::invalid_argument);
}
