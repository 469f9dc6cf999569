// SPDX-License-Identifier: Apache-2.0
// The training step's kernels: fills, fused cast + transpose + amax (with GELU forward or
// backward folded in), BF16 GELU, MSE loss with a fixed-order reduction, AdamW, scaling.
#include <cuda_bf16.h>
#include <cuda_fp8.h>

#include <algorithm>
#include <cfloat>
#include <stdexcept>

#include "gpu/src/kernels/cast_source.cuh"
#include "gpu/src/kernels/cast_stats.cuh"
#include "gpu/src/kernels/delayed_update.cuh"
#include "gpu/src/kernels/train_kernels.hpp"

namespace fp8lab::gpu::train {
namespace {

constexpr int kThreads = 256;

int grid_for(std::size_t n, int per_thread = 1) {
    const std::size_t blocks = (n + std::size_t(kThreads) * per_thread - 1) / (std::size_t(kThreads) * per_thread);
    return int(std::clamp<std::size_t>(blocks, 1, 65535));
}

__global__ void f32_to_bf16_kernel(const float* in, __nv_bfloat16* out, std::size_t n) {
    for (std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; i < n;
         i += std::size_t(gridDim.x) * blockDim.x)
        out[i] = __float2bfloat16(in[i]);
}

// A 64 x 64 tile per block of 16 x 16 threads, each thread a 4 x 4 square: its four
// row loads (8 or 16 bytes each) are all in flight before any use, its codes go to `out`
// as one word per row and, transposed in registers (byte permutes), as one word per
// column through shared memory to `out_t`, so that every store is a coalesced word.
// (Two elements a thread with a load, a convert and a store per pair left the loads one
// at a time behind stores that might alias them: 2.3 TB/s and 37 instructions an element
// for a plain BF16 cast on an H200, Nsight Compute.)
constexpr int kTile = 64, kSide = 16, kQuad = 4;
static_assert(kSide * kQuad == kTile);

// words[i] holds the codes of row i (columns 0..3, column 0 in the lowest byte); returns
// in words[j] the codes of column j (rows 0..3, row 0 in the lowest byte).
__device__ inline void transpose_bytes_4x4(std::uint32_t (&words)[4]) {
    const std::uint32_t a = __byte_perm(words[0], words[1], 0x5140), b = __byte_perm(words[0], words[1], 0x7362);
    const std::uint32_t c = __byte_perm(words[2], words[3], 0x5140), d = __byte_perm(words[2], words[3], 0x7362);
    words[0] = __byte_perm(a, c, 0x5410);
    words[1] = __byte_perm(a, c, 0x7632);
    words[2] = __byte_perm(b, d, 0x5410);
    words[3] = __byte_perm(b, d, 0x7632);
}

// One block's tile of a cast + transpose, the one at (row0, col0): load(r, c, i) gives the
// four values at (r, c .. c + 3), the thread's row i of 4.
template <class Load>
__device__ inline void cast_transpose_tile(Load&& load, int row0, int col0, int rows, int cols, const CastTarget& t) {
    __shared__ std::uint32_t by_column[kTile][kSide + 1];  // [column][group of 4 rows]
    const __nv_fp8_interpretation_t format = t.e4m3 ? __NV_E4M3 : __NV_E5M2;
    const float scale = t.scaling->scale;
    const int r = row0 + kQuad * threadIdx.y, c = col0 + kQuad * threadIdx.x;
    // rows and cols are multiples of 16: a thread's square is all inside or all outside.
    const bool inside = r < rows && c < cols;
    float local = 0.0f;
    std::uint32_t words[kQuad] = {0, 0, 0, 0};
    CastTally tally;  // numerics recording only
    if (inside) {
        float4 v[kQuad];
#pragma unroll
        for (int i = 0; i < kQuad; ++i) v[i] = load(r + i, c, i);
#pragma unroll
        for (int i = 0; i < kQuad; ++i) {
            local = fmaxf(local, abs_max4(v[i]));
            words[i] = to_fp8x4(v[i], scale, format);
            if (t.stats) tally.add(v[i], words[i], scale, t.scaling->scale_inv, format);
        }
        if (t.out)
#pragma unroll
            for (int i = 0; i < kQuad; ++i)
                *reinterpret_cast<std::uint32_t*>(t.out + std::size_t(r + i) * cols + c) = words[i];
    }
    if (t.out_t) {  // the same for the whole block
        transpose_bytes_4x4(words);
#pragma unroll
        for (int j = 0; j < kQuad; ++j) by_column[kQuad * threadIdx.x + j][threadIdx.y] = words[j];
        __syncthreads();
        const int id = threadIdx.y * kSide + threadIdx.x;
#pragma unroll
        for (int pass = 0; pass < kTile / kSide; ++pass) {  // 16 threads write one column's 64 rows
            const int column = id / kSide + kSide * pass, group = id % kSide;
            const int tc = col0 + column, tr = row0 + kQuad * group;
            if (tc < cols && tr < rows)
                *reinterpret_cast<std::uint32_t*>(t.out_t + std::size_t(tc) * t.ld_t + tr) = by_column[column][group];
        }
    }
    if (t.stats) publish_stats(tally, t.stats);  // the same for the whole block
    publish_amax<kSide * kSide / 32>(local, t.amax_bits);
}

template <Source K>
__global__ void __launch_bounds__(kSide* kSide) cast_transpose_kernel(CastSource s, int rows, int cols, CastTarget t) {
    float squares = 0.0f;
    cast_transpose_tile([&](int r, int c, int) { return load_quad<K>(s, r, c, squares); }, blockIdx.y * kTile,
                        blockIdx.x * kTile, rows, cols, t);
    if constexpr (K == Source::MseGradBf16)
        publish_sum<kSide * kSide / 32>(squares, t.loss_partials + blockIdx.y * gridDim.x + blockIdx.x);
}

template <Source K>
__global__ void amax_kernel(CastSource s, int rows, int cols, unsigned* amax_bits) {
    float local = 0.0f;
    const std::size_t quads = std::size_t(rows) * cols / kQuad;  // cols are multiples of 16
    for (std::size_t q = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; q < quads;
         q += std::size_t(gridDim.x) * blockDim.x) {
        const std::size_t i = q * kQuad;
        local = fmaxf(local, abs_max4(load_quad<K>(s, int(i / cols), int(i % cols))));
    }
    publish_amax<kThreads / 32>(local, amax_bits);
}

// emu::current_scale: amax 0, Inf or NaN gives scale 1; else max / amax, Inf -> FLT_MAX.
__global__ void current_scale_kernel(const unsigned* amax_bits, float max_finite, DeviceScaling* scaling) {
    const float amax = __uint_as_float(*amax_bits);
    float scale = 1.0f;
    if (amax != 0.0f && isfinite(amax)) {
        scale = __fdiv_rn(max_finite, amax);
        if (isinf(scale)) scale = FLT_MAX;
    }
    scaling->scale = scale;
    scaling->scale_inv = __fdiv_rn(1.0f, scale);
}

__global__ void gelu_forward_kernel(const __nv_bfloat162* h, __nv_bfloat162* a, std::size_t pairs) {
    for (std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; i < pairs;
         i += std::size_t(gridDim.x) * blockDim.x) {
        const float2 x = __bfloat1622float2(h[i]);
        a[i] = __floats2bfloat162_rn(gelu(x.x), gelu(x.y));
    }
}

__global__ void gelu_backward_kernel(__nv_bfloat162* g, const __nv_bfloat162* h, std::size_t pairs) {
    for (std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; i < pairs;
         i += std::size_t(gridDim.x) * blockDim.x) {
        const float2 d = __bfloat1622float2(g[i]), x = __bfloat1622float2(h[i]);
        g[i] = __floats2bfloat162_rn(d.x * gelu_grad(x.x), d.y * gelu_grad(x.y));
    }
}

// A fixed grid and a fixed tree: the partial sums are the same on every run.
__device__ float block_sum(float v) {
    __shared__ float shared[kThreads];
    shared[threadIdx.x] = v;
    __syncthreads();
    for (int half = kThreads / 2; half > 0; half /= 2) {
        if (int(threadIdx.x) < half) shared[threadIdx.x] += shared[threadIdx.x + half];
        __syncthreads();
    }
    return shared[0];
}

__global__ void mse_kernel(const __nv_bfloat162* y, const __nv_bfloat162* target, std::size_t pairs, int row_pairs,
                           const float* row_mask, float g_scale, __nv_bfloat162* grad, float* partials) {
    float local = 0.0f;
    for (std::size_t i = blockIdx.x * std::size_t(kThreads) + threadIdx.x; i < pairs;
         i += std::size_t(gridDim.x) * kThreads) {
        const float2 a = __bfloat1622float2(y[i]), b = __bfloat1622float2(target[i]);
        const bool out = row_mask && row_mask[i / std::size_t(row_pairs)] == 0.0f;  // a row the loss leaves out
        const float d0 = out ? 0.0f : a.x - b.x, d1 = out ? 0.0f : a.y - b.y;
        local += d0 * d0;
        local += d1 * d1;
        grad[i] = __floats2bfloat162_rn(d0 * g_scale, d1 * g_scale);
    }
    const float sum = block_sum(local);
    if (threadIdx.x == 0) partials[blockIdx.x] = sum;
}

// Four weights per thread and iteration: 16-byte loads and stores of w, m, v and grad.
// Scaled: every gradient times *p.grad_scale first (an instance of its own, so the unscaled
// kernel's code is what it was).
template <bool Scaled>
__global__ void adamw_kernel(float4* w, float4* m, float4* v, const float4* grad, std::size_t quads, AdamParams p,
                             const int* step, int step_offset, __nv_bfloat162* w_bf16) {
    const float2 c = adamw_corrections(p, *step + 1 + step_offset);
    p.learning_rate = adamw_rate(p, *step + step_offset);
    float f = 1.0f;
    if constexpr (Scaled) f = *p.grad_scale;
    for (std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; i < quads;
         i += std::size_t(gridDim.x) * blockDim.x) {
        float4 g = grad[i];
        if constexpr (Scaled) g = make_float4(g.x * f, g.y * f, g.z * f, g.w * f);
        const float4 wi = adamw_quad(w, m, v, i, g, p, c);
        if (w_bf16) {
            w_bf16[2 * i] = __floats2bfloat162_rn(wi.x, wi.y);
            w_bf16[2 * i + 1] = __floats2bfloat162_rn(wi.z, wi.w);
        }
    }
}

// AdamW on a rows x cols weight (adamw_kernel's arithmetic) whose new values go on through
// cast_transpose_tile: the FP8 codes the next step's GEMMs read, from the same pass.
template <bool Scaled>
__global__ void __launch_bounds__(kSide* kSide)
    adamw_cast_kernel(float4* w, float4* m, float4* v, const float4* grad, int rows, int cols, AdamParams p,
                      const int* step, int step_offset, CastTarget t) {
    const float2 c = adamw_corrections(p, *step + 1 + step_offset);
    p.learning_rate = adamw_rate(p, *step + step_offset);
    float f = 1.0f;
    if constexpr (Scaled) f = *p.grad_scale;
    cast_transpose_tile(
        [&](int r, int col, int) {
            const std::size_t i = (std::size_t(r) * cols + col) / kQuad;
            float4 g = grad[i];
            if constexpr (Scaled) g = make_float4(g.x * f, g.y * f, g.z * f, g.w * f);
            return adamw_quad(w, m, v, i, g, p, c);
        },
        blockIdx.y * kTile, blockIdx.x * kTile, rows, cols, t);
}

// SwiGLU's gradient (Source::SwigluGradBf16, f = s.ld a multiple of kTile): each block casts
// a tile of gate columns and then the same tile of up columns, from one read of the output
// gradient, the gate and up: 6 bytes read per pair of values, not 10. The up gradients are
// computed with the gate's, from the same sigmoid, and wait in registers for their tile
// (rather than the gradient and the gate, with the sigmoid computed again: twice the
// registers and twice the exponentials and divisions).
__global__ void __launch_bounds__(kSide* kSide) swiglu_grad_cast_kernel(CastSource s, int rows, CastTarget t) {
    const int f = s.ld, row0 = blockIdx.y * kTile, col0 = blockIdx.x * kTile;
    const std::size_t ld = std::size_t(f);
    float4 up_grads[kQuad];
    cast_transpose_tile(
        [&](int r, int c, int i) {
            const std::size_t pair = std::size_t(r) * 2 * ld + c;
            const float4 d = load_bf16x4(s.x, std::size_t(r) * ld + c), g = load_bf16x4(s.h, pair),
                         u = load_bf16x4(s.h, pair + ld);
            const float4 sg =
                make_float4(swiglu::sigmoid(g.x), swiglu::sigmoid(g.y), swiglu::sigmoid(g.z), swiglu::sigmoid(g.w));
            up_grads[i] = make_float4(swiglu::up_grad_of(d.x, g.x, sg.x), swiglu::up_grad_of(d.y, g.y, sg.y),
                                      swiglu::up_grad_of(d.z, g.z, sg.z), swiglu::up_grad_of(d.w, g.w, sg.w));
            return make_float4(swiglu::gate_grad_of(d.x, g.x, u.x, sg.x), swiglu::gate_grad_of(d.y, g.y, u.y, sg.y),
                               swiglu::gate_grad_of(d.z, g.z, u.z, sg.z), swiglu::gate_grad_of(d.w, g.w, u.w, sg.w));
        },
        row0, col0, rows, 2 * f, t);
    __syncthreads();  // the tile's shared transpose buffer is the up tile's next
    cast_transpose_tile([&](int, int, int i) { return up_grads[i]; }, row0, col0 + f, rows, 2 * f, t);
}

// One block of kThreads threads; every thread reads *step before thread 0 advances it.
__global__ void finish_step_kernel(StepEnd e, int* step) {
    // Every load first, the scaling's and the loss's: the step end is the last link of the
    // step's chain, and each trip to memory that waits for another lengthens it.
    const int t = *step;
    // Each thread adds `each` consecutive partials, in order (at least 4: the grouping of
    // mse_loss's partials, at most 1024, stays as it was).
    const int each = max(kMaxLossPartials / kThreads, (e.loss_partial_count + kThreads - 1) / kThreads);
    float v = 0.0f;
    for (int i = 0; i < each; ++i) {
        const int k = threadIdx.x * each + i;
        if (k < e.loss_partial_count) v += e.loss_partials[k];
    }
    const ScalingStateArrays& s = e.scaling;
    const int lane = int(threadIdx.x) & 31;
    if (s.scaling)
        for (int j = int(threadIdx.x) / 32; j < e.tensors; j += kThreads / 32) {  // a warp per tensor
            const float amax = __uint_as_float(s.amax_bits[j]);
            const float numerator = e.delayed ? s.numerators[j] : 0.0f;
            __syncwarp();  // every lane has read the amax before lane 0 clears it
            if (lane == 0) {
                if (s.trace_amax && t < e.capacity) {
                    s.trace_amax[std::size_t(t) * e.tensors + j] = amax;
                    s.trace_scale[std::size_t(t) * e.tensors + j] = s.scaling[j].scale;
                }
                if (s.stats) {
                    const CastStats sum = take_lanes(s.stats + j * kStatsLanes);
                    if (t < e.capacity) s.trace_stats[std::size_t(t) * e.tensors + j] = sum;
                }
                s.amax_bits[j] = 0;
            }
            __syncwarp();  // the scale recorded before lane 0 updates it
            if (e.delayed)
                kernels::delayed_update_warp(s.history + std::size_t(j) * e.history_length, e.history_length,
                                             e.algorithm_max, numerator, amax, &s.scaling[j]);
        }
    const float sum = block_sum(v);
    if (threadIdx.x == 0 && t < e.capacity) e.losses[t] = sum * e.inv_outputs;
    __syncthreads();  // every thread has read the step before thread 0 advances it
    if (threadIdx.x == 0) *step = t + 1;
}

template <Source K>
void launch_cast(const CastSource& s, int rows, int cols, const CastTarget& t, cudaStream_t stream) {
    const dim3 block(kSide, kSide), grid((cols + kTile - 1) / kTile, (rows + kTile - 1) / kTile);
    if (K == Source::SwigluGradBf16 && s.ld % kTile == 0 && cols == 2 * s.ld && !t.loss_partials) {
        swiglu_grad_cast_kernel<<<dim3(s.ld / kTile, grid.y), block, 0, stream>>>(s, rows, t);
        return;
    }
    cast_transpose_kernel<K><<<grid, block, 0, stream>>>(s, rows, cols, t);
}

template <Source K>
void launch_amax(const CastSource& s, int rows, int cols, unsigned* amax_bits, cudaStream_t stream) {
    amax_kernel<K><<<grid_for(std::size_t(rows) * cols / kQuad, 2), kThreads, 0, stream>>>(s, rows, cols, amax_bits);
}

}  // namespace

void f32_to_bf16(const float* in, void* out, std::size_t n, cudaStream_t stream) {
    f32_to_bf16_kernel<<<grid_for(n, 4), kThreads, 0, stream>>>(in, static_cast<__nv_bfloat16*>(out), n);
}
int cast_tiles(int rows, int cols) { return ((rows + kTile - 1) / kTile) * ((cols + kTile - 1) / kTile); }

void cast_transpose(const CastSource& s, int rows, int cols, const CastTarget& t, cudaStream_t stream) {
    with_source_kind(s.kind, [&](auto kind) { launch_cast<decltype(kind)::value>(s, rows, cols, t, stream); });
}

void amax_only(const CastSource& s, int rows, int cols, unsigned* amax_bits, cudaStream_t stream) {
    with_source_kind(s.kind, [&](auto kind) { launch_amax<decltype(kind)::value>(s, rows, cols, amax_bits, stream); });
}

void current_scale(const unsigned* amax_bits, float max_finite, DeviceScaling* scaling, cudaStream_t stream) {
    current_scale_kernel<<<1, 1, 0, stream>>>(amax_bits, max_finite, scaling);
}

void gelu_forward_bf16(const void* h, void* a, std::size_t n, cudaStream_t stream) {
    gelu_forward_kernel<<<grid_for(n / 2, 4), kThreads, 0, stream>>>(static_cast<const __nv_bfloat162*>(h),
                                                                     static_cast<__nv_bfloat162*>(a), n / 2);
}
void gelu_backward_bf16(void* grad, const void* h, std::size_t n, cudaStream_t stream) {
    gelu_backward_kernel<<<grid_for(n / 2, 4), kThreads, 0, stream>>>(static_cast<__nv_bfloat162*>(grad),
                                                                      static_cast<const __nv_bfloat162*>(h), n / 2);
}

int loss_partials(std::size_t n) {
    const std::size_t blocks = (n / 2 + std::size_t(kThreads) * 8 - 1) / (std::size_t(kThreads) * 8);
    return int(std::clamp<std::size_t>(blocks, 1, kMaxLossPartials));
}

void mse_loss(const void* y, const void* target, std::size_t n, int cols, const float* row_mask, float grad_scale,
              void* grad, float* partials, cudaStream_t stream) {
    mse_kernel<<<loss_partials(n), kThreads, 0, stream>>>(
        static_cast<const __nv_bfloat162*>(y), static_cast<const __nv_bfloat162*>(target), n / 2, cols / 2, row_mask,
        grad_scale, static_cast<__nv_bfloat162*>(grad), partials);
}

void adamw(float* w, float* m, float* v, const float* grad, std::size_t n, AdamParams p, const int* step,
           int step_offset, void* w_bf16, cudaStream_t stream) {
    const auto kernel = p.grad_scale ? adamw_kernel<true> : adamw_kernel<false>;
    kernel<<<grid_for(n / 4, 2), kThreads, 0, stream>>>(
        reinterpret_cast<float4*>(w), reinterpret_cast<float4*>(m), reinterpret_cast<float4*>(v),
        reinterpret_cast<const float4*>(grad), n / 4, p, step, step_offset, static_cast<__nv_bfloat162*>(w_bf16));
}

void adamw_cast_transpose(float* w, float* m, float* v, const float* grad, int rows, int cols, AdamParams p,
                          const int* step, int step_offset, const CastTarget& target, cudaStream_t stream) {
    if (rows % 16 || cols % 16)
        throw std::invalid_argument("adamw_cast_transpose: rows and cols must be multiples of 16");
    const auto kernel = p.grad_scale ? adamw_cast_kernel<true> : adamw_cast_kernel<false>;
    const dim3 block(kSide, kSide), grid((cols + kTile - 1) / kTile, (rows + kTile - 1) / kTile);
    kernel<<<grid, block, 0, stream>>>(reinterpret_cast<float4*>(w), reinterpret_cast<float4*>(m),
                                       reinterpret_cast<float4*>(v), reinterpret_cast<const float4*>(grad), rows, cols,
                                       p, step, step_offset, target);
}

void finish_step(const StepEnd& end, int* step, cudaStream_t stream) {
    static_assert(kMaxLossPartials % kThreads == 0);
    finish_step_kernel<<<1, kThreads, 0, stream>>>(end, step);
}

namespace {
__global__ void collect_numerics_kernel(NumericsCollect c, const int* step) {
    const int t = *step;
    for (int j = int(threadIdx.x); j < c.tensors; j += int(blockDim.x)) {
        const CastStats sum = take_lanes(c.lanes + std::size_t(j) * kStatsLanes);
        if (t >= c.capacity) continue;
        const std::size_t at = std::size_t(t) * c.tensors + j;
        c.records[at] = sum;
        c.amax[at] = __uint_as_float(*c.amax_bits[j]);
        c.scale[at] = c.scaling[j] ? c.scaling[j]->scale : 1.0f;
    }
}
}  // namespace

void collect_numerics(const NumericsCollect& c, const int* step, cudaStream_t stream) {
    if (c.tensors > 0) collect_numerics_kernel<<<1, kThreads, 0, stream>>>(c, step);
}

}  // namespace fp8lab::gpu::train
