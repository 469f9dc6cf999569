// SPDX-License-Identifier: Apache-2.0
// The transformer's kernels besides its GEMMs: a warp per row (norms, softmax rows, the
// loss) or per element, float32 inside, every sum in a fixed order (no atomics).
#include <cuda_bf16.h>

#include <algorithm>
#include <cfloat>
#include <cstdint>
#include <initializer_list>
#include <stdexcept>
#include <string>
#include <type_traits>

#include "gpu/src/kernels/delayed_update.cuh"
#include "gpu/src/kernels/swiglu.cuh"
#include "gpu/src/kernels/transformer_kernels.hpp"

namespace fp8lab::gpu::transformer {
namespace {

using bf16 = __nv_bfloat16;
constexpr int kThreads = 256, kWarps = kThreads / 32;

int grid_for(std::size_t n) { return int(std::clamp<std::size_t>((n + kThreads - 1) / kThreads, 1, 65535)); }
int warps_grid(std::size_t warps) { return int((warps + kWarps - 1) / kWarps); }

__device__ inline float warp_sum(float v) {
    for (int o = 16; o > 0; o /= 2) v += __shfl_xor_sync(0xffffffffu, v, o);
    return v;
}
__device__ inline float warp_max(float v) {
    for (int o = 16; o > 0; o /= 2) v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, o));
    return v;
}
__device__ inline int global_warp() { return int((blockIdx.x * std::size_t(blockDim.x) + threadIdx.x) / 32); }

// A block per byte value and 128 columns; each column's sum runs over the value's rows in
// order (the CPU's order, so the same bits), but with the rows' indices staged in shared
// memory and kEmbedLoads values loaded before they are added: a frequent byte (the space,
// in English text) has hundreds of rows in a step, and a load at a time left its blocks
// waiting on memory's latency long after the others had finished.
constexpr int kEmbedThreads = 128, kEmbedRows = 256, kEmbedLoads = 32;
__global__ void __launch_bounds__(kEmbedThreads)
    embed_backward_kernel(const float* dx, const int* offsets, const int* positions, const int* step, int rows, int d,
                          float* grad) {
    __shared__ int rows_of[kEmbedRows];
    const int v = blockIdx.y;
    const int* o = offsets + std::size_t(*step) * 257;
    const int* p = positions + std::size_t(*step) * rows;
    const int begin = o[v], end = o[v + 1];
    const int c = blockIdx.x * kEmbedThreads + threadIdx.x;  // the grid covers the columns once
    const float* column = dx + (c < d ? c : 0);
    float sum = 0.0f;
    for (int k0 = begin; k0 < end; k0 += kEmbedRows) {
        const int n = min(kEmbedRows, end - k0);
        __syncthreads();  // the last chunk's indices are read
        for (int i = threadIdx.x; i < n; i += kEmbedThreads) rows_of[i] = p[k0 + i];
        __syncthreads();
        int k = 0;
        for (; k + kEmbedLoads <= n; k += kEmbedLoads) {
            float x[kEmbedLoads];
#pragma unroll
            for (int u = 0; u < kEmbedLoads; ++u) x[u] = column[std::size_t(rows_of[k + u]) * d];
#pragma unroll
            for (int u = 0; u < kEmbedLoads; ++u) sum += x[u];
        }
        for (; k < n; ++k) sum += column[std::size_t(rows_of[k]) * d];
    }
    if (c < d) grad[std::size_t(v) * d + c] = sum;
}

// V consecutive BF16 or float32 values, loaded and stored as one access (16 bytes at most):
// the element-wise kernels below move V elements a thread where the sizes allow it.
template <int V>
struct alignas(2 * V) Bf16s {
    bf16 v[V];
};
template <int V>
struct alignas(4 * V < 16 ? 4 * V : 16) Floats {
    float v[V];
};
template <int V>
__device__ inline Bf16s<V> load_bf16s(const bf16* p) {
    return *reinterpret_cast<const Bf16s<V>*>(p);
}
template <int V>
__device__ inline void store_bf16s(bf16* p, const Bf16s<V>& x) {
    *reinterpret_cast<Bf16s<V>*>(p) = x;
}
template <int V>
__device__ inline Floats<V> load_floats(const float* p) {
    return *reinterpret_cast<const Floats<V>*>(p);
}
template <int V>
__device__ inline void store_floats(float* p, const Floats<V>& x) {
    *reinterpret_cast<Floats<V>*>(p) = x;
}

