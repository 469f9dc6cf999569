// SPDX-License-Identifier: Apache-2.0
// Launchers of the transformer's kernels besides its GEMMs (plain C++17 types, like
// train_kernels.hpp): embedding, RMSNorm, rotary, attention's causal softmax, SwiGLU,
// cross-entropy, the residual adds, delayed scaling's step end and the gradient clip (fused
// attention is flash_attention.hpp; the other path's products are cuBLASLt's batched GEMMs).
// Each follows the CPU emulator's operation (emulator/models/transformer/transformer_ops.hpp) in float32; BF16
// tensors are void pointers.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

#include "gpu/src/kernels/kernels.hpp"

namespace fp8lab::gpu::transformer {

// x[r] = table[tokens[*step * rows + r]] (float32 rows of d).
void embed_forward(const float* table, const std::uint8_t* tokens, const int* step, int rows, int d, float* x,
                   cudaStream_t stream);
// table_grad[v] = sum of dx[r] over the rows r whose token is v, in row order: the host's
// per-step lists (offsets: 257 per step into positions: rows per step).
void embed_backward(const float* dx, const int* offsets, const int* positions, const int* step, int rows, int d,
                    float* table_grad, cudaStream_t stream);

// y = BF16(x / rms(x) * gain) row by row; inv_rms[r] = 1 / rms.
void rmsnorm_forward(const float* x, const float* gain, int rows, int d, void* y, float* inv_rms, cudaStream_t stream);
// out = a + BF16 y (the residual add, float32), then y_norm and inv_rms of out as rmsnorm_forward's.
void add_rmsnorm_forward(const float* a, const void* y, const float* gain, int rows, int d, float* out, void* normed,
                         float* inv_rms, cudaStream_t stream);
// dx += the RMSNorm's input gradient from dy (BF16), and dx16 (if not null) = BF16(dx);
// gain_grad = sum over rows of dy x inv_rms (partials of 16 rows each in `partials`,
// gain_partial_count(rows) x d floats, then added in order). d: a multiple of 4 up to 32768
// (the norms refuse others, naming them).
int gain_partial_count(int rows);
void rmsnorm_backward(const float* x, const float* gain, const float* inv_rms, const void* dy, int rows, int d,
                      float* dx, void* dx16, float* partials, float* gain_grad, cudaStream_t stream);

// Rotates channel pairs (i, i + head_size / 2) of `heads` heads of each row in place; x is
// BF16 with `ld` elements a row; row r is at position r mod sequence; inverse: backward.
void rotary(void* x, int ld, int rows, int heads, int head_size, int sequence, const float* cos, const float* sin,
            bool inverse, cudaStream_t stream);

// The softmax between attention's two batched GEMMs (tensor cores): p = BF16(causal
// softmax(s x scale)) over `count` rows of n scores, row r at query position r mod n; the
// entries above the diagonal 0. Its backward: ds = BF16(p (dp - sum_j p dp) x scale).
void causal_softmax(const float* s, int count, int n, float scale, void* p, cudaStream_t stream);
void causal_softmax_backward(const void* p, const float* dp, int count, int n, float scale, void* ds,
                             cudaStream_t stream);
// dst (rows x width BF16, rows `ld` elements apart) = src (rows x width float32, contiguous).
void store_columns(const float* src, int rows, int width, void* dst, int ld, cudaStream_t stream);

// act = BF16(silu(gate) up), gate and up the two halves of each row of gate_up (BF16).
void swiglu_forward(const void* gate_up, int rows, int f, void* act, cudaStream_t stream);
void swiglu_backward(const void* gate_up, const void* dact, int rows, int f, void* dgate_up, cudaStream_t stream);

// x += BF16 y (float32 x).
void add_bf16(float* x, const void* y, std::size_t n, cudaStream_t stream);
void add_f32(float* x, const float* y, std::size_t n, cudaStream_t stream);

// Cross-entropy over 256 logits a row (BF16): row_loss[r] (nats), dlogits = BF16((softmax -
// onehot) / rows); targets[*step * rows + r].
void cross_entropy(const void* logits, const std::uint8_t* targets, const int* step, int rows, float* row_loss,
                   void* dlogits, cudaStream_t stream);
// losses[*step] = the mean of row_loss, summed in row order; then ++*step.
void finish_step(const float* row_loss, int rows, int* step, float* losses, cudaStream_t stream);

// Delayed scaling's step end for `tensors` FP8 operands at once: tensor j's amax of this
// step (amax_bits[j], then cleared) enters its history (history + j * length) and sets its
// scale for the next step (the emulator's rule, docs/numerics.md §4; numerators[j] = the
// format's largest value / 2^margin).
void delayed_update_all(kernels::DeviceScaling* states, unsigned* amax_bits, float* history, const float* numerators,
                        int tensors, int length, bool algorithm_max, cudaStream_t stream);

// The gradient clip: the squares of n gradients summed into partials[slot ...] (one double
// per block, `blocks_for_squares(n)` of them), and the factor min(1, clip / sqrt(sum of all
// `count` partials in a fixed order)), which AdamW multiplies each gradient by as it reads
// it (AdamParams::grad_scale).
int blocks_for_squares(std::size_t n);
void sum_squares(const float* g, std::size_t n, double* partials, cudaStream_t stream);
void clip_factor(const double* partials, int count, float clip, float* factor, cudaStream_t stream);

}  // namespace fp8lab::gpu::transformer
