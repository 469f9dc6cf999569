// SPDX-License-Identifier: Apache-2.0
// The transformer's kernels besides its GEMMs: a warp per row (norms, softmax rows, the
// loss) or per element, float32 inside, every sum in a fixed order (no atomics).
#include <cuda_bf16.h>

#include <algorithm>
#include <cfloat>

#include "gpu/src/delayed_update.cuh"
#include "gpu/src/transformer_kernels.hpp"

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

__global__ void embed_forward_kernel(const float* table, const std::uint8_t* tokens, const int* step, int rows, int d,
                                     float* x) {
    const std::size_t n = std::size_t(rows) * d;
    const std::uint8_t* t = tokens + std::size_t(*step) * rows;
    for (std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; i < n;
         i += std::size_t(gridDim.x) * blockDim.x)
        x[i] = table[std::size_t(t[i / d]) * d + i % d];
}

__global__ void embed_backward_kernel(const float* dx, const int* offsets, const int* positions, const int* step,
                                      int rows, int d, float* grad) {
    const int v = blockIdx.y;
    const int* o = offsets + std::size_t(*step) * 257;
    const int* p = positions + std::size_t(*step) * rows;
    for (int c = blockIdx.x * blockDim.x + threadIdx.x; c < d; c += gridDim.x * blockDim.x) {
        float sum = 0.0f;
        for (int k = o[v]; k < o[v + 1]; ++k) sum += dx[std::size_t(p[k]) * d + c];
        grad[std::size_t(v) * d + c] = sum;
    }
}

// A warp per row: the sum of squares lane-strided, then the tree.
__global__ void rmsnorm_forward_kernel(const float* x, const float* gain, int rows, int d, bf16* y, float* inv_rms) {
    const int r = global_warp(), lane = threadIdx.x & 31;
    if (r >= rows) return;
    const float* xr = x + std::size_t(r) * d;
    float s = 0.0f;
    for (int c = lane; c < d; c += 32) s += xr[c] * xr[c];
    const float inv = 1.0f / sqrtf(warp_sum(s) / float(d) + 1e-5f);
    if (lane == 0) inv_rms[r] = inv;
    for (int c = lane; c < d; c += 32) y[std::size_t(r) * d + c] = __float2bfloat16(xr[c] * inv * gain[c]);
}

__global__ void rmsnorm_backward_kernel(const float* x, const float* gain, const float* inv_rms, const bf16* dy,
                                        int rows, int d, float* dx) {
    const int r = global_warp(), lane = threadIdx.x & 31;
    if (r >= rows) return;
    const std::size_t o = std::size_t(r) * d;
    const float inv = inv_rms[r];
    float s = 0.0f;
    for (int c = lane; c < d; c += 32) s += x[o + c] * gain[c] * __bfloat162float(dy[o + c]);
    const float k = warp_sum(s) * inv * inv * inv / float(d);
    for (int c = lane; c < d; c += 32) dx[o + c] += inv * gain[c] * __bfloat162float(dy[o + c]) - x[o + c] * k;
}

constexpr int kPartialRows = 64;
__global__ void gain_partials_kernel(const float* x, const float* inv_rms, const bf16* dy, int rows, int d,
                                     float* partials) {
    const int part = blockIdx.y;
    for (int c = blockIdx.x * blockDim.x + threadIdx.x; c < d; c += gridDim.x * blockDim.x) {
        float s = 0.0f;
        for (int r = part * kPartialRows; r < min(rows, (part + 1) * kPartialRows); ++r)
            s += __bfloat162float(dy[std::size_t(r) * d + c]) * x[std::size_t(r) * d + c] * inv_rms[r];
        partials[std::size_t(part) * d + c] = s;
    }
}
__global__ void sum_parts_kernel(const float* partials, int parts, int d, float* out) {
    for (int c = blockIdx.x * blockDim.x + threadIdx.x; c < d; c += gridDim.x * blockDim.x) {
        float s = 0.0f;
        for (int p = 0; p < parts; ++p) s += partials[std::size_t(p) * d + c];
        out[c] = s;
    }
}

