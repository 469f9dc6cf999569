// SPDX-License-Identifier: Apache-2.0
// Tensors with the value distributions the labs discuss, generated from a seed: weights
// at initialisation, activations with outlier features, gradients spanning many decades.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace fp8lab::labs {

enum class TensorKind { Weights, Activations, Gradients };
TensorKind tensor_kind(const std::string& name);  // "weights", "activations", "gradients"
std::string tensor_description(TensorKind kind, int gradient_decades);

// n float32 values. Weights ~ N(0, 0.02^2). Activations ~ N(0, 1) with one element in
// 1000 an outlier 50 to 150 times larger. Gradients: random sign, magnitude log-uniform
// over `gradient_decades` decades centred on 1e-6. The same seed gives the same tensor.
std::vector<float> sample_tensor(TensorKind kind, std::size_t n, std::uint64_t seed, int gradient_decades = 8);

}  // namespace fp8lab::labs
