// SPDX-License-Identifier: Apache-2.0
// The GPU transformer's causal grouped-query attention, two ways: fused (flash_attention.cu,
// S and P in registers) or cuBLASLt's batched GEMMs per query head with the causal-softmax
// kernels between them (S, P, dP and dS through memory). Included by gpu_transformer.cpp alone.
#pragma once

#include <cuda_bf16.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <memory>

#include "gpu/src/kernels/flash_attention.hpp"
#include "gpu/src/step/mlp_step.hpp"
#include "gpu/src/kernels/transformer_kernels.hpp"
#include "gpu/tensor_ops.hpp"

namespace fp8lab::gpu::transformer {

using detail::DeviceBuffer;
using detail::Epilogue;
using detail::LtMatmul;
using detail::MatmulBatch;
using detail::MatmulOperand;
using detail::Stored;
using Bf16 = DeviceBuffer<__nv_bfloat16>;

// What a block's attention keeps from its forward pass for its backward: one of the two.
struct AttentionSaved {
    __nv_bfloat16* probs;  // GemmAttention: P, heads x sequences x n x n
    float* lse;            // FlashAttention: each row's log-sum-exp, heads x rows
};

// Causal grouped-query attention over `sequences` sequences of n rows; q, k and v are column
// blocks of one BF16 buffer of qkv_w columns (heads, kv_heads and kv_heads heads of hs).
class Attention {
  public:
    Attention(int sequences, int n, int heads, int kv_heads, int hs, int qkv_w)
        : sequences_(sequences), n_(n), heads_(heads), kv_heads_(kv_heads), hs_(hs), qkv_w_(qkv_w) {}
    virtual ~Attention() = default;
    // The sizes of AttentionSaved's two buffers (one of them 0).
    virtual std::size_t probs_elements() const = 0;
    virtual std::size_t lse_elements() const = 0;
    // out (rows x heads * hs) from q|k|v (one BF16 buffer of qkv_w columns).
    virtual void forward(const __nv_bfloat16* qkv, AttentionSaved saved, __nv_bfloat16* out, cudaStream_t s) = 0;
    // dqkv's q, k and v blocks from dout (rows x heads * hs); out is the forward's.
    virtual void backward(const __nv_bfloat16* qkv, const __nv_bfloat16* out, AttentionSaved saved,
                          const __nv_bfloat16* dout, __nv_bfloat16* dqkv, cudaStream_t s) = 0;

  protected:
    int sequences_, n_, heads_, kv_heads_, hs_, qkv_w_;
};

// Fused attention: each query block's softmax online in registers, P rounded to BF16 for
// P V, unnormalised; the backward recomputes P from the saved log-sum-exp and passes dS from
// its dK/dV kernel to its dQ kernel through a buffer of at most scores_budget bytes (as many
// sequences at a time as fit; where not even one fits, or the budget is 0, dQ recomputes P
// and dP instead).
class FlashAttention final : public Attention {
  public:
    FlashAttention(int sequences, int n, int heads, int kv_heads, int hs, int qkv_w,
                   std::size_t scores_budget = kFusedAttentionScoresBudget)
        : Attention(sequences, n, heads, kv_heads, hs, qkv_w),
          delta_(lse_elements()),
          scores_sequences_(int(
              std::min<std::size_t>(std::size_t(sequences), scores_budget / flash_attention_scores_bytes(n, heads)))),
          scores_(std::size_t(scores_sequences_) * flash_attention_scores_bytes(n, heads)) {
        flash_attention_configure(hs);
        if (scores_sequences_ > 0) {
            FP8LAB_CUDA_CHECK(cudaMemset(scores_.ptr, 0, scores_.count));
            // The zeros must be there before the first backward, whose stream (non-blocking)
            // does not wait for the default stream's memset.
            FP8LAB_CUDA_CHECK(cudaDeviceSynchronize());
        }
    }
    std::size_t probs_elements() const override { return 0; }
    std::size_t lse_elements() const override { return std::size_t(heads_) * sequences_ * n_; }
    void forward(const __nv_bfloat16* qkv, AttentionSaved saved, __nv_bfloat16* out, cudaStream_t s) override {
        flash_attention_forward(qkv, qkv_w_, sequences_, n_, heads_, kv_heads_, hs_, out, saved.lse, s);
    }
    void backward(const __nv_bfloat16* qkv, const __nv_bfloat16* out, AttentionSaved saved, const __nv_bfloat16* dout,
                  __nv_bfloat16* dqkv, cudaStream_t s) override {
        flash_attention_backward(qkv, qkv_w_, out, dout, saved.lse, delta_.ptr, sequences_, n_, heads_, kv_heads_, hs_,
                                 dqkv, scores_sequences_ > 0 ? scores_.ptr : nullptr, scores_sequences_, s);
    }
    // How many sequences' dS the backward holds at a time (0: dQ recomputes them).
    int scores_sequences() const { return scores_sequences_; }

