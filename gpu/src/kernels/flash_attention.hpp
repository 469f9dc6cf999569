// SPDX-License-Identifier: Apache-2.0
// Launchers of the fused causal grouped-query attention (flash_attention.cu): S and P stay in
// registers; the backward hands dS from its dK/dV kernel to its dQ kernel through memory
// where a buffer is given. Plain C++17 types, like transformer_kernels.hpp.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>

namespace fp8lab::gpu::transformer {

// The head sizes the fused kernels are compiled for (their tiles hold whole heads).
bool flash_attention_supports(int head_size);
// Lets the kernels of this head size use more than 48 KiB of shared memory; once, before
// any launch (and outside a graph capture).
void flash_attention_configure(int head_size);

// qkv: BF16 rows of qkv_w elements, `sequences` sequences of n rows each; query head h at
// columns h * head_size, key and value head g at heads * head_size + g * head_size and
// (heads + kv_heads) * head_size + g * head_size. Writes out (rows x heads * head_size,
// BF16) = causal softmax(Q K^T / sqrt(head_size)) V per query head, P rounded to BF16 for
// the second product, and lse (heads x rows, float32): each row's log2 of the softmax's
// denominator plus its largest scaled score, in the log2 domain the kernels use.
void flash_attention_forward(const void* qkv, int qkv_w, int sequences, int n, int heads, int kv_heads, int head_size,
                             void* out, float* lse, cudaStream_t stream);
// The bytes of the backward's scores buffer per sequence: dS^T of each query head, a square
// of n rounded up to 128 (BF16).
std::size_t flash_attention_scores_bytes(int n, int heads);
// dqkv's q, k and v columns (the same layout as qkv) from dout: delta (heads x rows,
// float32, scratch) = rowsum(dout o out), then dK and dV per key block (summed over the
// group's query heads and the query blocks in a fixed order, recomputing P from lse) and dQ
// per query block. With `scores` (scores_sequences x flash_attention_scores_bytes, zeros
// when first used: the kernels never write most tiles past the causal diagonal), the dK/dV
// kernel stores dS and the dQ kernel reads it, scores_sequences sequences at a time; without
// it (null) the dQ kernel recomputes P and dP, two products more. Every element of dqkv's
// three blocks is written; no atomics, so the same inputs give the same bits.
void flash_attention_backward(const void* qkv, int qkv_w, const void* out, const void* dout, const float* lse,
                              float* delta, int sequences, int n, int heads, int kv_heads, int head_size, void* dqkv,
                              void* scores, int scores_sequences, cudaStream_t stream);

}  // namespace fp8lab::gpu::transformer