// A block a row: the row's byte read once, its table row copied V floats a thread (an index
// split into row and column per element, one float at a time, ran at a quarter of the
// memory's speed).
template <int V>
__global__ void embed_forward_kernel(const float* table, const std::uint8_t* tokens, const int* step, int rows, int d,
                                     float* x) {
    using Vec = Floats<V>;
    const int r = blockIdx.x;
    const Vec* from = reinterpret_cast<const Vec*>(table + std::size_t(tokens[std::size_t(*step) * rows + r]) * d);
    Vec* to = reinterpret_cast<Vec*>(x + std::size_t(r) * d);
    for (int c = threadIdx.x; c < d / V; c += blockDim.x) to[c] = from[c];
}

// The widest of 8, 4, 2 (at most `widest`) that divides every size and whose access every
// pointer is aligned for, else 1.
int vector_width(std::initializer_list<std::size_t> sizes, std::initializer_list<const void*> pointers, int widest,
                 int element_bytes) {
    for (int v = widest; v > 1; v /= 2) {
        bool fits = true;
        for (std::size_t n : sizes) fits = fits && n % std::size_t(v) == 0;
        for (const void* p : pointers)
            fits = fits && reinterpret_cast<std::uintptr_t>(p) % std::size_t(v * element_bytes) == 0;
        if (fits) return v;
    }
    return 1;
}

// The RMSNorm kernels hold a row's slice in registers, so a row is read once: a block of
// row_threads(d) threads a row (a multiple of 32), thread t the quads t, t + T, ... (Q of
// them, the last ones past d idle). (A warp a row read the row twice: the second pass
// missed L1 at 4096 columns, and the backward ran at 2 TB/s.)
template <int Q>
struct RowSlice {
    float4 v[Q];
};
constexpr int kMaxRowQuads = 8, kGainRows = 16;
int row_quads(int d) {
    int q = 1;
    while (q < kMaxRowQuads && d > 4 * 256 * q) q *= 2;
    return q;
}
int row_threads(int d) {
    const int quads = (d / 4 + row_quads(d) - 1) / row_quads(d);
    return (quads + 31) / 32 * 32;
}
// The column of quad j of this thread, or -1 past the row's end.
__device__ inline int quad_column(int j, int d) {
    const int c = 4 * (int(threadIdx.x) + j * int(blockDim.x));
    return c < d ? c : -1;
}
// The block's sum of v: each warp's tree, then the warps' sums in order (the same bits on
// every run); `shared` holds blockDim.x / 32 floats, free again when this returns.
__device__ inline float block_sum(float v, float* shared) {
    v = warp_sum(v);
    if ((threadIdx.x & 31) == 0) shared[threadIdx.x / 32] = v;
    __syncthreads();
    float total = 0.0f;
    for (int w = 0; w < int(blockDim.x / 32); ++w) total += shared[w];
    __syncthreads();
    return total;
}

// A block a row: x = a (+ BF16 y, the residual add, stored to out), then y_norm = BF16(x /
// rms(x) x gain) and inv_rms.
template <int Q, bool Add>
__global__ void rmsnorm_rows_kernel(const float* a, const bf16* y, const float* gain, int d, float* out, bf16* normed,
                                    float* inv_rms) {
    __shared__ float sums[32];
    const std::size_t o = std::size_t(blockIdx.x) * d;
    RowSlice<Q> x;
    float s = 0.0f;
#pragma unroll
    for (int j = 0; j < Q; ++j) {
        const int c = quad_column(j, d);
        if (c < 0) continue;
        x.v[j] = *reinterpret_cast<const float4*>(a + o + c);
        if constexpr (Add) {
            const float4 b = load_bf16x4(y, o + c);
            x.v[j] = make_float4(x.v[j].x + b.x, x.v[j].y + b.y, x.v[j].z + b.z, x.v[j].w + b.w);
            *reinterpret_cast<float4*>(out + o + c) = x.v[j];
        }
        s += x.v[j].x * x.v[j].x + x.v[j].y * x.v[j].y + x.v[j].z * x.v[j].z + x.v[j].w * x.v[j].w;
    }
    const float inv = 1.0f / sqrtf(block_sum(s, sums) / float(d) + 1e-5f);
    if (threadIdx.x == 0) inv_rms[blockIdx.x] = inv;
#pragma unroll
    for (int j = 0; j < Q; ++j) {
        const int c = quad_column(j, d);
        if (c < 0) continue;
        const float4 g = *reinterpret_cast<const float4*>(gain + c);
        store_bf16x4(
            normed, o + c,
            make_float4(x.v[j].x * inv * g.x, x.v[j].y * inv * g.y, x.v[j].z * inv * g.z, x.v[j].w * inv * g.w));
    }
}