  private:
    DeviceBuffer<float> delta_;  // rowsum(dO o O) per head and row, the backward's scratch
    int scores_sequences_;
    DeviceBuffer<std::uint8_t> scores_;  // dS^T per sequence and head, scores_sequences_ at a time
};

// Causal grouped-query attention on the tensor cores: per query head, batched over the
// sequences, S = Q K^T (float32), P = BF16(softmax(S / sqrt(head))) with the causal mask,
// O = P V; the backward dP = dO V^T, dS = P (dP - rowsum(P dP)) / sqrt(head), dQ = dS K,
// and dK, dV summed over the key/value head's query heads in float32 (dK = dS^T Q, dV =
// P^T dO). q, k and v are column blocks of one BF16 buffer of qkv_w columns.
class GemmAttention final : public Attention {
  public:
    GemmAttention(cublasLtHandle_t lt, int sequences, int n, int heads, int kv_heads, int hs, int qkv_w,
                  void* workspace)
        : Attention(sequences, n, heads, kv_heads, hs, qkv_w),
          workspace_(workspace),
          scores_(std::size_t(sequences) * n * n),
          grad_(std::size_t(sequences) * n * n),
          dk_(std::size_t(sequences) * n * hs),
          dv_(std::size_t(sequences) * n * hs) {
        const MatmulOperand as{CUDA_R_16BF, Stored::AsIs}, tr{CUDA_R_16BF, Stored::Transposed};
        const long long nn = (long long)n * n, nq = (long long)n * qkv_w, no = (long long)n * heads * hs;
        const long long nh = (long long)n * hs;
        const int ow = heads * hs;
        const auto make = [&](int m, int nn_, int k, MatmulOperand a, MatmulOperand b, cudaDataType_t out,
                              MatmulBatch batch) {
            batch.count = sequences;
            return std::make_unique<LtMatmul>(lt, m, nn_, k, a, b, out, false, nullptr, Epilogue{}, batch);
        };
        scores_gemm_ = make(n, n, hs, as, tr, CUDA_R_32F, {1, nq, nq, nn, qkv_w, qkv_w, n, false});
        pv_gemm_ = make(n, hs, n, as, as, CUDA_R_16BF, {1, nn, nq, no, n, qkv_w, ow, false});
        dp_gemm_ = make(n, n, hs, as, tr, CUDA_R_32F, {1, no, nq, nn, ow, qkv_w, n, false});
        dq_gemm_ = make(n, hs, n, as, as, CUDA_R_16BF, {1, nn, nq, nq, n, qkv_w, qkv_w, false});
        for (const bool add : {false, true}) {
            dk_gemm_[add] = make(n, hs, n, tr, as, CUDA_R_32F, {1, nn, nq, nh, n, qkv_w, hs, add});
            dv_gemm_[add] = make(n, hs, n, tr, as, CUDA_R_32F, {1, nn, no, nh, n, ow, hs, add});
        }
    }
    std::size_t probs_elements() const override { return std::size_t(heads_) * sequences_ * n_ * n_; }
    std::size_t lse_elements() const override { return 0; }

    void forward(const __nv_bfloat16* qkv, AttentionSaved saved, __nv_bfloat16* out, cudaStream_t s) override {
        __nv_bfloat16* probs = saved.probs;
        const float scale = 1.0f / std::sqrt(float(hs_));
        for (int h = 0; h < heads_; ++h) {
            const __nv_bfloat16 *q = qkv + std::size_t(h) * hs_, *k = key(qkv, h), *v = value(qkv, h);
            __nv_bfloat16* p = probs + std::size_t(h) * sequences_ * n_ * n_;
            scores_gemm_->run(q, k, scores_.ptr, workspace_, s);
            transformer::causal_softmax(scores_.ptr, sequences_ * n_, n_, scale, p, s);
            pv_gemm_->run(p, v, out + std::size_t(h) * hs_, workspace_, s);
        }
    }
    void backward(const __nv_bfloat16* qkv, const __nv_bfloat16*, AttentionSaved saved, const __nv_bfloat16* dout,
                  __nv_bfloat16* dqkv, cudaStream_t s) override {
        const __nv_bfloat16* probs = saved.probs;
        const float scale = 1.0f / std::sqrt(float(hs_));
        const int group = heads_ / kv_heads_;
        for (int g = 0; g < kv_heads_; ++g) {
            for (int h = g * group; h < (g + 1) * group; ++h) {
                const __nv_bfloat16 *q = qkv + std::size_t(h) * hs_, *k = key(qkv, h), *v = value(qkv, h);
                const __nv_bfloat16* p = probs + std::size_t(h) * sequences_ * n_ * n_;
                const __nv_bfloat16* d_o = dout + std::size_t(h) * hs_;
                dp_gemm_->run(d_o, v, scores_.ptr, workspace_, s);
                transformer::causal_softmax_backward(p, scores_.ptr, sequences_ * n_, n_, scale, grad_.ptr, s);
                dq_gemm_->run(grad_.ptr, k, dqkv + std::size_t(h) * hs_, workspace_, s);
                const bool add = h > g * group;
                dk_gemm_[add]->run(grad_.ptr, q, dk_.ptr, workspace_, s);
                dv_gemm_[add]->run(p, d_o, dv_.ptr, workspace_, s);
            }
            const int rows = sequences_ * n_, kw = kv_heads_ * hs_;
            transformer::store_columns(dk_.ptr, rows, hs_, dqkv + heads_ * hs_ + std::size_t(g) * hs_, qkv_w_, s);
            transformer::store_columns(dv_.ptr, rows, hs_, dqkv + heads_ * hs_ + kw + std::size_t(g) * hs_, qkv_w_, s);
        }
    }

  private:
    const __nv_bfloat16* key(const __nv_bfloat16* qkv, int h) const {
        return qkv + std::size_t(heads_) * hs_ + std::size_t(h / (heads_ / kv_heads_)) * hs_;
    }
    const __nv_bfloat16* value(const __nv_bfloat16* qkv, int h) const {
        return key(qkv, h) + std::size_t(kv_heads_) * hs_;
    }
    void* workspace_;
    DeviceBuffer<float> scores_;  // S, then dP: one head at a time
    Bf16 grad_;                   // dS
    DeviceBuffer<float> dk_, dv_;
    std::unique_ptr<LtMatmul> scores_gemm_, pv_gemm_, dp_gemm_, dq_gemm_, dk_gemm_[2], dv_gemm_[2];
};

}  // namespace fp8lab::gpu::transformer
