// SPDX-License-Identifier: Apache-2.0
// What the GPU cast suites share: the edge tensor, the transpose, and the block-scaled and
// per-tensor cast cases that both the host check of the kernels' arithmetic
// (vector_quantize_test) and the device check (gpu_emulated_test) run.
#pragma once

#include <cmath>
#include <cstdint>
#include <vector>

#include "emulator/training/experiment.hpp"
#include "tests/gpu/hard_tensor.hpp"

namespace fp8lab::test {

inline std::vector<float> transposed(const std::vector<float>& x, std::size_t rows, std::size_t cols) {
    std::vector<float> t(x.size());
    for (std::size_t r = 0; r < rows; ++r)
        for (std::size_t c = 0; c < cols; ++c) t[c * rows + r] = x[r * cols + c];
    return t;
}

// hard_tensor's cases times `magnitude`, with whole blocks at the scale rules' edges, both
// down columns (16 rows) and along rows (32 columns): all zero, amax at a power of two and
// one ulp either side, 957 (a mantissa past E4M3's), subnormal and tiny amaxes (NVFP4
// block scales that round to zero), 2688 (NVFP4's 448 x 6), 2^-126 and 2^127; and from
// row 12 three whole rows for per-row scales: all zero, an amax below torchao's 1e-12
// floor, and one just above it.
inline std::vector<float> edge_tensor(std::size_t rows, std::size_t cols, std::uint64_t seed, float magnitude) {
    std::vector<float> x = hard_tensor(rows * cols, seed);
    for (float& v : x) v *= magnitude;
    const float amaxes[] = {0.0f,  448.0f,  std::nextafter(448.0f, 0.0f), std::nextafter(448.0f, 1e9f), 957.0f, 1e-40f,
                            1e-7f, 2688.0f, std::ldexp(1.0f, -126),       std::ldexp(1.0f, 127)};
    const std::size_t kinds = sizeof amaxes / sizeof amaxes[0];
    for (std::size_t b = 0; b < kinds && (b + 1) * 16 <= rows && b + 1 < cols; ++b)
        for (std::size_t j = 0; j < 16; ++j) x[(b * 16 + j) * cols + 1 + b] = amaxes[b] * float(j + 1) / 16.0f;
    for (std::size_t b = 0; b < kinds && b + 2 < rows; ++b)
        for (std::size_t j = 0; j < 32 && j < cols; ++j)
            x[(b + 2) * cols + j] = amaxes[b] * float(j + 1) / 32.0f * (j % 2 ? -1.0f : 1.0f);
    if (rows > 14)
        for (std::size_t c = 0; c < cols; ++c) {
            x[12 * cols + c] = 0.0f;
            x[13 * cols + c] = 1e-20f * float(c % 7) - 3e-20f;
            x[14 * cols + c] = std::ldexp(1.0f, -40) * float(c % 5);
        }
    return x;
}

// One cast of a GEMM operand: the numerics, the role, whether the cast runs down the
// columns of the stored tensor (the transpose a backward GEMM reads), whether it feeds the
// weight gradient, the step and the tensor's name.
struct CastCase {
    emu::Numerics numerics;
    emu::TensorRole role;
    bool columns, wgrad;
    std::uint64_t step;
    const char* tensor;
};

// Blockwise and rowwise (each role, both directions) and per-tensor scaling with every
// element format, scaled and unscaled, stochastic gradients included.
inline std::vector<CastCase> block_and_per_tensor_cases() {
    std::vector<CastCase> cases;
    for (const emu::Fp8Recipe r : {emu::Fp8Recipe::Blockwise, emu::Fp8Recipe::Rowwise}) {
        emu::Experiment e;
        emu::set_recipe(e, r);
        emu::Numerics n = e.numerics;
        n.rounding.gradient = emu::RoundingMode::Stochastic;
        cases.push_back({n, emu::TensorRole::Input, false, false, 1, "fc1.input"});
        cases.push_back({n, emu::TensorRole::Input, true, true, 1, "fc1.input"});
        cases.push_back({n, emu::TensorRole::Weight, false, false, 1, "fc1.weight"});
        cases.push_back({n, emu::TensorRole::Weight, true, false, 1, "fc1.weight"});
        cases.push_back({n, emu::TensorRole::GradOutput, false, false, 1, "fc1.grad_output"});
        cases.push_back({n, emu::TensorRole::GradOutput, true, true, 1, "fc1.grad_output"});
    }
    const emu::Format* elements[] = {&emu::e4m3(), &emu::e5m2(), &emu::e3m2(), &emu::e2m3(), &emu::e2m1()};
    for (const emu::Format* f : elements)
        for (const bool scaling : {true, false}) {
            emu::Numerics n;
            n.recipe = emu::Fp8Recipe::Current;
            n.scaling = scaling;
            n.formats = {f, f, f};
            n.rounding.gradient = emu::RoundingMode::Stochastic;
            n.saturation = scaling ? emu::Saturation::Finite : emu::Saturation::None;
            cases.push_back({n, emu::TensorRole::Input, false, false, 6, "fc1.input"});
            cases.push_back({n, emu::TensorRole::GradOutput, false, false, 6, "fc1.grad_output"});
        }
    return cases;
}

}  // namespace fp8lab::test
