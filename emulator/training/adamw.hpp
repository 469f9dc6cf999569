// SPDX-License-Identifier: Apache-2.0
// AdamW on float32 master weights and the global-norm gradient clip, for both CPU trainers.
#pragma once

#include <cstddef>
#include <span>

namespace fp8lab::emu {

struct AdamStep {
    float beta1, beta2, epsilon, learning_rate, weight_decay, bc1, bc2, clip;
};

// AdamW on n parameters, chunks in parallel (every element on its own: the serial loop's
// bits for any thread count). decay: the decoupled weight decay applies (weights, not
// biases or gains). Returns the new weights' amax (max |w|, NaN skipped, Inf kept, as a
// cast finds it), which the next step's per-tensor current scaling takes instead of a
// pass of its own (Operand::amax).
float adamw(const AdamStep& a, float* w, float* m, float* v, const float* g, std::size_t n, bool decay);

// The global-norm clip factor over the gradients in order: clip / ||g|| when ||g|| > clip,
// else 1. The norm is the float64 sum of g^2 in parameter order (its rounding decides the
// factor's bits).
float clip_factor(std::span<const std::span<const float>> gradients, float clip);

}  // namespace fp8lab::emu
