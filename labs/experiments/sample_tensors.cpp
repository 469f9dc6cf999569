// SPDX-License-Identifier: Apache-2.0
// Seeded tensor generators; a counter hash keeps them identical on every platform
// (std::normal_distribution is not specified bit for bit).
#include "labs/experiments/sample_tensors.hpp"
#include "emulator/base/quoted_input.hpp"

#include <cmath>
#include <stdexcept>

namespace fp8lab::labs {
namespace {

std::uint64_t splitmix(std::uint64_t x) {
    x += 0x9E3779B97F4A7C15ull;
    x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
    x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
    return x ^ (x >> 31);
}

// Uniform in (0, 1): 53 bits, never 0.
double uniform(std::uint64_t seed, std::uint64_t i, std::uint64_t stream) {
    return (double(splitmix(seed * 0x100000001B3ull + i * 4 + stream) >> 11) + 0.5) * 0x1p-53;
}

double normal(std::uint64_t seed, std::uint64_t i) {
    return std::sqrt(-2 * std::log(uniform(seed, i, 0))) * std::cos(2 * M_PI * uniform(seed, i, 1));
}

}  // namespace

TensorKind tensor_kind(const std::string& name) {
    if (name == "weights") return TensorKind::Weights;
    if (name == "activations") return TensorKind::Activations;
    if (name == "gradients") return TensorKind::Gradients;
    throw std::invalid_argument("unknown tensor kind " + emu::quoted_input(name) +
                                " (weights, activations, gradients)");
}

std::string tensor_description(TensorKind kind, int decades) {
    switch (kind) {
    case TensorKind::Weights:
        return "weights ~ N(0, 0.02^2)";
    case TensorKind::Activations:
        return "activations ~ N(0, 1), 0.1% outliers at 50-150x";
    case TensorKind::Gradients:
        return "gradients over " + std::to_string(decades) + " decades around 1e-6";
    }
    return {};
}

std::vector<float> sample_tensor(TensorKind kind, std::size_t n, std::uint64_t seed, int decades) {
    std::vector<float> x(n);
    for (std::size_t i = 0; i < n; ++i) {
        switch (kind) {
        case TensorKind::Weights:
            x[i] = float(0.02 * normal(seed, i));
            break;
        case TensorKind::Activations: {
            double v = normal(seed, i);
            if (uniform(seed, i, 2) < 1e-3) v *= 50 + 100 * uniform(seed, i, 3);
            x[i] = float(v);
            break;
        }
        case TensorKind::Gradients: {
            const double exponent = -6 + decades * (uniform(seed, i, 2) - 0.5);
            x[i] = float((uniform(seed, i, 3) < 0.5 ? -1 : 1) * std::pow(10.0, exponent));
            break;
        }
        }
    }
    return x;
}

}  // namespace fp8lab::labs