// A block per kGainRows rows, one row after the other: dx += the input gradient of each row
// (the row's dot product of x o gain o dy reduced over the block), and the gain gradient's
// partial sum over the block's rows kept per column in registers, written once: one read of
// x and dy for both gradients. dx's old values are loaded with x and dy, before the block's
// reduction, so a row waits for memory once (loading them after it ran at about 2.2 TB/s on
// an H100 at 4096 columns). dx16, if not null, gets dx's new values in BF16 too, for the
// BF16 GEMMs that read them next (instead of a pass of their own).
template <int Q>
__global__ void rmsnorm_backward_rows_kernel(const float* x, const float* gain, const float* inv_rms, const bf16* dy,
                                             int rows, int d, float* dx, bf16* dx16, float* partials) {
    __shared__ float sums[32];
    RowSlice<Q> g, acc;
#pragma unroll
    for (int j = 0; j < Q; ++j) {
        const int c = quad_column(j, d);
        g.v[j] = c < 0 ? make_float4(0.0f, 0.0f, 0.0f, 0.0f) : *reinterpret_cast<const float4*>(gain + c);
        acc.v[j] = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
    }
    const int first = blockIdx.x * kGainRows, last = min(rows, first + kGainRows);
    for (int r = first; r < last; ++r) {
        const std::size_t o = std::size_t(r) * d;
        const float inv = inv_rms[r];
        RowSlice<Q> xv, dv, old;
        float s = 0.0f;
#pragma unroll
        for (int j = 0; j < Q; ++j) {
            const int c = quad_column(j, d);
            if (c < 0) continue;
            xv.v[j] = *reinterpret_cast<const float4*>(x + o + c);
            dv.v[j] = load_bf16x4(dy, o + c);
            old.v[j] = *reinterpret_cast<const float4*>(dx + o + c);
        }
#pragma unroll
        for (int j = 0; j < Q; ++j) {
            if (quad_column(j, d) < 0) continue;
            s += xv.v[j].x * g.v[j].x * dv.v[j].x + xv.v[j].y * g.v[j].y * dv.v[j].y +
                 xv.v[j].z * g.v[j].z * dv.v[j].z + xv.v[j].w * g.v[j].w * dv.v[j].w;
        }
        const float k = block_sum(s, sums) * inv * inv * inv / float(d);
#pragma unroll
        for (int j = 0; j < Q; ++j) {
            const int c = quad_column(j, d);
            if (c < 0) continue;
            const float4 a = xv.v[j], gj = g.v[j], dj = dv.v[j], was = old.v[j];
            const float4 out =
                make_float4(was.x + (inv * gj.x * dj.x - a.x * k), was.y + (inv * gj.y * dj.y - a.y * k),
                            was.z + (inv * gj.z * dj.z - a.z * k), was.w + (inv * gj.w * dj.w - a.w * k));
            *reinterpret_cast<float4*>(dx + o + c) = out;
            if (dx16) store_bf16x4(dx16, o + c, out);
            acc.v[j] = make_float4(acc.v[j].x + dj.x * a.x * inv, acc.v[j].y + dj.y * a.y * inv,
                                   acc.v[j].z + dj.z * a.z * inv, acc.v[j].w + dj.w * a.w * inv);
        }
    }
#pragma unroll
    for (int j = 0; j < Q; ++j) {
        const int c = quad_column(j, d);
        if (c >= 0) *reinterpret_cast<float4*>(partials + std::size_t(blockIdx.x) * d + c) = acc.v[j];
    }
}

