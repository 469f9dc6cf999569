// SPDX-License-Identifier: Apache-2.0
// AdamW's element loop (vectorised at any width with the scalar loop's bits) and the clip.
#include "emulator/training/adamw.hpp"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <vector>

#include "emulator/base/cpu_clones.hpp"
#include "emulator/base/parallel.hpp"

namespace fp8lab::emu {
namespace {

// Plain arrays and constants in locals let the compiler use vector instructions of any
// width: IEEE division and square root, and no contraction into FMA (-ffp-contract=off on
// this file), give the scalar loop's bits. Biases add 0 instead of the decay.
// Returns the largest bits of |w| after the update (NaN masked to 0, as a cast's amax).
template <bool Decay>
FP8LAB_INLINE std::uint32_t adamw_body(const AdamStep& a, float* __restrict w, float* __restrict m, float* __restrict v,
                                       const float* __restrict g, std::size_t n) {
    const float beta1 = a.beta1, beta2 = a.beta2, one_minus_beta1 = 1.0f - a.beta1, one_minus_beta2 = 1.0f - a.beta2,
                bc1 = a.bc1, bc2 = a.bc2, epsilon = a.epsilon, lr = a.learning_rate, decay = a.weight_decay,
                clip = a.clip;
    std::uint32_t largest = 0;
    for (std::size_t i = 0; i < n; ++i) {
        const float gi = g[i] * clip;
        const float mi = beta1 * m[i] + one_minus_beta1 * gi;
        const float vi = beta2 * v[i] + one_minus_beta2 * gi * gi;
        m[i] = mi;
        v[i] = vi;
        const float update = (mi / bc1) / (std::sqrt(vi / bc2) + epsilon);
        const float wi = w[i] - lr * (update + (Decay ? decay * w[i] : 0.0f));
        w[i] = wi;
        const std::uint32_t abs = std::bit_cast<std::uint32_t>(wi) & 0x7FFFFFFFu;
        const std::uint32_t masked = abs & (0u - std::uint32_t(abs <= 0x7F800000u));
        largest = masked > largest ? masked : largest;
    }
    return largest;
}
FP8LAB_INLINE std::uint32_t adamw_either(const AdamStep& a, float* w, float* m, float* v, const float* g, std::size_t n,
                                         bool decay) {
    return decay ? adamw_body<true>(a, w, m, v, g, n) : adamw_body<false>(a, w, m, v, g, n);
}
FP8LAB_CPU_DISPATCH(std::uint32_t, adamw_span,
                    (const AdamStep& a, float* w, float* m, float* v, const float* g, std::size_t n, bool decay),
                    (a, w, m, v, g, n, decay), adamw_either)

}  // namespace

float adamw(const AdamStep& a, float* w, float* m, float* v, const float* g, std::size_t n, bool decay) {
    constexpr std::size_t kChunk = 1 << 16;
    std::vector<std::uint32_t> largest(chunk_count(n, kChunk), 0);
    parallel_for_chunks(n, kChunk, [&](std::size_t chunk, std::size_t b, std::size_t e) {
        largest[chunk] = adamw_span(a, w + b, m + b, v + b, g + b, e - b, decay);
    });
    return std::bit_cast<float>(largest.empty() ? 0u : *std::max_element(largest.begin(), largest.end()));
}

// A sum in four lanes first, with the bound on both sums' rounding (n u of the sum, u =
// 2^-53, each), settles the common case of a norm clearly below the clip without the
// serial chain of millions of dependent additions; only near or above the clip is the
// serial sum formed.
float clip_factor(std::span<const std::span<const float>> gradients, float clip) {
    const double limit = double(clip) * clip;
    double lanes[4] = {0, 0, 0, 0};
    std::size_t n = 0;
    for (const std::span<const float> g : gradients) {
        std::size_t i = 0;
        for (; i + 4 <= g.size(); i += 4)
            for (int k = 0; k < 4; ++k) lanes[k] += double(g[i + k]) * g[i + k];
        for (; i < g.size(); ++i) lanes[0] += double(g[i]) * g[i];
        n += g.size();
    }
    const double quick = (lanes[0] + lanes[1]) + (lanes[2] + lanes[3]);
    if (quick * (1.0 + 4.0 * double(n) * 0x1p-53) < limit) return 1.0f;
    double norm_sq = 0;
    for (const std::span<const float> g : gradients)
        for (const float x : g) norm_sq += double(x) * x;
    return norm_sq > limit ? float(clip / std::sqrt(norm_sq)) : 1.0f;
}

}  // namespace fp8lab::emu
