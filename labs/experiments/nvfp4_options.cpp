// SPDX-License-Identifier: Apache-2.0
// NVFP4's training options measured one at a time on fixed synthetic tensors.
#include "labs/experiments/nvfp4_options.hpp"

#include <cmath>
#include <cstddef>
#include <cstdint>

#include "emulator/training/experiment.hpp"
#include "emulator/scaling/quantize.hpp"
#include "emulator/training/training_task.hpp"
#include "labs/framework/table.hpp"

namespace fp8lab::labs {
namespace {

// Features (the GEMM's outputs) and tokens (its contraction) of the gradient experiments.
constexpr std::size_t kFeatures = 64, kTokens = 4096;
// The sums' gradients: per block of 16, one value of +-kLarge and fifteen near kSmall.
constexpr float kLarge = 1.0f, kSmall = 0.01f;
// The weight cast both ways.
constexpr std::size_t kWeightRows = 64, kWeightCols = 256;
// The wgrad GEMM's activations: one token in kOutlierEvery kOutlierFactor times larger.
constexpr std::size_t kOutlierEvery = 64;
constexpr float kOutlierFactor = 20.0f;

// NVFP4 as Transformer Engine's recipe with the three options as given.
emu::Recipe nvfp4(bool weight_tiles, bool stochastic_gradients, bool hadamard_wgrad) {
    emu::Numerics n;
    n.precision = emu::Precision::Fp8;
    n.recipe = emu::Fp8Recipe::Nvfp4;
    n.nvfp4 = {weight_tiles, stochastic_gradients, hadamard_wgrad};
    return emu::recipe_of(n);
}

struct Cast {
    std::vector<float> values;  // dequantised
    std::size_t flushed = 0;    // non-zero elements cast to zero
};

// x is rows x cols with the contraction along the columns, as every cast of the trainers.
Cast cast(const std::vector<float>& x, std::size_t rows, std::size_t cols, const emu::Recipe& recipe,
          emu::TensorRole role, std::uint64_t seed) {
    emu::RecipeState state;
    const emu::QuantizedTensor q = emu::quantize(x, rows, cols, recipe, {"x", role, 1, seed, true}, state);
    return {q.dequantize(), q.counts.flushed_to_zero};
}

// Sums over the tokens of gradients whose blocks of 16 hold one large value (+-1, the signs
// alternating so that they cancel) and fifteen small ones near +0.01: the small, consistent
// part a weight gradient accumulates over many tokens. Returns the sums' mean signed error
// and RMS error, relative to the exact sums, in %.
std::pair<double, double> sum_errors(bool stochastic) {
    std::vector<float> g(kFeatures * kTokens);
    for (std::size_t f = 0; f < kFeatures; ++f)
        for (std::size_t k = 0; k < kTokens; ++k) {
            const std::size_t i = f * kTokens + k;
            g[i] = k % 16 == 0 ? ((k / 16) % 2 ? -kLarge : kLarge) : kSmall * (1.0f + 0.5f * emu::normal_sample(9, i));
        }
    const Cast q = cast(g, kFeatures, kTokens, nvfp4(true, stochastic, false), emu::TensorRole::GradOutput, 11);
    double bias = 0, squares = 0;
    for (std::size_t f = 0; f < kFeatures; ++f) {
        double exact = 0, cast_sum = 0;
        for (std::size_t k = 0; k < kTokens; ++k) {
            exact += g[f * kTokens + k];
            cast_sum += q.values[f * kTokens + k];
        }
        const double relative = (cast_sum - exact) / exact;
        bias += relative / double(kFeatures);
        squares += relative * relative / double(kFeatures);
    }
    return {100 * bias, 100 * std::sqrt(squares)};
}

// A 64 x 256 weight cast as it is and as its transpose: the share of elements whose two
// casts differ, in %.
double transpose_differs(bool weight_tiles) {
    constexpr std::size_t rows = kWeightRows, cols = kWeightCols;
    std::vector<float> w(rows * cols), wt(rows * cols);
    for (std::size_t i = 0; i < w.size(); ++i) w[i] = 0.02f * emu::normal_sample(41, i);
    for (std::size_t r = 0; r < rows; ++r)
        for (std::size_t c = 0; c < cols; ++c) wt[c * rows + r] = w[r * cols + c];
    const emu::Recipe recipe = nvfp4(weight_tiles, false, false);
    const Cast a = cast(w, rows, cols, recipe, emu::TensorRole::Weight, 0);
    const Cast b = cast(wt, cols, rows, recipe, emu::TensorRole::Weight, 0);
    std::size_t differ = 0;
    for (std::size_t r = 0; r < rows; ++r)
        for (std::size_t c = 0; c < cols; ++c) differ += a.values[r * cols + c] != b.values[c * rows + r];
    return 100.0 * double(differ) / double(w.size());
}

// The weight-gradient GEMM G^T X over 4096 tokens, G ~ N(0, 1) and X ~ N(0, 1) with one
// token in 64 twenty times larger (massive activations): the share of X's elements flushed
// to zero and the product's relative RMS error against float64, in %.
std::pair<double, double> wgrad_errors(bool hadamard) {
    constexpr std::size_t inputs = 64;
    std::vector<float> gt(kFeatures * kTokens), xt(inputs * kTokens);
    for (std::size_t i = 0; i < gt.size(); ++i) gt[i] = emu::normal_sample(21, i);
    for (std::size_t i = 0; i < xt.size(); ++i)
        xt[i] = emu::normal_sample(23, i) * (i % kTokens % kOutlierEvery == 0 ? kOutlierFactor : 1.0f);
    const emu::Recipe recipe = nvfp4(true, false, hadamard);
    const Cast g = cast(gt, kFeatures, kTokens, recipe, emu::TensorRole::GradOutput, 31);
    const Cast x = cast(xt, inputs, kTokens, recipe, emu::TensorRole::Input, 33);
    double error = 0, norm = 0;
    for (std::size_t f = 0; f < kFeatures; ++f)
        for (std::size_t d = 0; d < inputs; ++d) {
            double exact = 0, product = 0;
            for (std::size_t k = 0; k < kTokens; ++k) {
                exact += double(gt[f * kTokens + k]) * xt[d * kTokens + k];
                product += double(g.values[f * kTokens + k]) * x.values[d * kTokens + k];
            }
            error += (product - exact) * (product - exact);
            norm += exact * exact;
        }
    return {100.0 * double(x.flushed) / double(xt.size()), 100 * std::sqrt(error / norm)};
}

}  // namespace

PlaceholderValues nvfp4_options_text_values() {
    return {{"options.tokens", std::to_string(kTokens)},
            {"options.large", number_text(kLarge)},
            {"options.small", number_text(kSmall)},
            {"options.weight", std::to_string(kWeightRows) + " x " + std::to_string(kWeightCols)},
            {"options.outlier_every", std::to_string(kOutlierEvery)},
            {"options.outlier_factor", number_text(kOutlierFactor)}};
}

std::vector<Nvfp4OptionEffect> measure_nvfp4_options() {
    const auto [bias_nearest, rms_nearest] = sum_errors(false);
    const auto [bias_stochastic, rms_stochastic] = sum_errors(true);
    const auto [flushed_plain, error_plain] = wgrad_errors(false);
    const auto [flushed_hadamard, error_hadamard] = wgrad_errors(true);
    return {
        {"stochastic rounding of gradients", "sums over " + std::to_string(kTokens) + " tokens: mean signed error",
         bias_nearest, bias_stochastic},
        {"stochastic rounding of gradients", "the same sums: RMS error", rms_nearest, rms_stochastic},
        {"16x16 weight tiles", "W and W^T cast: elements that differ", transpose_differs(false),
         transpose_differs(true)},
        {"random Hadamard transform", "X with outlier tokens: elements flushed to zero", flushed_plain,
         flushed_hadamard},
        {"random Hadamard transform", "wgrad GEMM G^T X: relative RMS error", error_plain, error_hadamard},
    };
}

}  // namespace fp8lab::labs