__global__ void sum_parts_kernel(const float* partials, int parts, int d, float* out) {
    for (int c = blockIdx.x * blockDim.x + threadIdx.x; c < d; c += gridDim.x * blockDim.x) {
        float s = 0.0f;
        for (int p = 0; p < parts; ++p) s += partials[std::size_t(p) * d + c];
        out[c] = s;
    }
}

// V channel pairs a thread: channels i .. i + V - 1 of a head and their partners half on.
template <int V>
__global__ void rotary_kernel(bf16* x, int ld, int rows, int heads, int head_size, int sequence, const float* cos,
                              const float* sin, bool inverse) {
    const int half = head_size / 2, groups = half / V, per_row = heads * groups;
    const unsigned n = unsigned(rows) * unsigned(per_row);  // below 2^31: rotary() checks
    for (unsigned i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
        const int r = int(i / unsigned(per_row)), t = int(i % unsigned(per_row));
        const int pair = (t % groups) * V, pos = r % sequence;
        bf16* v = x + std::size_t(r) * ld + std::size_t(t / groups) * head_size + pair;
        const Bf16s<V> a = load_bf16s<V>(v), b = load_bf16s<V>(v + half);
        const Floats<V> c = load_floats<V>(cos + std::size_t(pos) * half + pair);
        const Floats<V> s0 = load_floats<V>(sin + std::size_t(pos) * half + pair);
        Bf16s<V> ra, rb;
#pragma unroll
        for (int e = 0; e < V; ++e) {
            const float fa = __bfloat162float(a.v[e]), fb = __bfloat162float(b.v[e]);
            const float s = inverse ? -s0.v[e] : s0.v[e];
            ra.v[e] = __float2bfloat16(fa * c.v[e] - fb * s);
            rb.v[e] = __float2bfloat16(fb * c.v[e] + fa * s);
        }
        store_bf16s<V>(v, ra);
        store_bf16s<V>(v + half, rb);
    }
}

__global__ void causal_softmax_kernel(const float* s, int count, int n, float scale, bf16* p) {
    const int r = global_warp(), lane = threadIdx.x & 31;
    if (r >= count) return;
    const int i = r % n;
    const float* row = s + std::size_t(r) * n;
    float top = -FLT_MAX;
    for (int j = lane; j <= i; j += 32) top = fmaxf(top, row[j] * scale);
    top = warp_max(top);
    float sum = 0.0f;
    for (int j = lane; j <= i; j += 32) sum += expf(row[j] * scale - top);
    sum = warp_sum(sum);
    bf16* out = p + std::size_t(r) * n;
    for (int j = lane; j < n; j += 32) out[j] = __float2bfloat16(j <= i ? expf(row[j] * scale - top) / sum : 0.0f);
}

__global__ void causal_softmax_backward_kernel(const bf16* p, const float* dp, int count, int n, float scale,
                                               bf16* ds) {
    const int r = global_warp(), lane = threadIdx.x & 31;
    if (r >= count) return;
    const int i = r % n;
    const bf16* pr = p + std::size_t(r) * n;
    const float* dpr = dp + std::size_t(r) * n;
    float d = 0.0f;
    for (int j = lane; j <= i; j += 32) d += __bfloat162float(pr[j]) * dpr[j];
    d = warp_sum(d);
    bf16* out = ds + std::size_t(r) * n;
    for (int j = lane; j < n; j += 32)
        out[j] = __float2bfloat16(j <= i ? __bfloat162float(pr[j]) * (dpr[j] - d) * scale : 0.0f);
}

__global__ void store_columns_kernel(const float* src, int rows, int width, bf16* dst, int ld) {
    const std::size_t n = std::size_t(rows) * width;
    for (std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; i < n;
         i += std::size_t(gridDim.x) * blockDim.x)
        dst[i / width * ld + i % width] = __float2bfloat16(src[i]);
}

