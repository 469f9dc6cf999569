// SPDX-License-Identifier: Apache-2.0
// Fused causal grouped-query attention on the tensor cores (FlashAttention-2's tiling, written
// for fp8lab): BF16 mma.sync with float32 accumulators, an online softmax in registers, the
// backward recomputing P from each row's log-sum-exp and handing dS from the dK/dV kernel to
// the dQ kernel through memory; tiles arrive by cp.async, two stages.
#include <cuda_bf16.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <stdexcept>
#include <string>

#include "gpu/src/kernels/flash_attention.hpp"

namespace fp8lab::gpu::transformer {
namespace {

using bf16 = __nv_bfloat16;
// A forward or dQ block holds 128 query rows, 16 per warp: each key tile it loads serves
// twice the rows a 64-row block would (half the tiles read from L2). A dK/dV block holds
// 64 keys, 16 per warp (head sizes 32 and 64), or 128 keys, 32 per warp (head size 128).
constexpr int kQueryWarps = 8, kQueryThreads = 32 * kQueryWarps, kQueryBlock = 16 * kQueryWarps;
constexpr int kKeyWarps = 4, kKeyThreads = 32 * kKeyWarps;
constexpr int kTile = 64;  // key rows of a key tile and of a dK/dV block
constexpr float kLog2e = 1.4426950408889634f;

// Shared rows are padded by 16 bytes, so the 8 row addresses of an ldmatrix fall in distinct banks.
template <int D>
constexpr int kLd = D + 8;
// The queries a dK/dV kernel takes at a time.
constexpr int kKeyQueryTile = 64;

__device__ inline unsigned shared_address(const void* p) { return unsigned(__cvta_generic_to_shared(p)); }

// rows x D BF16 from global rows `ld` elements apart into padded shared rows, 16 bytes per
// cp.async; rows from `valid` on are zeros (a sequence's end), so they add nothing.
template <int D, int Rows>
__device__ inline void load_tile(bf16* s, const bf16* g, std::size_t ld, int valid) {
    constexpr int chunks = D / 8;
    for (int i = threadIdx.x; i < Rows * chunks; i += blockDim.x) {
        const int r = i / chunks, c = (i % chunks) * 8;
        const bool inside = r < valid;
        const bf16* src = inside ? g + std::size_t(r) * ld + c : g;
        asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(shared_address(s + r * kLd<D> + c)),
                     "l"(src), "r"(inside ? 16 : 0));
    }
}
// `count` floats (a row statistic per query) into shared, zeros past `valid`.
__device__ inline void load_floats(float* s, const float* g, int count, int valid) {
    for (int i = threadIdx.x; i < count; i += blockDim.x) {
        const bool inside = i < valid;
        asm volatile("cp.async.ca.shared.global [%0], [%1], 4, %2;\n" ::"r"(shared_address(s + i)),
                     "l"(inside ? g + i : g), "r"(inside ? 4 : 0));
    }
}
__device__ inline void commit() { asm volatile("cp.async.commit_group;\n" ::); }
template <int Pending>
__device__ inline void wait_loads() {
    asm volatile("cp.async.wait_group %0;\n" ::"n"(Pending));
    __syncthreads();
}

__device__ inline void ldmatrix_x4(unsigned (&r)[4], const bf16* p) {
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];\n"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
                 : "r"(shared_address(p)));
}
__device__ inline void ldmatrix_x4_trans(unsigned (&r)[4], const bf16* p) {
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0, %1, %2, %3}, [%4];\n"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
                 : "r"(shared_address(p)));
}
// c (16 x 8, float32) += a (16 x 16) b (16 x 8), BF16 operands.
__device__ inline void mma(float (&c)[4], const unsigned (&a)[4], unsigned b0, unsigned b1) {
    asm volatile(
        "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, "
        "{%0, %1, %2, %3};\n"
        : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}
__device__ inline unsigned pack(float lo, float hi) {
    const __nv_bfloat162 v = __floats2bfloat162_rn(lo, hi);
    return *reinterpret_cast<const unsigned*>(&v);
}

// The operand fragments of mma's m16n8k16 shape, by ldmatrix from padded shared tiles.
// A: rows r0..r0+15, columns k0..k0+15 of a row-major tile.
template <int D>
__device__ inline void fragment_a(unsigned (&a)[4], const bf16* s, int r0, int k0) {
    const int l = threadIdx.x & 31;
    ldmatrix_x4(a, s + (r0 + (l & 7) + ((l >> 3) & 1) * 8) * kLd<D> + k0 + (l >> 4) * 8);
}
// B for the 8-column tiles n0 and n0 + 8 (b[0], b[1] and b[2], b[3]) over k0..k0+15, from
// a tile stored one row per column of B (K for Q K^T).
template <int D>
__device__ inline void fragment_b_rows(unsigned (&b)[4], const bf16* s, int n0, int k0) {
    const int l = threadIdx.x & 31;
    ldmatrix_x4(b, s + (n0 + (l & 7) + (l >> 4) * 8) * kLd<D> + k0 + ((l >> 3) & 1) * 8);
}
// A (rows r0.., columns k0..) from a tile stored transposed, one row per column of A, W
// elements wide (dS^T, keys down and queries across, for dS K): ldmatrix transposes it.
template <int W>
__device__ inline void fragment_a_transposed(unsigned (&a)[4], const bf16* s, int r0, int k0) {
    const int l = threadIdx.x & 31;
    ldmatrix_x4_trans(a, s + (k0 + (l & 7) + (l >> 4) * 8) * kLd<W> + r0 + ((l >> 3) & 1) * 8);
}
// The same from a tile stored one row per row of B (V for P V).
template <int D>
__device__ inline void fragment_b_columns(unsigned (&b)[4], const bf16* s, int k0, int n0) {
    const int l = threadIdx.x & 31;
    ldmatrix_x4_trans(b, s + (k0 + (l & 7) + ((l >> 3) & 1) * 8) * kLd<D> + n0 + (l >> 4) * 8);
}

// c (16 x 8 Cols) = the warp's 16 rows of a (rows from r0) times the rows of b, both D wide:
// the scores of Q K^T (or K Q^T, dO V^T, V dO^T).
template <int D, int Cols>
__device__ inline void scores(float (&c)[Cols / 8][4], const bf16* a, int r0, const bf16* b) {
    for (auto& t : c) t[0] = t[1] = t[2] = t[3] = 0.0f;
#pragma unroll
    for (int kk = 0; kk < D / 16; ++kk) {
        unsigned fa[4];
        fragment_a<D>(fa, a, r0, kk * 16);
#pragma unroll
        for (int n = 0; n < Cols / 16; ++n) {
            unsigned fb[4];
            fragment_b_rows<D>(fb, b, n * 16, kk * 16);
            mma(c[2 * n], fa, fb[0], fb[1]);
            mma(c[2 * n + 1], fa, fb[2], fb[3]);
        }
    }
}
// The same with a's fragments already in registers (a[kk]: columns 16 kk .. 16 kk + 15).
template <int D, int Cols>
__device__ inline void scores(float (&c)[Cols / 8][4], const unsigned (&a)[D / 16][4], const bf16* b) {
    for (auto& t : c) t[0] = t[1] = t[2] = t[3] = 0.0f;
#pragma unroll
    for (int kk = 0; kk < D / 16; ++kk) {
#pragma unroll
        for (int n = 0; n < Cols / 16; ++n) {
            unsigned fb[4];
            fragment_b_rows<D>(fb, b, n * 16, kk * 16);
            mma(c[2 * n], a[kk], fb[0], fb[1]);
            mma(c[2 * n + 1], a[kk], fb[2], fb[3]);
        }
    }
}
// The warp's 16 rows (from r0) of a D-wide tile as mma A fragments.
template <int D>
__device__ inline void fragments_a(unsigned (&a)[D / 16][4], const bf16* s, int r0) {
#pragma unroll
    for (int kk = 0; kk < D / 16; ++kk) fragment_a<D>(a[kk], s, r0, kk * 16);
}
// acc (16 x D) += a (16 x 16, an mma A fragment) times rows k0..k0+15 of b (D wide, one row
// per row of B).
template <int D>
__device__ inline void accumulate_step(float (&acc)[D / 8][4], const unsigned (&fa)[4], const bf16* b, int k0) {
#pragma unroll
    for (int n = 0; n < D / 16; ++n) {
        unsigned fb[4];
        fragment_b_columns<D>(fb, b, k0, n * 16);
        mma(acc[2 * n], fa, fb[0], fb[1]);
        mma(acc[2 * n + 1], fa, fb[2], fb[3]);
    }
}
// acc (16 x D) += p (16 x 8 Cols, accumulators rounded to BF16 as mma's A) times b (Cols
// rows of D): P V (or P^T dO, dS^T Q, dS K).
template <int D, int Cols>
__device__ inline void accumulate(float (&acc)[D / 8][4], const float (&p)[Cols / 8][4], const bf16* b) {
#pragma unroll
    for (int kk = 0; kk < Cols / 16; ++kk) {
        const unsigned fa[4] = {pack(p[2 * kk][0], p[2 * kk][1]), pack(p[2 * kk][2], p[2 * kk][3]),
                                pack(p[2 * kk + 1][0], p[2 * kk + 1][1]), pack(p[2 * kk + 1][2], p[2 * kk + 1][3])};
        accumulate_step<D>(acc, fa, b, kk * 16);
    }
}
// Writes the warp's 16 rows of acc x scale (row r0 + lane / 4, and 8 further) as BF16 into
// out's columns from col, rows before `valid` only.
template <int D>
__device__ inline void store_rows(const float (&acc)[D / 8][4], float scale_lo, float scale_hi, bf16* out,
                                  std::size_t ld, int r0, int valid) {
    const int l = threadIdx.x & 31, lo = r0 + l / 4, hi = lo + 8, col = (l % 4) * 2;
#pragma unroll
    for (int t = 0; t < D / 8; ++t) {
        if (lo < valid)
            *reinterpret_cast<unsigned*>(out + std::size_t(lo) * ld + t * 8 + col) =
                pack(acc[t][0] * scale_lo, acc[t][1] * scale_lo);
        if (hi < valid)
            *reinterpret_cast<unsigned*>(out + std::size_t(hi) * ld + t * 8 + col) =
                pack(acc[t][2] * scale_hi, acc[t][3] * scale_hi);
    }
}

// The two-stage key/value pipeline of the forward and dQ kernels, before key tile j is used:
// tile j + 1 starts loading into the other stage, and tile j's loads are waited for.
template <int D>
__device__ inline void key_value_tiles_ahead(bf16* sk, bf16* sv, const bf16* kg, const bf16* vg, int qkv_w, int n,
                                             int j, int tiles) {
    if (j + 1 < tiles) {
        const int stage = (j + 1) & 1;
        const std::size_t next = std::size_t(j + 1) * kTile * qkv_w;
        load_tile<D, kTile>(sk + stage * kTile * kLd<D>, kg + next, qkv_w, n - (j + 1) * kTile);
        load_tile<D, kTile>(sv + stage * kTile * kLd<D>, vg + next, qkv_w, n - (j + 1) * kTile);
        commit();
        wait_loads<1>();
    } else {
        wait_loads<0>();
    }
}

// The causal mask on an accumulator element: the key after the query, or a query past the
// sequence's end, takes no part.
__device__ inline bool visible(int query, int key, int n) { return key <= query && query < n; }

// Grids: heads (or key/value heads) along x, sequences along y, query (or key) blocks along z,
// the longest first: blocks start in that order, so the short ones fill the last wave.
// Two forward blocks fit an SM (registers and shared memory): twice the warps to hide latency.
template <int D>
__global__ void __launch_bounds__(kQueryThreads, 2)
    forward_kernel(const bf16* qkv, int qkv_w, int n, int heads, int kv_heads, float scale_log2, bf16* out,
                   float* lse) {
    extern __shared__ __align__(16) unsigned char smem[];
    bf16* sq = reinterpret_cast<bf16*>(smem);
    bf16* sk = sq + kQueryBlock * kLd<D>;       // two stages
    bf16* sv = sk + 2 * kTile * kLd<D>;         // two stages
    const int qb = gridDim.z - 1 - blockIdx.z;  // the last query block sees the most keys
    const int h = blockIdx.x, g = h / (heads / kv_heads), q0 = qb * kQueryBlock;
    const std::size_t row0 = std::size_t(blockIdx.y) * n, rows = std::size_t(gridDim.y) * n;
    const bf16* kg = qkv + row0 * qkv_w + std::size_t(heads + g) * D;
    const bf16* vg = kg + std::size_t(kv_heads) * D;
    load_tile<D, kQueryBlock>(sq, qkv + (row0 + q0) * qkv_w + std::size_t(h) * D, qkv_w, n - q0);
    load_tile<D, kTile>(sk, kg, qkv_w, n);
    load_tile<D, kTile>(sv, vg, qkv_w, n);
    commit();

    const int warp = threadIdx.x / 32, lane = threadIdx.x & 31;
    const int first_row = q0 + warp * 16, r_lo = first_row + lane / 4, r_hi = r_lo + 8;
    float o[D / 8][4] = {};
    float m_lo = -INFINITY, m_hi = -INFINITY, l_lo = 0.0f, l_hi = 0.0f;
    const int tiles = (min(q0 + kQueryBlock, n) - 1) / kTile + 1;  // up to the block's last row
    for (int j = 0; j < tiles; ++j) {
        const int stage = j & 1;
        key_value_tiles_ahead<D>(sk, sv, kg, vg, qkv_w, n, j, tiles);
        // A warp whose rows all come before this tile's keys has nothing to add.
        if (j * kTile <= first_row + 15 && first_row < n) {
            float s[kTile / 8][4];
            scores<D, kTile>(s, sq, warp * 16, sk + stage * kTile * kLd<D>);
            float top_lo = -INFINITY, top_hi = -INFINITY;
            const bool diagonal = j * kTile + kTile - 1 > first_row;  // some key after some row: mask
#pragma unroll
            for (int t = 0; t < kTile / 8; ++t)
#pragma unroll
                for (int e = 0; e < 4; ++e) {
                    const int key = j * kTile + t * 8 + (lane % 4) * 2 + (e & 1);
                    s[t][e] = !diagonal || visible(e < 2 ? r_lo : r_hi, key, n) ? s[t][e] * scale_log2 : -INFINITY;
                    if (e < 2)
                        top_lo = fmaxf(top_lo, s[t][e]);
                    else
                        top_hi = fmaxf(top_hi, s[t][e]);
                }
            for (int o4 = 1; o4 < 4; o4 *= 2) {
                top_lo = fmaxf(top_lo, __shfl_xor_sync(0xffffffffu, top_lo, o4));
                top_hi = fmaxf(top_hi, __shfl_xor_sync(0xffffffffu, top_hi, o4));
            }
            // A row past the sequence sees no key at all: it keeps a finite maximum of 0.
            const float new_lo = fmaxf(m_lo, top_lo == -INFINITY ? 0.0f : top_lo);
            const float new_hi = fmaxf(m_hi, top_hi == -INFINITY ? 0.0f : top_hi);
            const float keep_lo = exp2f(m_lo - new_lo), keep_hi = exp2f(m_hi - new_hi);
            m_lo = new_lo;
            m_hi = new_hi;
            l_lo *= keep_lo;
            l_hi *= keep_hi;
#pragma unroll
            for (int t = 0; t < kTile / 8; ++t) {
                s[t][0] = exp2f(s[t][0] - m_lo);
                s[t][1] = exp2f(s[t][1] - m_lo);
                s[t][2] = exp2f(s[t][2] - m_hi);
                s[t][3] = exp2f(s[t][3] - m_hi);
                l_lo += s[t][0] + s[t][1];
                l_hi += s[t][2] + s[t][3];
            }
#pragma unroll
            for (int t = 0; t < D / 8; ++t) {
                o[t][0] *= keep_lo;
                o[t][1] *= keep_lo;
                o[t][2] *= keep_hi;
                o[t][3] *= keep_hi;
            }
            accumulate<D, kTile>(o, s, sv + stage * kTile * kLd<D>);
        }
        __syncthreads();  // this stage is the next iteration's prefetch target
    }
    for (int o4 = 1; o4 < 4; o4 *= 2) {
        l_lo += __shfl_xor_sync(0xffffffffu, l_lo, o4);
        l_hi += __shfl_xor_sync(0xffffffffu, l_hi, o4);
    }
    const std::size_t ld = std::size_t(heads) * D;
    store_rows<D>(o, 1.0f / l_lo, 1.0f / l_hi, out + row0 * ld + std::size_t(h) * D, ld, warp * 16 + q0, n);
    if (lane % 4 == 0) {
        float* row_lse = lse + std::size_t(h) * rows + row0;
        if (r_lo < n) row_lse[r_lo] = m_lo + log2f(l_lo);
        if (r_hi < n) row_lse[r_hi] = m_hi + log2f(l_hi);
    }
}

// delta[h][r] = sum over the head's columns of dout o out, a warp per (row, head).
template <int D>
__global__ void delta_kernel(const bf16* out, const bf16* dout, int rows, int heads, float* delta) {
    const std::size_t w = (blockIdx.x * std::size_t(blockDim.x) + threadIdx.x) / 32;
    const int lane = threadIdx.x & 31;
    if (w >= std::size_t(rows) * heads) return;
    const std::size_t r = w / heads, h = w % heads, at = r * heads * D + h * D;
    float sum = 0.0f;
    for (int c = lane; c < D; c += 32) sum += __bfloat162float(out[at + c]) * __bfloat162float(dout[at + c]);
    for (int o = 16; o > 0; o /= 2) sum += __shfl_xor_sync(0xffffffffu, sum, o);
    if (lane == 0) delta[h * rows + r] = sum;
}

// What both dK/dV kernels share: a block of K keys of key/value head blockIdx.x (sequence
// seq0 + blockIdx.y of `sequences`), its K and V tiles in shared memory, and its items, each
// a query head of the group and a tile of kKeyQueryTile queries at or after the keys (heads
// in turn, queries ascending), whose Q, dO, lse and delta arrive in two stages by cp.async.
// Shared memory: K, V, the two stages of Q and of dO, then of lse and of delta (kShared
// bytes); a kernel's own tiles follow (end()).
template <int D, int K>
struct KeyBlock {
    static constexpr int Q = kKeyQueryTile;
    static constexpr std::size_t kShared =
        (2 * std::size_t(K) + 4 * Q) * kLd<D> * sizeof(bf16) + 4 * std::size_t(Q) * sizeof(float);
    bf16 *sk, *sv, *sq, *sdo;
    float *slse, *sdelta;
    const bf16 *qkv, *dout;
    const float *lse, *delta;
    int qkv_w, n, g, group, k0, first, blocks, items;
    std::size_t row0, rows, ld_out;

    // Starts the loads of K, V and the first item.
    __device__ KeyBlock(unsigned char* smem, const bf16* qkv_, int qkv_w_, const bf16* dout_, const float* lse_,
                        const float* delta_, int n_, int sequences, int seq0, int heads, int kv_heads)
        : sk(reinterpret_cast<bf16*>(smem)),
          sv(sk + K * kLd<D>),
          sq(sv + K * kLd<D>),
          sdo(sq + 2 * Q * kLd<D>),
          slse(reinterpret_cast<float*>(sdo + 2 * Q * kLd<D>)),
          sdelta(slse + 2 * Q),
          qkv(qkv_),
          dout(dout_),
          lse(lse_),
          delta(delta_),
          qkv_w(qkv_w_),
          n(n_),
          g(blockIdx.x),
          group(heads / kv_heads),
          k0(blockIdx.z * K),  // the first keys see the most queries
          first(k0 / Q),
          blocks((n + Q - 1) / Q - first),
          items(group * blocks),
          row0(std::size_t(seq0 + blockIdx.y) * n),
          rows(std::size_t(sequences) * n),
          ld_out(std::size_t(heads) * D) {
        const bf16* kg = qkv + (row0 + k0) * qkv_w + std::size_t(heads + g) * D;
        load_tile<D, K>(sk, kg, qkv_w, n - k0);
        load_tile<D, K>(sv, kg + std::size_t(kv_heads) * D, qkv_w, n - k0);
        load_item(0, 0);
        commit();
    }
    __device__ int head(int i) const { return g * group + i / blocks; }
    __device__ int query0(int i) const { return (first + i % blocks) * Q; }
    __device__ void load_item(int i, int stage) const {
        const int h = head(i), q0 = query0(i);
        load_tile<D, Q>(sq + stage * Q * kLd<D>, qkv + (row0 + q0) * qkv_w + std::size_t(h) * D, qkv_w, n - q0);
        load_tile<D, Q>(sdo + stage * Q * kLd<D>, dout + (row0 + q0) * ld_out + std::size_t(h) * D, ld_out, n - q0);
        load_floats(slse + stage * Q, lse + std::size_t(h) * rows + row0 + q0, Q, n - q0);
        load_floats(sdelta + stage * Q, delta + std::size_t(h) * rows + row0 + q0, Q, n - q0);
    }
    // Waits for item i's tiles, having started item i + 1's into the other stage.
    __device__ void arrive(int i) const {
        if (i + 1 < items) {
            load_item(i + 1, (i & 1) ^ 1);
            commit();
            wait_loads<1>();
        } else {
            wait_loads<0>();
        }
    }
    __device__ const bf16* q(int i) const { return sq + (i & 1) * Q * kLd<D>; }
    __device__ const bf16* d_o(int i) const { return sdo + (i & 1) * Q * kLd<D>; }
    __device__ const float* row_lse(int i) const { return slse + (i & 1) * Q; }
    __device__ const float* row_delta(int i) const { return sdelta + (i & 1) * Q; }
    // Where dK of the block's keys goes (dV kv_heads heads further).
    __device__ bf16* dk_out(bf16* dqkv, int heads) const { return dqkv + row0 * qkv_w + std::size_t(heads + g) * D; }
    __device__ unsigned char* end() const { return reinterpret_cast<unsigned char*>(sdelta + 2 * Q); }
};

// dK and dV of one key block of one key/value head: every query head of its group and every
// query block at or after the keys, in that order, from P^T = exp2(K Q^T x scale_log2 - lse)
// and dS^T = P^T o (V dO^T - delta) x scale. Sequence seq0 + blockIdx.y of `sequences`. With
// ds, each dS^T tile is also stored, rounded to BF16 as dK's product takes it, for the dQ
// kernel: ds holds a ds_ld x ds_ld square (keys down, queries across) per sequence of the
// launch and query head.
template <int D>
__global__ void __launch_bounds__(kKeyThreads)
    key_value_grad_kernel(const bf16* qkv, int qkv_w, const bf16* dout, const float* lse, const float* delta, int n,
                          int sequences, int seq0, int heads, int kv_heads, float scale, float scale_log2, bf16* dqkv,
                          bf16* ds, std::size_t ds_ld) {
    constexpr int Q = kKeyQueryTile;
    extern __shared__ __align__(16) unsigned char smem[];
    const KeyBlock<D, kTile> kb(smem, qkv, qkv_w, dout, lse, delta, n, sequences, seq0, heads, kv_heads);
    const bf16 *sk = kb.sk, *sv = kb.sv;
    const int k0 = kb.k0;
    const int warp = threadIdx.x / 32, lane = threadIdx.x & 31;
    const int key_lo = k0 + warp * 16 + lane / 4, key_hi = key_lo + 8;
    float dk[D / 8][4] = {}, dv[D / 8][4] = {};
    for (int i = 0; i < kb.items; ++i) {
        const int q0 = kb.query0(i), h = kb.head(i);
        kb.arrive(i);
        const bf16 *q = kb.q(i), *d_o = kb.d_o(i);
        const float *row_lse = kb.row_lse(i), *row_delta = kb.row_delta(i);
        float p[Q / 8][4], dp[Q / 8][4];
        scores<D, Q>(p, sk, warp * 16, q);  // S^T: keys down, queries across
#pragma unroll
        for (int t = 0; t < Q / 8; ++t)
#pragma unroll
            for (int e = 0; e < 4; ++e) {
                const int c = t * 8 + (lane % 4) * 2 + (e & 1);
                p[t][e] = visible(q0 + c, e < 2 ? key_lo : key_hi, n) ? exp2f(p[t][e] * scale_log2 - row_lse[c]) : 0.0f;
            }
        accumulate<D, Q>(dv, p, d_o);
        scores<D, Q>(dp, sv, warp * 16, d_o);  // dP^T = V dO^T
#pragma unroll
        for (int t = 0; t < Q / 8; ++t)
#pragma unroll
            for (int e = 0; e < 4; ++e)
                dp[t][e] = p[t][e] * (dp[t][e] - row_delta[t * 8 + (lane % 4) * 2 + (e & 1)]) * scale;
        if (ds != nullptr) {
            bf16* ds_tile = ds + (std::size_t(blockIdx.y) * heads + h) * ds_ld * ds_ld + q0 + (lane % 4) * 2;
#pragma unroll
            for (int t = 0; t < Q / 8; ++t) {
                *reinterpret_cast<unsigned*>(ds_tile + std::size_t(key_lo) * ds_ld + t * 8) = pack(dp[t][0], dp[t][1]);
                *reinterpret_cast<unsigned*>(ds_tile + std::size_t(key_hi) * ds_ld + t * 8) = pack(dp[t][2], dp[t][3]);
            }
        }
        accumulate<D, Q>(dk, dp, q);
        __syncthreads();
    }
    bf16* dk_out = kb.dk_out(dqkv, heads);
    store_rows<D>(dk, 1.0f, 1.0f, dk_out, qkv_w, k0 + warp * 16, n);
    store_rows<D>(dv, 1.0f, 1.0f, dk_out + std::size_t(kv_heads) * D, qkv_w, k0 + warp * 16, n);
}

// The dK/dV kernel at head size 128: a block of 128 keys and 8 warps, 64 queries at a time
// (FlashAttention-2's layout for this size). Each iteration first computes P^T and dS^T, a
// warp a 32 x 32 square of them (keys by queries), and puts them in shared memory as BF16;
// then each warp adds its 32 keys x 64 columns of dV += P^T dO and dK += dS^T Q. Against the
// 16-key warps above, a fragment read from shared memory feeds more mma (0.44 ldmatrix an
// mma against 0.63; shared memory, not the tensor pipe, is what Nsight Compute found these
// mma.sync kernels waiting on), and each query tile read from L2 serves twice the keys. The products and their order are those of the kernel above
// (queries ascending within each query head, heads ascending; query tiles before the keys add
// exact zeros), so dK, dV and dS have the same bits.
constexpr int kWideKeyWarps = 8, kWideKeyThreads = 32 * kWideKeyWarps;
constexpr int kWideKeyBlock = 128;

// c (32 x 32, two 16-row tiles of four 8-column tiles) = rows r0..r0+31 of a times rows
// c0..c0+31 of b, both D wide: a warp's square of K Q^T (or V dO^T).
template <int D>
__device__ inline void scores_square(float (&c)[2][4][4], const bf16* a, int r0, const bf16* b, int c0) {
    for (auto& row : c)
        for (auto& t : row) t[0] = t[1] = t[2] = t[3] = 0.0f;
#pragma unroll
    for (int kk = 0; kk < D / 16; ++kk) {
        unsigned fa[2][4];
        fragment_a<D>(fa[0], a, r0, kk * 16);
        fragment_a<D>(fa[1], a, r0 + 16, kk * 16);
#pragma unroll
        for (int n = 0; n < 2; ++n) {
            unsigned fb[4];
            fragment_b_rows<D>(fb, b, c0 + n * 16, kk * 16);
#pragma unroll
            for (int i = 0; i < 2; ++i) {
                mma(c[i][2 * n], fa[i], fb[0], fb[1]);
                mma(c[i][2 * n + 1], fa[i], fb[2], fb[3]);
            }
        }
    }
}
// acc (32 rows from r0 of a, times D / 2 columns from c0 of b) += a (W wide, BF16) times b
// (W rows of D): a warp's share of dV += P^T dO (or dK += dS^T Q).
template <int D, int W>
__device__ inline void accumulate_half(float (&acc)[2][D / 16][4], const bf16* a, int r0, const bf16* b, int c0) {
#pragma unroll
    for (int kk = 0; kk < W / 16; ++kk) {
        unsigned fa[2][4];
        fragment_a<W>(fa[0], a, r0, kk * 16);
        fragment_a<W>(fa[1], a, r0 + 16, kk * 16);
#pragma unroll
        for (int n = 0; n < D / 32; ++n) {
            unsigned fb[4];
            fragment_b_columns<D>(fb, b, kk * 16, c0 + n * 16);
#pragma unroll
            for (int i = 0; i < 2; ++i) {
                mma(acc[i][2 * n], fa[i], fb[0], fb[1]);
                mma(acc[i][2 * n + 1], fa[i], fb[2], fb[3]);
            }
        }
    }
}

template <int D>
__global__ void __launch_bounds__(kWideKeyThreads, 1)
    key_value_grad_wide_kernel(const bf16* qkv, int qkv_w, const bf16* dout, const float* lse, const float* delta,
                               int n, int sequences, int seq0, int heads, int kv_heads, float scale, float scale_log2,
                               bf16* dqkv, bf16* ds, std::size_t ds_ld) {
    constexpr int Q = kKeyQueryTile, K = kWideKeyBlock;
    extern __shared__ __align__(16) unsigned char smem[];
    const KeyBlock<D, K> kb(smem, qkv, qkv_w, dout, lse, delta, n, sequences, seq0, heads, kv_heads);
    const bf16 *sk = kb.sk, *sv = kb.sv;
    bf16* sp = reinterpret_cast<bf16*>(kb.end());  // P^T, keys down
    bf16* sds = sp + K * kLd<Q>;                   // dS^T, keys down
    const int k0 = kb.k0;

    // The warp's keys (32 from kw) for all of its work; its queries (32 from qw) in the
    // first half of an iteration, its columns (D / 2 from cw) of dK and dV in the second.
    const int warp = threadIdx.x / 32, lane = threadIdx.x & 31;
    const int kw = (warp % 4) * 32, qw = (warp / 4) * 32, cw = (warp / 4) * (D / 2);
    float dk[2][D / 16][4] = {}, dv[2][D / 16][4] = {};
    for (int i = 0; i < kb.items; ++i) {
        const int q0 = kb.query0(i), h = kb.head(i);
        kb.arrive(i);
        const bf16 *q = kb.q(i), *d_o = kb.d_o(i);
        const float *row_lse = kb.row_lse(i), *row_delta = kb.row_delta(i);
        float p[2][4][4], dp[2][4][4];
        // Every query of the square before every key (or past the sequence): all zeros.
        if (q0 + qw + 31 < k0 + kw || q0 + qw >= n) {
            for (auto& row : p)
                for (auto& t : row) t[0] = t[1] = t[2] = t[3] = 0.0f;
            for (auto& row : dp)
                for (auto& t : row) t[0] = t[1] = t[2] = t[3] = 0.0f;
        } else {
            scores_square<D>(p, sk, kw, q, qw);     // S^T: keys down, queries across
            scores_square<D>(dp, sv, kw, d_o, qw);  // dP^T = V dO^T
#pragma unroll
            for (int r = 0; r < 2; ++r)
#pragma unroll
                for (int t = 0; t < 4; ++t)
#pragma unroll
                    for (int e = 0; e < 4; ++e) {
                        const int c = qw + t * 8 + (lane % 4) * 2 + (e & 1);
                        const int key = k0 + kw + r * 16 + lane / 4 + (e < 2 ? 0 : 8);
                        p[r][t][e] = visible(q0 + c, key, n) ? exp2f(p[r][t][e] * scale_log2 - row_lse[c]) : 0.0f;
                        dp[r][t][e] = p[r][t][e] * (dp[r][t][e] - row_delta[c]) * scale;
                    }
        }
#pragma unroll
        for (int r = 0; r < 2; ++r)
#pragma unroll
            for (int t = 0; t < 4; ++t) {
                const int lo = kw + r * 16 + lane / 4, c = qw + t * 8 + (lane % 4) * 2;
                *reinterpret_cast<unsigned*>(sp + lo * kLd<Q> + c) = pack(p[r][t][0], p[r][t][1]);
                *reinterpret_cast<unsigned*>(sp + (lo + 8) * kLd<Q> + c) = pack(p[r][t][2], p[r][t][3]);
                *reinterpret_cast<unsigned*>(sds + lo * kLd<Q> + c) = pack(dp[r][t][0], dp[r][t][1]);
                *reinterpret_cast<unsigned*>(sds + (lo + 8) * kLd<Q> + c) = pack(dp[r][t][2], dp[r][t][3]);
            }
        __syncthreads();
        accumulate_half<D, Q>(dv, sp, kw, d_o, cw);
        accumulate_half<D, Q>(dk, sds, kw, q, cw);
        if (ds != nullptr) {  // the dS^T tile to the dQ kernel, 16 bytes a thread at a time
            bf16* ds_tile = ds + (std::size_t(blockIdx.y) * heads + h) * ds_ld * ds_ld + std::size_t(k0) * ds_ld + q0;
            for (int c = threadIdx.x; c < K * Q / 8; c += kWideKeyThreads) {
                const int r = c / (Q / 8), col = (c % (Q / 8)) * 8;
                *reinterpret_cast<uint4*>(ds_tile + std::size_t(r) * ds_ld + col) =
                    *reinterpret_cast<const uint4*>(sds + r * kLd<Q> + col);
            }
        }
        __syncthreads();  // sp, sds and this stage are rewritten next
    }
    bf16* dk_out = kb.dk_out(dqkv, heads) + cw;
#pragma unroll
    for (int r = 0; r < 2; ++r) {
        store_rows<D / 2>(dk[r], 1.0f, 1.0f, dk_out, qkv_w, k0 + kw + r * 16, n);
        store_rows<D / 2>(dv[r], 1.0f, 1.0f, dk_out + std::size_t(kv_heads) * D, qkv_w, k0 + kw + r * 16, n);
    }
}

// dQ of one query block of one query head: every key tile at or before it, recomputing P and
// dP = dO V^T, then dQ += dS K. At head size 128 the warp's rows of Q and dO stay in
// registers as mma fragments, so every key tile reads only K and V from shared memory (240
// registers: one block an SM, as before). Below 128 they are read again for each tile: the
// 64 registers more would halve the blocks an SM holds (GPT-2-small's head size 64 ran 0.6%
// slower with them).
template <int D>
__global__ void __launch_bounds__(kQueryThreads)
    query_grad_kernel(const bf16* qkv, int qkv_w, const bf16* dout, const float* lse, const float* delta, int n,
                      int heads, int kv_heads, float scale, float scale_log2, bf16* dqkv) {
    extern __shared__ __align__(16) unsigned char smem[];
    bf16* sq = reinterpret_cast<bf16*>(smem);
    bf16* sdo = sq + kQueryBlock * kLd<D>;
    bf16* sk = sdo + kQueryBlock * kLd<D>;  // two stages
    bf16* sv = sk + 2 * kTile * kLd<D>;     // two stages
    const int qb = gridDim.z - 1 - blockIdx.z;
    const int h = blockIdx.x, g = h / (heads / kv_heads), q0 = qb * kQueryBlock;
    const std::size_t row0 = std::size_t(blockIdx.y) * n, rows = std::size_t(gridDim.y) * n;
    const std::size_t ld_out = std::size_t(heads) * D;
    const bf16* kg = qkv + row0 * qkv_w + std::size_t(heads + g) * D;
    const bf16* vg = kg + std::size_t(kv_heads) * D;
    load_tile<D, kQueryBlock>(sq, qkv + (row0 + q0) * qkv_w + std::size_t(h) * D, qkv_w, n - q0);
    load_tile<D, kQueryBlock>(sdo, dout + (row0 + q0) * ld_out + std::size_t(h) * D, ld_out, n - q0);
    commit();
    load_tile<D, kTile>(sk, kg, qkv_w, n);
    load_tile<D, kTile>(sv, vg, qkv_w, n);
    commit();

    const int warp = threadIdx.x / 32, lane = threadIdx.x & 31;
    const int first_row = q0 + warp * 16, r_lo = first_row + lane / 4, r_hi = r_lo + 8;
    constexpr bool held = D == 128;
    unsigned fq[D / 16][4], fdo[D / 16][4];
    if constexpr (held) {
        wait_loads<1>();  // Q and dO; the first key tile may still be on its way
        fragments_a<D>(fq, sq, warp * 16);
        fragments_a<D>(fdo, sdo, warp * 16);
    }
    const float* head_lse = lse + std::size_t(h) * rows + row0;
    const float* head_delta = delta + std::size_t(h) * rows + row0;
    const float lse_lo = r_lo < n ? head_lse[r_lo] : 0.0f, lse_hi = r_hi < n ? head_lse[r_hi] : 0.0f;
    const float delta_lo = r_lo < n ? head_delta[r_lo] : 0.0f, delta_hi = r_hi < n ? head_delta[r_hi] : 0.0f;
    float dq[D / 8][4] = {};
    const int tiles = (min(q0 + kQueryBlock, n) - 1) / kTile + 1;  // up to the block's last row
    for (int j = 0; j < tiles; ++j) {
        const int stage = j & 1;
        key_value_tiles_ahead<D>(sk, sv, kg, vg, qkv_w, n, j, tiles);
        const bf16 *k = sk + stage * kTile * kLd<D>, *v = sv + stage * kTile * kLd<D>;
        if (j * kTile <= first_row + 15 && first_row < n) {  // else the warp's rows see none of these keys
            float p[kTile / 8][4], dp[kTile / 8][4];
            if constexpr (held) {
                scores<D, kTile>(p, fq, k);
                scores<D, kTile>(dp, fdo, v);
            } else {
                scores<D, kTile>(p, sq, warp * 16, k);
                scores<D, kTile>(dp, sdo, warp * 16, v);
            }
#pragma unroll
            for (int t = 0; t < kTile / 8; ++t)
#pragma unroll
                for (int e = 0; e < 4; ++e) {
                    const bool lo = e < 2;
                    const int key = j * kTile + t * 8 + (lane % 4) * 2 + (e & 1);
                    const float prob =
                        visible(lo ? r_lo : r_hi, key, n) ? exp2f(p[t][e] * scale_log2 - (lo ? lse_lo : lse_hi)) : 0.0f;
                    dp[t][e] = prob * (dp[t][e] - (lo ? delta_lo : delta_hi)) * scale;
                }
            accumulate<D, kTile>(dq, dp, k);
        }
        __syncthreads();
    }
    store_rows<D>(dq, 1.0f, 1.0f, dqkv + row0 * qkv_w + std::size_t(h) * D, qkv_w, q0 + warp * 16, n);
}

// dQ of one query block of one query head from the dS^T tiles the dK/dV kernel stored: dQ +=
// dS K over the key tiles at or before the block, in the order the kernel above adds them
// (the same products of the same BF16 values). Tiles the dK/dV kernel never writes (keys
// after every query of the tile) hold the zeros the buffer was allocated with.
template <int D>
__global__ void __launch_bounds__(kQueryThreads)
    query_grad_from_scores_kernel(const bf16* qkv, int qkv_w, const bf16* ds, std::size_t ds_ld, int n, int seq0,
                                  int heads, int kv_heads, bf16* dqkv) {
    constexpr int W = kQueryBlock;
    extern __shared__ __align__(16) unsigned char smem[];
    bf16* ss = reinterpret_cast<bf16*>(smem);  // two stages of kTile keys x W queries
    bf16* sk = ss + 2 * kTile * kLd<W>;        // two stages
    const int qb = gridDim.z - 1 - blockIdx.z;
    const int h = blockIdx.x, g = h / (heads / kv_heads), q0 = qb * kQueryBlock;
    const std::size_t row0 = std::size_t(seq0 + blockIdx.y) * n;
    const bf16* kg = qkv + row0 * qkv_w + std::size_t(heads + g) * D;
    const bf16* sg = ds + (std::size_t(blockIdx.y) * heads + h) * ds_ld * ds_ld + q0;
    const int tiles = (min(q0 + kQueryBlock, n) - 1) / kTile + 1;  // up to the block's last row
    const auto load = [&](int j) {
        const int stage = j & 1;
        // The square is ds_ld wide and tall (n rounded up to a query block): whole tiles.
        load_tile<W, kTile>(ss + stage * kTile * kLd<W>, sg + std::size_t(j) * kTile * ds_ld, ds_ld, kTile);
        load_tile<D, kTile>(sk + stage * kTile * kLd<D>, kg + std::size_t(j) * kTile * qkv_w, qkv_w, n - j * kTile);
        commit();
    };
    load(0);
    const int warp = threadIdx.x / 32, first_row = q0 + warp * 16;
    float dq[D / 8][4] = {};
    for (int j = 0; j < tiles; ++j) {
        if (j + 1 < tiles) {
            load(j + 1);  // into the stage the last iteration finished with
            wait_loads<1>();
        } else {
            wait_loads<0>();
        }
        const int stage = j & 1;
        if (j * kTile <= first_row + 15 && first_row < n) {  // else the warp's rows see none of these keys
            const bf16 *s = ss + stage * kTile * kLd<W>, *k = sk + stage * kTile * kLd<D>;
#pragma unroll
            for (int kk = 0; kk < kTile / 16; ++kk) {
                unsigned fa[4];
                fragment_a_transposed<W>(fa, s, warp * 16, kk * 16);
                accumulate_step<D>(dq, fa, k, kk * 16);
            }
        }
        __syncthreads();
    }
    store_rows<D>(dq, 1.0f, 1.0f, dqkv + row0 * qkv_w + std::size_t(h) * D, qkv_w, q0 + warp * 16, n);
}

template <int D>
constexpr std::size_t forward_shared() {
    return (kQueryBlock + 4 * std::size_t(kTile)) * kLd<D> * sizeof(bf16);
}
template <int D>
constexpr std::size_t key_value_shared() {
    return KeyBlock<D, kTile>::kShared;
}
template <int D>
constexpr std::size_t key_value_wide_shared() {
    return KeyBlock<D, kWideKeyBlock>::kShared + 2 * std::size_t(kWideKeyBlock) * kLd<kKeyQueryTile> * sizeof(bf16);
}
// The 128-key dK/dV kernel serves head size 128 only. Below it the 4-warp kernel's 168
// registers (head size 64) let three of its blocks share an SM, where 8 warps of the wide
// kernel's would hold one.
template <int D>
constexpr bool kWideKeyBlocks = D == 128;
template <int D>
constexpr std::size_t query_shared() {
    return (2 * kQueryBlock + 4 * std::size_t(kTile)) * kLd<D> * sizeof(bf16);
}
template <int D>
constexpr std::size_t query_from_scores_shared() {
    return 2 * std::size_t(kTile) * (kLd<kQueryBlock> + kLd<D>)*sizeof(bf16);
}

void check(cudaError_t e, const char* what) {
    if (e != cudaSuccess) throw std::runtime_error(std::string(what) + ": " + cudaGetErrorString(e));
}

template <int D>
void configure() {
    check(
        cudaFuncSetAttribute(forward_kernel<D>, cudaFuncAttributeMaxDynamicSharedMemorySize, int(forward_shared<D>())),
        "flash attention forward: shared memory");
    // All of the SM's unified memory as shared memory, so two forward blocks fit.
    check(cudaFuncSetAttribute(forward_kernel<D>, cudaFuncAttributePreferredSharedMemoryCarveout,
                               int(cudaSharedmemCarveoutMaxShared)),
          "flash attention forward: shared memory carveout");
    if constexpr (kWideKeyBlocks<D>)
        check(cudaFuncSetAttribute(key_value_grad_wide_kernel<D>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                   int(key_value_wide_shared<D>())),
              "flash attention dK/dV (128 keys): shared memory");
    else
        check(cudaFuncSetAttribute(key_value_grad_kernel<D>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                   int(key_value_shared<D>())),
              "flash attention dK/dV: shared memory");
    check(
        cudaFuncSetAttribute(query_grad_kernel<D>, cudaFuncAttributeMaxDynamicSharedMemorySize, int(query_shared<D>())),
        "flash attention dQ: shared memory");
    check(cudaFuncSetAttribute(query_grad_from_scores_kernel<D>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                               int(query_from_scores_shared<D>())),
          "flash attention dQ from dS: shared memory");
}

template <int D>
void forward(const bf16* qkv, int qkv_w, int sequences, int n, int heads, int kv_heads, bf16* out, float* lse,
             cudaStream_t stream) {
    const dim3 grid(heads, sequences, (n + kQueryBlock - 1) / kQueryBlock);
    const float scale_log2 = kLog2e / sqrtf(float(D));
    forward_kernel<D>
        <<<grid, kQueryThreads, forward_shared<D>(), stream>>>(qkv, qkv_w, n, heads, kv_heads, scale_log2, out, lse);
}

std::size_t scores_ld(int n) { return (std::size_t(n) + kQueryBlock - 1) / kQueryBlock * kQueryBlock; }

template <int D>
void backward(const bf16* qkv, int qkv_w, const bf16* out, const bf16* dout, const float* lse, float* delta,
              int sequences, int n, int heads, int kv_heads, bf16* dqkv, bf16* scores, int scores_sequences,
              cudaStream_t stream) {
    const int rows = sequences * n;
    const std::size_t warps = std::size_t(rows) * heads;
    delta_kernel<D><<<unsigned((warps * 32 + 255) / 256), 256, 0, stream>>>(out, dout, rows, heads, delta);
    const float scale = 1.0f / sqrtf(float(D)), scale_log2 = kLog2e * scale;
    const unsigned query_blocks = (n + kQueryBlock - 1) / kQueryBlock;
    // dK and dV of sequences seq0 .. seq0 + count - 1, storing dS^T into ds where given.
    const auto key_value_grad = [&](int seq0, unsigned count, bf16* ds, std::size_t ds_ld) {
        if constexpr (kWideKeyBlocks<D>) {
            const unsigned key_blocks = (n + kWideKeyBlock - 1) / kWideKeyBlock;
            key_value_grad_wide_kernel<D>
                <<<dim3(kv_heads, count, key_blocks), kWideKeyThreads, key_value_wide_shared<D>(), stream>>>(
                    qkv, qkv_w, dout, lse, delta, n, sequences, seq0, heads, kv_heads, scale, scale_log2, dqkv, ds,
                    ds_ld);
        } else {
            const unsigned key_blocks = (n + kTile - 1) / kTile;
            key_value_grad_kernel<D><<<dim3(kv_heads, count, key_blocks), kKeyThreads, key_value_shared<D>(), stream>>>(
                qkv, qkv_w, dout, lse, delta, n, sequences, seq0, heads, kv_heads, scale, scale_log2, dqkv, ds, ds_ld);
        }
    };
    if (scores == nullptr) {
        key_value_grad(0, unsigned(sequences), nullptr, 0);
        query_grad_kernel<D><<<dim3(heads, sequences, query_blocks), kQueryThreads, query_shared<D>(), stream>>>(
            qkv, qkv_w, dout, lse, delta, n, heads, kv_heads, scale, scale_log2, dqkv);
        return;
    }
    const std::size_t ld = scores_ld(n);
    for (int seq0 = 0; seq0 < sequences; seq0 += scores_sequences) {
        const unsigned count = unsigned(std::min(scores_sequences, sequences - seq0));
        key_value_grad(seq0, count, scores, ld);
        query_grad_from_scores_kernel<D>
            <<<dim3(heads, count, query_blocks), kQueryThreads, query_from_scores_shared<D>(), stream>>>(
                qkv, qkv_w, scores, ld, n, seq0, heads, kv_heads, dqkv);
    }
}

const bf16* b(const void* p) { return static_cast<const bf16*>(p); }
bf16* b(void* p) { return static_cast<bf16*>(p); }

}  // namespace

