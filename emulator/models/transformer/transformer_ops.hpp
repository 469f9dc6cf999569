// SPDX-License-Identifier: Apache-2.0
// The transformer's operations besides its linear layers, forward and backward, in float32
// in a fixed order (rows in parallel, each row's sums serial): RMSNorm, rotary position
// embedding, grouped-query causal attention, SwiGLU and the cross-entropy.
#pragma once

#include <cstdint>
#include <vector>

namespace fp8lab::emu {

inline constexpr float kRmsNormEpsilon = 1e-5f;

// y = x / sqrt(mean(x^2) + eps) * gain over each row of d; inv_rms[r] keeps 1 / rms.
void rmsnorm_forward(const float* x, const float* gain, int rows, int d, float* y, float* inv_rms);
// dx from dy; dgain (d values) is set to the sum over rows, in row order.
void rmsnorm_backward(const float* x, const float* gain, const float* inv_rms, const float* dy, int rows, int d,
                      float* dx, float* dgain);

// cos and sin of position p times frequency i = base^(-2i / head_size), p < sequence, i <
// head_size / 2 (computed in float64, rounded once).
struct RotaryTable {
    int sequence = 0, half = 0;
    std::vector<float> cos, sin;  // sequence x half
};
RotaryTable rotary_table(int sequence, int head_size, double base = 10000.0);
// Rotates channel pairs (i, i + head_size / 2) of every head of every row in place; row r
// is at position r mod sequence. inverse: the transposed rotation (the backward pass).
void rotary_apply(float* x, int rows, int heads, int head_size, const RotaryTable& table, bool inverse);

// Causal attention over `sequences` sequences of `sequence` rows; q is rows x heads *
// head_size, k and v rows x kv_heads * head_size, query head h reads key/value head
// h / (heads / kv_heads). bf16: q, k, v, the probabilities (and, backward, the output
// gradient and the scores' gradient) are rounded to BF16 before each product, as BF16
// batched GEMMs see them; the products accumulate in float32.
struct AttentionShape {
    int sequences, sequence, heads, kv_heads, head_size;
    int rows() const { return sequences * sequence; }
};
// out: rows x heads * head_size; probs: sequences x heads x sequence x sequence (kept for
// the backward pass; the masked entries are 0).
void attention_forward(const AttentionShape& s, const float* q, const float* k, const float* v, bool bf16, float* probs,
                       float* out);
void attention_backward(const AttentionShape& s, const float* q, const float* k, const float* v, const float* probs,
                        const float* dout, bool bf16, float* dq, float* dk, float* dv);

// out = silu(gate) * up, gate and up the two halves of each row of gate_up (rows x 2f).
// gate_in_bf16: every gate is a BF16 value (stored so), and its sigmoid is looked up in a
// table of all 65536: the same bits, faster.
void swiglu_forward(const float* gate_up, int rows, int f, float* out, bool gate_in_bf16);
void swiglu_backward(const float* gate_up, const float* dout, int rows, int f, float* dgate_up, bool gate_in_bf16);

// The mean over rows of -ln softmax(logits)[target] (nats; summed in float64 in row order);
// dlogits (when not null) = scale * (softmax - onehot) / rows.
double cross_entropy(const float* logits, const std::uint8_t* targets, int rows, int vocab, float* dlogits,
                     float scale = 1.0f);

}  // namespace fp8lab::emu