// V columns a thread; row r's gate is gate_up's columns 0 .. f - 1, its up f .. 2f - 1.
template <int V>
__global__ void swiglu_forward_kernel(const bf16* gu, int rows, int f, bf16* act) {
    const unsigned per_row = unsigned(f / V), n = unsigned(rows) * per_row;  // below 2^31: the launchers check
    for (unsigned i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
        const std::size_t r = i / per_row, c = i % per_row * V;
        const Bf16s<V> g = load_bf16s<V>(gu + r * 2 * f + c), u = load_bf16s<V>(gu + r * 2 * f + f + c);
        Bf16s<V> out;
#pragma unroll
        for (int e = 0; e < V; ++e)
            out.v[e] = __float2bfloat16(swiglu::value(__bfloat162float(g.v[e]), __bfloat162float(u.v[e])));
        store_bf16s<V>(act + r * f + c, out);
    }
}
template <int V>
__global__ void swiglu_backward_kernel(const bf16* gu, const bf16* dact, int rows, int f, bf16* dgu) {
    const unsigned per_row = unsigned(f / V), n = unsigned(rows) * per_row;  // below 2^31: the launchers check
    for (unsigned i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
        const std::size_t r = i / per_row, c = i % per_row * V;
        const Bf16s<V> g = load_bf16s<V>(gu + r * 2 * f + c), u = load_bf16s<V>(gu + r * 2 * f + f + c);
        const Bf16s<V> d = load_bf16s<V>(dact + r * f + c);
        Bf16s<V> dg, du;
#pragma unroll
        for (int e = 0; e < V; ++e) {
            const float gf = __bfloat162float(g.v[e]), uf = __bfloat162float(u.v[e]), df = __bfloat162float(d.v[e]);
            const float sg = swiglu::sigmoid(gf);
            du.v[e] = __float2bfloat16(swiglu::up_grad_of(df, gf, sg));
            dg.v[e] = __float2bfloat16(swiglu::gate_grad_of(df, gf, uf, sg));
        }
        store_bf16s<V>(dgu + r * 2 * f + c, dg);
        store_bf16s<V>(dgu + r * 2 * f + f + c, du);
    }
}

// out = a + BF16 y, V elements a thread (the rest, n mod V, by the first threads).
template <int V>
__global__ void add_bf16_to_kernel(const float* a, const bf16* y, std::size_t n, float* out) {
    const std::size_t vectors = n / V, stride = std::size_t(gridDim.x) * blockDim.x;
    const std::size_t first = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x;
    for (std::size_t i = first; i < vectors; i += stride) {
        Floats<V> x = load_floats<V>(a + i * V);
        const Bf16s<V> b = load_bf16s<V>(y + i * V);
#pragma unroll
        for (int e = 0; e < V; ++e) x.v[e] += __bfloat162float(b.v[e]);
        store_floats<V>(out + i * V, x);
    }
    for (std::size_t i = vectors * V + first; i < n; i += stride) out[i] = a[i] + __bfloat162float(y[i]);
}
__global__ void add_f32_kernel(float* x, const float* y, std::size_t n) {
    for (std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; i < n;
         i += std::size_t(gridDim.x) * blockDim.x)
        x[i] += y[i];
}

// A warp per row of 256 logits, 8 a lane.
__global__ void cross_entropy_kernel(const bf16* logits, const std::uint8_t* targets, const int* step, int rows,
                                     float* row_loss, bf16* dlogits) {
    const int r = global_warp(), lane = threadIdx.x & 31;
    if (r >= rows) return;
    const int t = targets[std::size_t(*step) * rows + r];
    float z[8];
    float top = -FLT_MAX;
    for (int e = 0; e < 8; ++e) top = fmaxf(top, z[e] = __bfloat162float(logits[std::size_t(r) * 256 + lane + 32 * e]));
    top = warp_max(top);
    float sum = 0.0f;
    for (int e = 0; e < 8; ++e) sum += expf(z[e] - top);
    sum = warp_sum(sum);
    const float inv_rows = 1.0f / float(rows);
    for (int e = 0; e < 8; ++e) {
        const int c = lane + 32 * e;
        dlogits[std::size_t(r) * 256 + c] =
            __float2bfloat16((expf(z[e] - top) / sum - (c == t ? 1.0f : 0.0f)) * inv_rows);
        if (c == t) row_loss[r] = logf(sum) - (z[e] - top);
    }
}