__global__ void rotary_kernel(bf16* x, int ld, int rows, int heads, int head_size, int sequence, const float* cos,
                              const float* sin, bool inverse) {
    const int half = head_size / 2;
    const std::size_t n = std::size_t(rows) * heads * half;
    for (std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; i < n;
         i += std::size_t(gridDim.x) * blockDim.x) {
        const int pair = int(i % half), h = int(i / half % heads), r = int(i / half / heads);
        const int pos = r % sequence;
        bf16* v = x + std::size_t(r) * ld + std::size_t(h) * head_size;
        const float a = __bfloat162float(v[pair]), b = __bfloat162float(v[pair + half]);
        const float c = cos[std::size_t(pos) * half + pair], s0 = sin[std::size_t(pos) * half + pair];
        const float s = inverse ? -s0 : s0;
        v[pair] = __float2bfloat16(a * c - b * s);
        v[pair + half] = __float2bfloat16(b * c + a * s);
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

__device__ inline float sigmoid(float x) { return 1.0f / (1.0f + expf(-x)); }

__global__ void swiglu_forward_kernel(const bf16* gu, int rows, int f, bf16* act) {
    const std::size_t n = std::size_t(rows) * f;
    for (std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; i < n;
         i += std::size_t(gridDim.x) * blockDim.x) {
        const std::size_t r = i / f, c = i % f;
        const float g = __bfloat162float(gu[r * 2 * f + c]), u = __bfloat162float(gu[r * 2 * f + f + c]);
        act[i] = __float2bfloat16(g * sigmoid(g) * u);
    }
}
__global__ void swiglu_backward_kernel(const bf16* gu, const bf16* dact, int rows, int f, bf16* dgu) {
    const std::size_t n = std::size_t(rows) * f;
    for (std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; i < n;
         i += std::size_t(gridDim.x) * blockDim.x) {
        const std::size_t r = i / f, c = i % f;
        const float g = __bfloat162float(gu[r * 2 * f + c]), u = __bfloat162float(gu[r * 2 * f + f + c]);
        const float d = __bfloat162float(dact[i]), sg = sigmoid(g);
        dgu[r * 2 * f + f + c] = __float2bfloat16(d * g * sg);
        dgu[r * 2 * f + c] = __float2bfloat16(d * u * sg * (1.0f + g * (1.0f - sg)));
    }
}

__global__ void add_bf16_kernel(float* x, const bf16* y, std::size_t n) {
    for (std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; i < n;
         i += std::size_t(gridDim.x) * blockDim.x)
        x[i] += __bfloat162float(y[i]);
}
__global__ void add_bf16_to_kernel(const float* a, const bf16* y, std::size_t n, float* out) {
    for (std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; i < n;
         i += std::size_t(gridDim.x) * blockDim.x)
        out[i] = a[i] + __bfloat162float(y[i]);
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
    float* h = history + std::size_t(j) * length;
    if (threadIdx.x % 32 == 0) {
        h[0] = __uint_as_float(amax_bits[j]);
        amax_bits[j] = 0;
    }
    __syncwarp();
    kernels::delayed_update_warp(h, length, algorithm_max, numerators[j], states + j);
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

const bf16* b(const void* p) { return static_cast<const bf16*>(p); }
bf16* b(void* p) { return static_cast<bf16*>(p); }

}  // namespace

void embed_forward(const float* table, const std::uint8_t* tokens, const int* step, int rows, int d, float* x,
                   cudaStream_t stream) {
    embed_forward_kernel<<<grid_for(std::size_t(rows) * d), kThreads, 0, stream>>>(table, tokens, step, rows, d, x);
}
void embed_backward(const float* dx, const int* offsets, const int* positions, const int* step, int rows, int d,
                    float* table_grad, cudaStream_t stream) {
    const dim3 grid(unsigned((d + 127) / 128), 256);
    embed_backward_kernel<<<grid, 128, 0, stream>>>(dx, offsets, positions, step, rows, d, table_grad);
}
void rmsnorm_forward(const float* x, const float* gain, int rows, int d, void* y, float* inv_rms, cudaStream_t stream) {
    rmsnorm_forward_kernel<<<warps_grid(std::size_t(rows)), kThreads, 0, stream>>>(x, gain, rows, d, b(y), inv_rms);
}
void rmsnorm_backward(const float* x, const float* gain, const float* inv_rms, const void* dy, int rows, int d,
                      float* dx, float* partials, float* gain_grad, cudaStream_t stream) {
    rmsnorm_backward_kernel<<<warps_grid(std::size_t(rows)), kThreads, 0, stream>>>(x, gain, inv_rms, b(dy), rows, d,
                                                                                    dx);
    const int parts = (rows + kPartialRows - 1) / kPartialRows;
    gain_partials_kernel<<<dim3(unsigned((d + 127) / 128), unsigned(parts)), 128, 0, stream>>>(x, inv_rms, b(dy), rows,
                                                                                               d, partials);
    sum_parts_kernel<<<(d + 127) / 128, 128, 0, stream>>>(partials, parts, d, gain_grad);
}
void rotary(void* x, int ld, int rows, int heads, int head_size, int sequence, const float* cos, const float* sin,
            bool inverse, cudaStream_t stream) {
    rotary_kernel<<<grid_for(std::size_t(rows) * heads * head_size / 2), kThreads, 0, stream>>>(
        b(x), ld, rows, heads, head_size, sequence, cos, sin, inverse);
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
    swiglu_forward_kernel<<<grid_for(std::size_t(rows) * f), kThreads, 0, stream>>>(b(gate_up), rows, f, b(act));
}
void swiglu_backward(const void* gate_up, const void* dact, int rows, int f, void* dgate_up, cudaStream_t stream) {
    swiglu_backward_kernel<<<grid_for(std::size_t(rows) * f), kThreads, 0, stream>>>(b(gate_up), b(dact), rows, f,
                                                                                     b(dgate_up));
}
void add_bf16(float* x, const void* y, std::size_t n, cudaStream_t stream) {
    add_bf16_kernel<<<grid_for(n), kThreads, 0, stream>>>(x, b(y), n);
}
void add_bf16_to(const float* a, const void* y, std::size_t n, float* out, cudaStream_t stream) {
    add_bf16_to_kernel<<<grid_for(n), kThreads, 0, stream>>>(a, b(y), n, out);
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
