// SPDX-License-Identifier: Apache-2.0
// RMSNorm, rotary, causal attention, SwiGLU and cross-entropy, row-parallel and deterministic.
#include "emulator/models/transformer/transformer_ops.hpp"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <vector>

#include "emulator/formats/bf16_function_table.hpp"
#include "emulator/base/cpu_clones.hpp"
#include "emulator/base/fixed_order_dot.hpp"
#include "emulator/base/parallel.hpp"

namespace fp8lab::emu {
namespace {

// Rows per parallel chunk: each row is computed on its own, so any chunking gives the same bits.
constexpr std::size_t kRowChunk = 16;

void for_rows(int rows, const std::function<void(int)>& row) {
    parallel_for_chunks(std::size_t(rows), kRowChunk, [&](std::size_t, std::size_t b, std::size_t e) {
        for (std::size_t r = b; r < e; ++r) row(int(r));
    });
}

FP8LAB_INLINE float round_bf16(float x) {
    std::uint32_t u = std::bit_cast<std::uint32_t>(x);
    if ((u & 0x7F800000u) == 0x7F800000u) return x;  // Inf and NaN stay
    u += 0x7FFFu + ((u >> 16) & 1u);
    return std::bit_cast<float>(u & 0xFFFF0000u);
}

float sigmoid(float x) { return 1.0f / (1.0f + std::exp(-x)); }

// sigmoid at every BF16 value: where the gate is stored in BF16 (every precision but FP32),
// SwiGLU looks its sigmoid up (calling expf on each element was most of its time).
const float* bf16_sigmoid_table() {
    static const std::vector<float> table = bf16_function_table(sigmoid);
    return table.data();
}

// The sigmoid of each gate of a row: looked up for BF16 gates, computed otherwise.
void gate_sigmoids(const float* g, int f, const float* table, float* sg) {
    if (table)
        for (int c = 0; c < f; ++c) sg[c] = bf16_lookup(table, g[c]);
    else
        for (int c = 0; c < f; ++c) sg[c] = sigmoid(g[c]);
}

}  // namespace

void rmsnorm_forward(const float* x, const float* gain, int rows, int d, float* y, float* inv_rms) {
    for_rows(rows, [&](int r) {
        const float* xr = x + std::size_t(r) * d;
        const float inv = 1.0f / std::sqrt(dot_fixed_order(xr, xr, d) / float(d) + kRmsNormEpsilon);
        inv_rms[r] = inv;
        float* yr = y + std::size_t(r) * d;
        for (int c = 0; c < d; ++c) yr[c] = xr[c] * inv * gain[c];
    });
}

void rmsnorm_backward(const float* x, const float* gain, const float* inv_rms, const float* dy, int rows, int d,
                      float* dx, float* dgain) {
    // y_c = x_c r g_c with r = (mean(x^2) + eps)^-1/2: dx_c = r g_c dy_c - x_c r^3 / d * sum_j x_j g_j dy_j.
    for_rows(rows, [&](int r) {
        const std::size_t o = std::size_t(r) * d;
        const float inv = inv_rms[r];
        float s = 0;
        for (int c = 0; c < d; ++c) s += x[o + c] * gain[c] * dy[o + c];
        const float k = s * inv * inv * inv / float(d);
        for (int c = 0; c < d; ++c) dx[o + c] = inv * gain[c] * dy[o + c] - x[o + c] * k;
    });
    std::fill(dgain, dgain + d, 0.0f);
    for (int r = 0; r < rows; ++r) {
        const std::size_t o = std::size_t(r) * d;
        for (int c = 0; c < d; ++c) dgain[c] += dy[o + c] * x[o + c] * inv_rms[r];
    }
}

RotaryTable rotary_table(int sequence, int head_size, double base) {
    RotaryTable t;
    t.sequence = sequence;
    t.half = head_size / 2;
    t.cos.resize(std::size_t(sequence) * t.half);
    t.sin.resize(t.cos.size());
    for (int p = 0; p < sequence; ++p)
        for (int i = 0; i < t.half; ++i) {
            const double angle = double(p) * std::pow(base, -2.0 * double(i) / double(head_size));
            t.cos[std::size_t(p) * t.half + i] = float(std::cos(angle));
            t.sin[std::size_t(p) * t.half + i] = float(std::sin(angle));
        }
    return t;
}

void rotary_apply(float* x, int rows, int heads, int head_size, const RotaryTable& t, bool inverse) {
    const int half = head_size / 2;
    for_rows(rows, [&](int r) {
        const float* c = t.cos.data() + std::size_t(r % t.sequence) * half;
        const float* s = t.sin.data() + std::size_t(r % t.sequence) * half;
        for (int h = 0; h < heads; ++h) {
            float* v = x + (std::size_t(r) * heads + h) * head_size;
            for (int i = 0; i < half; ++i) {
                const float a = v[i], b = v[i + half], sn = inverse ? -s[i] : s[i];
                v[i] = a * c[i] - b * sn;
                v[i + half] = b * c[i] + a * sn;
            }
        }
    });
}

namespace {

// One head's operand rows, copied (and rounded to BF16 when asked) into a contiguous block.
FP8LAB_INLINE void gather_head(const float* src, int width, int column, int first_row, int rows, int head_size,
                               bool bf16, float* dst) {
    for (int i = 0; i < rows; ++i) {
        const float* from = src + std::size_t(first_row + i) * width + column;
        for (int c = 0; c < head_size; ++c) dst[std::size_t(i) * head_size + c] = bf16 ? round_bf16(from[c]) : from[c];
    }
}

}  // namespace

namespace {

// One (sequence, head) of the forward pass, compiled per x86-64 level: its dot products and
// row updates vectorise at the machine's width with the same bits (-ffp-contract=off).
FP8LAB_INLINE void forward_head_body(const AttentionShape& s, const float* q, const float* k, const float* v, bool bf16,
                                     std::size_t task, float* probs, float* out) {
    const int n = s.sequence, hs = s.head_size, group = s.heads / s.kv_heads;
    const int qw = s.heads * hs, kw = s.kv_heads * hs;
    const float scale = 1.0f / std::sqrt(float(hs));
    const int seq = int(task) / s.heads, h = int(task) % s.heads, kvh = h / group, row0 = seq * n;
    std::vector<float> qh(std::size_t(n) * hs), kh(qh.size()), vh(qh.size()), o(hs);
    gather_head(q, qw, h * hs, row0, n, hs, bf16, qh.data());
    gather_head(k, kw, kvh * hs, row0, n, hs, bf16, kh.data());
    gather_head(v, kw, kvh * hs, row0, n, hs, bf16, vh.data());
    float* p = probs + task * std::size_t(n) * n;
    for (int i = 0; i < n; ++i) {
        float* pi = p + std::size_t(i) * n;
        float top = -INFINITY;
        for (int j = 0; j <= i; ++j) {
            pi[j] = dot_fixed_order(qh.data() + std::size_t(i) * hs, kh.data() + std::size_t(j) * hs, hs) * scale;
            top = std::max(top, pi[j]);
        }
        float sum = 0;
        for (int j = 0; j <= i; ++j) sum += pi[j] = std::exp(pi[j] - top);
        for (int j = 0; j <= i; ++j) pi[j] /= sum;
        std::fill(pi + i + 1, pi + n, 0.0f);
        std::fill(o.begin(), o.end(), 0.0f);
        for (int j = 0; j <= i; ++j) {
            const float pij = bf16 ? round_bf16(pi[j]) : pi[j];
            const float* vj = vh.data() + std::size_t(j) * hs;
            for (int c = 0; c < hs; ++c) o[c] += pij * vj[c];
        }
        float* dst = out + std::size_t(row0 + i) * qw + std::size_t(h) * hs;
        for (int c = 0; c < hs; ++c) dst[c] = bf16 ? round_bf16(o[c]) : o[c];
    }
}
FP8LAB_CPU_DISPATCH(void, forward_head,
                    (const AttentionShape& s, const float* q, const float* k, const float* v, bool bf16,
                     std::size_t task, float* probs, float* out),
                    (s, q, k, v, bf16, task, probs, out), forward_head_body)

}  // namespace

void attention_forward(const AttentionShape& s, const float* q, const float* k, const float* v, bool bf16, float* probs,
                       float* out) {
    parallel_for_chunks(std::size_t(s.sequences) * s.heads, 1, [&](std::size_t task, std::size_t, std::size_t) {
        forward_head(s, q, k, v, bf16, task, probs, out);
    });
}

namespace {

// One (sequence, key/value head) of the backward pass: its query heads in order add into
// its dk and dv. Compiled per x86-64 level as the forward head is.
FP8LAB_INLINE void backward_head_body(const AttentionShape& s, const float* q, const float* k, const float* v,
                                      const float* probs, const float* dout, bool bf16, std::size_t task, float* dq,
                                      float* dk, float* dv) {
    const int n = s.sequence, hs = s.head_size, group = s.heads / s.kv_heads;
    const int qw = s.heads * hs, kw = s.kv_heads * hs;
    const float scale = 1.0f / std::sqrt(float(hs));
    const int seq = int(task) / s.kv_heads, kvh = int(task) % s.kv_heads, row0 = seq * n;
    const std::size_t block = std::size_t(n) * hs;
    std::vector<float> qh(block), kh(block), vh(block), doh(block), dkh(block, 0.0f), dvh(block, 0.0f), dqh(block),
        dp(n), ds(n);
    gather_head(k, kw, kvh * hs, row0, n, hs, bf16, kh.data());
    gather_head(v, kw, kvh * hs, row0, n, hs, bf16, vh.data());
    for (int h = kvh * group; h < (kvh + 1) * group; ++h) {
        gather_head(q, qw, h * hs, row0, n, hs, bf16, qh.data());
        gather_head(dout, qw, h * hs, row0, n, hs, bf16, doh.data());
        const float* p = probs + (std::size_t(seq) * s.heads + h) * std::size_t(n) * n;
        std::fill(dqh.begin(), dqh.end(), 0.0f);
        for (int i = 0; i < n; ++i) {
            const float* pi = p + std::size_t(i) * n;
            const float* doi = doh.data() + std::size_t(i) * hs;
            // dP = dO V^T; dS = P (dP - sum_j P dP); dV += P^T dO.
            float row_sum = 0;
            for (int j = 0; j <= i; ++j) {
                dp[j] = dot_fixed_order(doi, vh.data() + std::size_t(j) * hs, hs);
                row_sum += pi[j] * dp[j];
            }
            for (int j = 0; j <= i; ++j) {
                const float pij = bf16 ? round_bf16(pi[j]) : pi[j];
                float* dvj = dvh.data() + std::size_t(j) * hs;
                for (int c = 0; c < hs; ++c) dvj[c] += pij * doi[c];
                const float g = pi[j] * (dp[j] - row_sum) * scale;
                ds[j] = bf16 ? round_bf16(g) : g;
            }
            float* dqi = dqh.data() + std::size_t(i) * hs;
            const float* qi = qh.data() + std::size_t(i) * hs;
            for (int j = 0; j <= i; ++j) {
                const float* kj = kh.data() + std::size_t(j) * hs;
                float* dkj = dkh.data() + std::size_t(j) * hs;
                for (int c = 0; c < hs; ++c) {
                    dqi[c] += ds[j] * kj[c];
                    dkj[c] += ds[j] * qi[c];
                }
            }
        }
        for (int i = 0; i < n; ++i)
            std::memcpy(dq + std::size_t(row0 + i) * qw + std::size_t(h) * hs, dqh.data() + std::size_t(i) * hs,
                        sizeof(float) * std::size_t(hs));
    }
    for (int i = 0; i < n; ++i) {
        std::memcpy(dk + std::size_t(row0 + i) * kw + std::size_t(kvh) * hs, dkh.data() + std::size_t(i) * hs,
                    sizeof(float) * std::size_t(hs));
        std::memcpy(dv + std::size_t(row0 + i) * kw + std::size_t(kvh) * hs, dvh.data() + std::size_t(i) * hs,
                    sizeof(float) * std::size_t(hs));
    }
}
FP8LAB_CPU_DISPATCH(void, backward_head,
                    (const AttentionShape& s, const float* q, const float* k, const float* v, const float* probs,
                     const float* dout, bool bf16, std::size_t task, float* dq, float* dk, float* dv),
                    (s, q, k, v, probs, dout, bf16, task, dq, dk, dv), backward_head_body)

}  // namespace

void attention_backward(const AttentionShape& s, const float* q, const float* k, const float* v, const float* probs,
                        const float* dout, bool bf16, float* dq, float* dk, float* dv) {
    parallel_for_chunks(std::size_t(s.sequences) * s.kv_heads, 1, [&](std::size_t task, std::size_t, std::size_t) {
        backward_head(s, q, k, v, probs, dout, bf16, task, dq, dk, dv);
    });
}

void swiglu_forward(const float* gate_up, int rows, int f, float* out, bool gate_in_bf16) {
    const float* table = gate_in_bf16 ? bf16_sigmoid_table() : nullptr;
    for_rows(rows, [&](int r) {
        const float* g = gate_up + std::size_t(r) * 2 * f;
        const float* u = g + f;
        float* o = out + std::size_t(r) * f;
        gate_sigmoids(g, f, table, o);  // the row's sigmoids, then the products in place
        for (int c = 0; c < f; ++c) o[c] = g[c] * o[c] * u[c];
    });
}

void swiglu_backward(const float* gate_up, const float* dout, int rows, int f, float* dgate_up, bool gate_in_bf16) {
    const float* table = gate_in_bf16 ? bf16_sigmoid_table() : nullptr;
    for_rows(rows, [&](int r) {
        const float* g = gate_up + std::size_t(r) * 2 * f;
        const float* u = g + f;
        const float* d = dout + std::size_t(r) * f;
        float* dg = dgate_up + std::size_t(r) * 2 * f;
        float* du = dg + f;
        gate_sigmoids(g, f, table, dg);  // dg holds the sigmoids until its own values replace them
        for (int c = 0; c < f; ++c) {
            const float sg = dg[c];
            du[c] = d[c] * g[c] * sg;
            dg[c] = d[c] * u[c] * sg * (1.0f + g[c] * (1.0f - sg));
        }
    });
}

double cross_entropy(const float* logits, const std::uint8_t* targets, int rows, int vocab, float* dlogits,
                     float scale) {
    std::vector<double> row_loss(static_cast<std::size_t>(rows));
    for_rows(rows, [&](int r) {
        const float* z = logits + std::size_t(r) * vocab;
        const float top = *std::max_element(z, z + vocab);
        float sum = 0;
        if (!dlogits) {
            for (int c = 0; c < vocab; ++c) sum += std::exp(z[c] - top);
            row_loss[std::size_t(r)] = double(std::log(sum)) - double(z[targets[r]] - top);
            return;
        }
        // The gradient's row holds the exponentials until it is written: each is computed once.
        float* d = dlogits + std::size_t(r) * vocab;
        for (int c = 0; c < vocab; ++c) sum += d[c] = std::exp(z[c] - top);
        row_loss[std::size_t(r)] = double(std::log(sum)) - double(z[targets[r]] - top);
        const float k = scale / float(rows);
        for (int c = 0; c < vocab; ++c) d[c] = (d[c] / sum - (c == targets[r] ? 1.0f : 0.0f)) * k;
    });
    double total = 0;
    for (const double l : row_loss) total += l;
    return total / double(rows);
}

}  // namespace fp8lab::emu