// One block: thread t sums rows t, t + 256, ... in order, then a fixed tree.
__global__ void finish_step_kernel(const float* row_loss, int rows, int* step, float* losses) {
    __shared__ double lanes[kThreads];
    double s = 0;
    for (int r = threadIdx.x; r < rows; r += kThreads) s += row_loss[r];
    lanes[threadIdx.x] = s;
    __syncthreads();
    for (int half = kThreads / 2; half > 0; half /= 2) {
        if (int(threadIdx.x) < half) lanes[threadIdx.x] += lanes[threadIdx.x + half];
        __syncthreads();
    }
    if (threadIdx.x == 0) {
        losses[*step] = float(lanes[0] / rows);
        *step += 1;
    }
}

// A warp per tensor (kernels::delayed_update_warp).
__global__ void delayed_update_all_kernel(kernels::DeviceScaling* states, unsigned* amax_bits, float* history,
                                          const float* numerators, int tensors, int length, bool algorithm_max) {
    const int j = int((blockIdx.x * blockDim.x + threadIdx.x) / 32);
    if (j >= tensors) return;  // whole warps: blockDim.x is a multiple of 32
    const float amax = __uint_as_float(amax_bits[j]);
    __syncwarp();  // every lane has read the amax before lane 0 clears it
    if (threadIdx.x % 32 == 0) amax_bits[j] = 0;
    kernels::delayed_update_warp(history + std::size_t(j) * length, length, algorithm_max, numerators[j], amax,
                                 states + j);
}

constexpr int kSquareBlocks = 1024;
// Four floats a load and two loads in flight per thread: enough reads under way to run at
// the memory's speed (a float and one dependent double add a step stalled on latency).
__global__ void sum_squares_kernel(const float* g, std::size_t n, double* partials) {
    __shared__ double lanes[kThreads];
    const std::size_t quads = n / 4, stride = std::size_t(gridDim.x) * blockDim.x;
    const float4* g4 = reinterpret_cast<const float4*>(g);
    const auto squares = [](float4 a) {
        return double(a.x) * a.x + double(a.y) * a.y + double(a.z) * a.z + double(a.w) * a.w;
    };
    double s0 = 0, s1 = 0;
    std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x;
    for (; i + stride < quads; i += 2 * stride) {
        const float4 a = g4[i], b = g4[i + stride];
        s0 += squares(a);
        s1 += squares(b);
    }
    if (i < quads) s0 += squares(g4[i]);
    for (std::size_t t = quads * 4 + blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; t < n; t += stride)
        s0 += double(g[t]) * g[t];
    lanes[threadIdx.x] = s0 + s1;
    __syncthreads();
    for (int half = kThreads / 2; half > 0; half /= 2) {
        if (int(threadIdx.x) < half) lanes[threadIdx.x] += lanes[threadIdx.x + half];
        __syncthreads();
    }
    if (threadIdx.x == 0) partials[blockIdx.x] = lanes[0];
}
// One block: each thread adds every kThreads-th partial from its own, then a fixed tree.
__global__ void clip_factor_kernel(const double* partials, int count, float clip, float* factor) {
    __shared__ double lanes[kThreads];
    double s = 0;
    for (int i = int(threadIdx.x); i < count; i += kThreads) s += partials[i];
    lanes[threadIdx.x] = s;
    __syncthreads();
    for (int half = kThreads / 2; half > 0; half /= 2) {
        if (int(threadIdx.x) < half) lanes[threadIdx.x] += lanes[threadIdx.x + half];
        __syncthreads();
    }
    if (threadIdx.x == 0) *factor = lanes[0] > double(clip) * clip ? float(clip / sqrt(lanes[0])) : 1.0f;
}

// The kernels that split an index into row and column do it in 32 bits.
void check_count(std::size_t n, const char* what) {
    if (n >= (std::size_t(1) << 31))
        throw std::invalid_argument(std::string(what) + ": more than 2^31 elements in one call");
}

const bf16* b(const void* p) { return static_cast<const bf16*>(p); }
bf16* b(void* p) { return static_cast<bf16*>(p); }

}  // namespace