bool flash_attention_supports(int head_size) { return head_size == 32 || head_size == 64 || head_size == 128; }

std::size_t flash_attention_scores_bytes(int n, int heads) {
    const std::size_t ld = scores_ld(n);
    return std::size_t(heads) * ld * ld * sizeof(bf16);
}

void flash_attention_configure(int head_size) {
    switch (head_size) {
    case 32:
        return configure<32>();
    case 64:
        return configure<64>();
    case 128:
        return configure<128>();
    default:
        throw std::invalid_argument("flash attention: head size " + std::to_string(head_size) +
                                    " is not one of 32, 64, 128");
    }
}

void flash_attention_forward(const void* qkv, int qkv_w, int sequences, int n, int heads, int kv_heads, int head_size,
                             void* out, float* lse, cudaStream_t stream) {
    switch (head_size) {
    case 32:
        return forward<32>(b(qkv), qkv_w, sequences, n, heads, kv_heads, b(out), lse, stream);
    case 64:
        return forward<64>(b(qkv), qkv_w, sequences, n, heads, kv_heads, b(out), lse, stream);
    case 128:
        return forward<128>(b(qkv), qkv_w, sequences, n, heads, kv_heads, b(out), lse, stream);
    default:
        throw std::invalid_argument("flash attention: head size " + std::to_string(head_size));
    }
}

void flash_attention_backward(const void* qkv, int qkv_w, const void* out, const void* dout, const float* lse,
                              float* delta, int sequences, int n, int heads, int kv_heads, int head_size, void* dqkv,
                              void* scores, int scores_sequences, cudaStream_t stream) {
    if (scores != nullptr && scores_sequences < 1)
        throw std::invalid_argument("flash attention: scores_sequences must be positive with a scores buffer");
    switch (head_size) {
    case 32:
        return backward<32>(b(qkv), qkv_w, b(out), b(dout), lse, delta, sequences, n, heads, kv_heads, b(dqkv),
                            b(scores), scores_sequences, stream);
    case 64:
        return backward<64>(b(qkv), qkv_w, b(out), b(dout), lse, delta, sequences, n, heads, kv_heads, b(dqkv),
                            b(scores), scores_sequences, stream);
    case 128:
        return backward<128>(b(qkv), qkv_w, b(out), b(dout), lse, delta, sequences, n, heads, kv_heads, b(dqkv),
                             b(scores), scores_sequences, stream);
    default:
        throw std::invalid_argument("flash attention: head size " + std::to_string(head_size));
    }
}

}  // namespace fp8lab::gpu::transformer
