// SPDX-License-Identifier: Apache-2.0
// SwiGLU and its two gradients, each rounded to BF16 as the step stores them: one definition
// for the kernels that write them and the casts that compute them on the way to FP8, so that
// both give the same bits.
#pragma once

#include "gpu/src/kernels/bf16_quad.cuh"

namespace fp8lab::gpu::swiglu {

__device__ inline float sigmoid(float x) { return 1.0f / (1.0f + expf(-x)); }

// silu(gate) x up.
__device__ inline float value(float gate, float up) { return bf16_rounded(gate * sigmoid(gate) * up); }
// d/d gate of silu(gate) x up, times the output's gradient d; sg = sigmoid(gate).
__device__ inline float gate_grad_of(float d, float gate, float up, float sg) {
    return bf16_rounded(d * up * sg * (1.0f + gate * (1.0f - sg)));
}
__device__ inline float gate_grad(float d, float gate, float up) { return gate_grad_of(d, gate, up, sigmoid(gate)); }
// d/d up: silu(gate), times d.
__device__ inline float up_grad_of(float d, float gate, float sg) { return bf16_rounded(d * gate * sg); }
__device__ inline float up_grad(float d, float gate) { return up_grad_of(d, gate, sigmoid(gate)); }

}  // namespace fp8lab::gpu::swiglu