void embed_forward(const float* table, const std::uint8_t* tokens, const int* step, int rows, int d, float* x,
                   cudaStream_t stream) {
    const int v = vector_width({std::size_t(d)}, {table, x}, 4, 4);
    (v == 4 ? embed_forward_kernel<4> : embed_forward_kernel<1>)<<<rows, kThreads, 0, stream>>>(table, tokens, step,
                                                                                                rows, d, x);
}
void embed_backward(const float* dx, const int* offsets, const int* positions, const int* step, int rows, int d,
                    float* table_grad, cudaStream_t stream) {
    const dim3 grid(unsigned((d + kEmbedThreads - 1) / kEmbedThreads), 256);
    embed_backward_kernel<<<grid, kEmbedThreads, 0, stream>>>(dx, offsets, positions, step, rows, d, table_grad);
}
// Calls launch(std::integral_constant<int, Q>{}) with Q = row_quads(d).
template <class Launch>
void with_row_quads(int d, const char* what, Launch&& launch) {
    if (d % 4 != 0 || d > 4 * kMaxRowQuads * 1024)
        throw std::invalid_argument(std::string(what) + ": width " + std::to_string(d) +
                                    " is not a multiple of 4 of at most " + std::to_string(4 * kMaxRowQuads * 1024));
    switch (row_quads(d)) {
    case 1:
        return launch(std::integral_constant<int, 1>{});
    case 2:
        return launch(std::integral_constant<int, 2>{});
    case 4:
        return launch(std::integral_constant<int, 4>{});
    default:
        return launch(std::integral_constant<int, kMaxRowQuads>{});
    }
}
void rmsnorm_forward(const float* x, const float* gain, int rows, int d, void* y, float* inv_rms, cudaStream_t stream) {
    with_row_quads(d, "rmsnorm", [&](auto q) {
        rmsnorm_rows_kernel<decltype(q)::value, false>
            <<<rows, row_threads(d), 0, stream>>>(x, nullptr, gain, d, nullptr, b(y), inv_rms);
    });
}
void add_rmsnorm_forward(const float* a, const void* y, const float* gain, int rows, int d, float* out, void* normed,
                         float* inv_rms, cudaStream_t stream) {
    with_row_quads(d, "add_rmsnorm", [&](auto q) {
        rmsnorm_rows_kernel<decltype(q)::value, true>
            <<<rows, row_threads(d), 0, stream>>>(a, b(y), gain, d, out, b(normed), inv_rms);
    });
}
int gain_partial_count(int rows) { return (rows + kGainRows - 1) / kGainRows; }
void rmsnorm_backward(const float* x, const float* gain, const float* inv_rms, const void* dy, int rows, int d,
                      float* dx, void* dx16, float* partials, float* gain_grad, cudaStream_t stream) {
    const int parts = gain_partial_count(rows);
    with_row_quads(d, "rmsnorm_backward", [&](auto q) {
        rmsnorm_backward_rows_kernel<decltype(q)::value>
            <<<parts, row_threads(d), 0, stream>>>(x, gain, inv_rms, b(dy), rows, d, dx, b(dx16), partials);
    });
    sum_parts_kernel<<<(d + 127) / 128, 128, 0, stream>>>(partials, parts, d, gain_grad);
}
void rotary(void* x, int ld, int rows, int heads, int head_size, int sequence, const float* cos, const float* sin,
            bool inverse, cudaStream_t stream) {
    const int half = head_size / 2;
    check_count(std::size_t(rows) * heads * half, "rotary");
    const int v = std::min(vector_width({std::size_t(half), std::size_t(ld)}, {x}, 8, 2),
                           vector_width({std::size_t(half)}, {cos, sin}, 8, 4));
    const std::size_t threads = std::size_t(rows) * heads * (half / v);
    const auto kernel = v == 8   ? rotary_kernel<8>
                        : v == 4 ? rotary_kernel<4>
                        : v == 2 ? rotary_kernel<2>
                                 : rotary_kernel<1>;
    kernel<<<grid_for(threads), kThreads, 0, stream>>>(b(x), ld, rows, heads, head_size, sequence, cos, sin, inverse);
}
void causal_softmax(const float* s, int count, int n, float scale, void* p, cudaStream_t stream) {
    causal_softmax_kernel<<<warps_grid(std::size_t(count)), kThreads, 0, stream>>>(s, count, n, scale, b(p));
}
void causal_softmax_backward(const void* p, const float* dp, int count, int n, float scale, void* ds,
                             cudaStream_t stream) {
    causal_softmax_backward_kernel<<<warps_grid(std::size_t(count)), kThreads, 0, stream>>>(b(p), dp, count, n, scale,
                                                                                            b(ds));
}
void store_columns(const float* src, int rows, int width, void* dst, int ld, cudaStream_t stream) {
    store_columns_kernel<<<grid_for(std::size_t(rows) * width), kThreads, 0, stream>>>(src, rows, width, b(dst), ld);
}
void swiglu_forward(const void* gate_up, int rows, int f, void* act, cudaStream_t stream) {
    check_count(std::size_t(rows) * f, "swiglu");
    const int v = vector_width({std::size_t(f)}, {gate_up, act}, 8, 2);
    const auto kernel = v == 8   ? swiglu_forward_kernel<8>
                        : v == 4 ? swiglu_forward_kernel<4>
                        : v == 2 ? swiglu_forward_kernel<2>
                                 : swiglu_forward_kernel<1>;
    kernel<<<grid_for(std::size_t(rows) * (f / v)), kThreads, 0, stream>>>(b(gate_up), rows, f, b(act));
}
void swiglu_backward(const void* gate_up, const void* dact, int rows, int f, void* dgate_up, cudaStream_t stream) {
    check_count(std::size_t(rows) * f, "swiglu");
    const int v = vector_width({std::size_t(f)}, {gate_up, dact, dgate_up}, 8, 2);
    const auto kernel = v == 8   ? swiglu_backward_kernel<8>
                        : v == 4 ? swiglu_backward_kernel<4>
                        : v == 2 ? swiglu_backward_kernel<2>
                                 : swiglu_backward_kernel<1>;
    kernel<<<grid_for(std::size_t(rows) * (f / v)), kThreads, 0, stream>>>(b(gate_up), b(dact), rows, f, b(dgate_up));
}
void add_bf16(float* x, const void* y, std::size_t n, cudaStream_t stream) {
    const bool wide = vector_width({}, {x}, 4, 4) == 4 && vector_width({}, {y}, 4, 2) == 4;
    (wide ? add_bf16_to_kernel<4> : add_bf16_to_kernel<1>)<<<grid_for(wide ? n / 4 : n), kThreads, 0, stream>>>(x, b(y),
                                                                                                                n, x);
}
void add_f32(float* x, const float* y, std::size_t n, cudaStream_t stream) {
    add_f32_kernel<<<grid_for(n), kThreads, 0, stream>>>(x, y, n);
}
void cross_entropy(const void* logits, const std::uint8_t* targets, const int* step, int rows, float* row_loss,
                   void* dlogits, cudaStream_t stream) {
    cross_entropy_kernel<<<warps_grid(std::size_t(rows)), kThreads, 0, stream>>>(b(logits), targets, step, rows,
                                                                                 row_loss, b(dlogits));
}
void finish_step(const float* row_loss, int rows, int* step, float* losses, cudaStream_t stream) {
    finish_step_kernel<<<1, kThreads, 0, stream>>>(row_loss, rows, step, losses);
}
void delayed_update_all(kernels::DeviceScaling* states, unsigned* amax_bits, float* history, const float* numerators,
                        int tensors, int length, bool algorithm_max, cudaStream_t stream) {
    constexpr int kWarpsPerBlock = 4;
    delayed_update_all_kernel<<<(tensors + kWarpsPerBlock - 1) / kWarpsPerBlock, 32 * kWarpsPerBlock, 0, stream>>>(
        states, amax_bits, history, numerators, tensors, length, algorithm_max);
}
int blocks_for_squares(std::size_t n) {
    return int(std::clamp<std::size_t>((n / 4 + kThreads - 1) / kThreads, 1, kSquareBlocks));
}
void sum_squares(const float* g, std::size_t n, double* partials, cudaStream_t stream) {
    sum_squares_kernel<<<blocks_for_squares(n), kThreads, 0, stream>>>(g, n, partials);
}
void clip_factor(const double* partials, int count, float clip, float* factor, cudaStream_t stream) {
    clip_factor_kernel<<<1, kThreads, 0, stream>>>(partials, count, clip, factor);
}

}  // namespace fp8lab::gpu::transformer
