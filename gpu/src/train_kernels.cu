// The training step's kernels: fills, fused cast + transpose + amax (with GELU forward or
// backward folded in), BF16 GELU, MSE loss with a fixed-order reduction, AdamW, scaling.
#include <cuda_bf16.h>
#include <cuda_fp8.h>

#include <algorithm>
#include <cfloat>

#include "gpu/src/cast_source.cuh"
#include "gpu/src/delayed_update.cuh"
#include "gpu/src/train_kernels.hpp"

namespace fp8lab::gpu::train {
namespace {

constexpr int kThreads = 256;

int grid_for(std::size_t n, int per_thread = 1) {
    const std::size_t blocks = (n + std::size_t(kThreads) * per_thread - 1) / (std::size_t(kThreads) * per_thread);
    return int(std::clamp<std::size_t>(blocks, 1, 65535));
}

// splitmix64: a counter-based generator, so a value depends only on (seed, stream, index).
__device__ std::uint64_t mix(std::uint64_t z) {
    z += 0x9E3779B97F4A7C15ull;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

__device__ float normal_at(std::uint64_t seed, std::uint64_t stream_id, std::uint64_t i) {
    const std::uint64_t r = mix(mix(seed ^ (stream_id * 0xD1B54A32D192ED03ull)) + i);
    // Box-Muller on two 24-bit uniforms in (0, 1].
    const float u1 = (float((r >> 40) & 0xFFFFFF) + 1.0f) * (1.0f / 16777216.0f);
    const float u2 = float((r >> 16) & 0xFFFFFF) * (1.0f / 16777216.0f);
    return sqrtf(-2.0f * logf(u1)) * cospif(2.0f * u2);
}

template <class T>
__device__ void store(T* out, std::size_t i, float v);
template <>
__device__ void store(float* out, std::size_t i, float v) { out[i] = v; }
template <>
__device__ void store(__nv_bfloat16* out, std::size_t i, float v) { out[i] = __float2bfloat16(v); }

template <class T>
__global__ void fill_normal_kernel(T* out, std::size_t n, std::uint64_t seed, std::uint64_t stream_id, float stddev) {
    for (std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; i < n; i += std::size_t(gridDim.x) * blockDim.x)
        store(out, i, stddev * normal_at(seed, stream_id, i));
}

__global__ void f32_to_bf16_kernel(const float* in, __nv_bfloat16* out, std::size_t n) {
    for (std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; i < n; i += std::size_t(gridDim.x) * blockDim.x)
        out[i] = __float2bfloat16(in[i]);
}

__global__ void tanh_kernel(__nv_bfloat16* x, std::size_t n) {
    for (std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; i < n; i += std::size_t(gridDim.x) * blockDim.x)
        x[i] = __float2bfloat16(tanhf(__bfloat162float(x[i])));
}

// A 64 x 64 tile per block of 32 x 8 threads, each thread two neighbouring columns of
// eight rows: the codes go to `out` as byte pairs along rows and, through shared
// memory, to `out_t` as byte pairs along columns; both stores are coalesced.
constexpr int kTile = 64, kBlockX = 32, kBlockY = 8;
template <Source K>
__global__ void __launch_bounds__(kBlockX * kBlockY) cast_transpose_kernel(CastSource s, int rows, int cols, CastTarget t) {
    __shared__ std::uint8_t tile[kTile][kTile + 4];
    const __nv_fp8_interpretation_t format = t.e4m3 ? __NV_E4M3 : __NV_E5M2;
    const float scale = t.scaling->scale;
    const int row0 = blockIdx.y * kTile, col0 = blockIdx.x * kTile;
    const int c = col0 + 2 * threadIdx.x;
    float local = 0.0f;
    for (int i = threadIdx.y; i < kTile; i += kBlockY) {
        const int r = row0 + i;
        if (r < rows && c < cols) {
            const float2 v = load_pair<K>(s, r, c);
            local = fmaxf(local, fmaxf(fabsf(v.x), fabsf(v.y)));
            const std::uint8_t q0 = to_fp8(v.x, scale, format), q1 = to_fp8(v.y, scale, format);
            if (t.out)
                *reinterpret_cast<std::uint16_t*>(t.out + std::size_t(r) * cols + c) = std::uint16_t(q0 | (q1 << 8));
            tile[i][2 * threadIdx.x] = q0;
            tile[i][2 * threadIdx.x + 1] = q1;
        }
    }
    if (t.out_t) {
        __syncthreads();
        const int r = row0 + 2 * threadIdx.x;  // rows are even too
        for (int i = threadIdx.y; i < kTile; i += kBlockY) {
            const int tc = col0 + i;
            if (tc < cols && r < rows) {
                const std::uint16_t pair = std::uint16_t(tile[2 * threadIdx.x][i] | (tile[2 * threadIdx.x + 1][i] << 8));
                *reinterpret_cast<std::uint16_t*>(t.out_t + std::size_t(tc) * t.ld_t + r) = pair;
            }
        }
    }
    publish_amax<kBlockX * kBlockY / 32>(local, t.amax_bits);
}

template <Source K>
__global__ void amax_kernel(CastSource s, int rows, int cols, unsigned* amax_bits) {
    float local = 0.0f;
    const std::size_t n = std::size_t(rows) * cols;
    for (std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; i < n; i += std::size_t(gridDim.x) * blockDim.x)
        local = fmaxf(local, fabsf(load<K>(s, int(i / cols), int(i % cols))));
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

__global__ void mse_kernel(const __nv_bfloat16* y, const __nv_bfloat16* target, std::size_t n,
                           __nv_bfloat16* grad, float* partials) {
    const float g_scale = 2.0f / float(n);
    float local = 0.0f;
    for (std::size_t i = blockIdx.x * std::size_t(kThreads) + threadIdx.x; i < n; i += std::size_t(kLossPartials) * kThreads) {
        const float d = __bfloat162float(y[i]) - __bfloat162float(target[i]);
        local += d * d;
        grad[i] = __float2bfloat16(d * g_scale);
    }
    const float sum = block_sum(local);
    if (threadIdx.x == 0) partials[blockIdx.x] = sum;
}

__global__ void reduce_loss_kernel(const float* partials, float inv_n, const int* step, int capacity, float* losses) {
    const float sum = block_sum(partials[threadIdx.x]);  // kThreads == kLossPartials
    if (threadIdx.x == 0 && *step < capacity) losses[*step] = sum * inv_n;
}

__global__ void adamw_kernel(float* w, float* m, float* v, const float* grad, std::size_t n, AdamParams p,
                             const int* step, __nv_bfloat16* w_bf16) {
    const float t = float(*step + 1);
    const float c1 = 1.0f - powf(p.beta1, t), c2 = 1.0f - powf(p.beta2, t);
    for (std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; i < n; i += std::size_t(gridDim.x) * blockDim.x) {
        const float g = grad[i];
        const float mi = p.beta1 * m[i] + (1.0f - p.beta1) * g;
        const float vi = p.beta2 * v[i] + (1.0f - p.beta2) * g * g;
        m[i] = mi;
        v[i] = vi;
        const float update = (mi / c1) / (sqrtf(vi / c2) + p.epsilon) + p.weight_decay * w[i];
        const float wi = w[i] - p.learning_rate * update;
        w[i] = wi;
        if (w_bf16) w_bf16[i] = __float2bfloat16(wi);
    }
}

__global__ void end_step_kernel(ScalingStateArrays s, int tensors, int history_length, bool algorithm_max,
                                bool delayed, const int* step, int capacity) {
    const int j = threadIdx.x;
    if (j >= tensors) return;
    const float amax = __uint_as_float(s.amax_bits[j]);
    if (s.trace_amax && *step < capacity) {
        s.trace_amax[std::size_t(*step) * tensors + j] = amax;
        s.trace_scale[std::size_t(*step) * tensors + j] = s.scaling[j].scale;
    }
    if (delayed) {
        float* history = s.history + std::size_t(j) * history_length;
        history[0] = amax;
        kernels::delayed_update_one(history, history_length, algorithm_max, s.numerators[j], &s.scaling[j]);
    }
    s.amax_bits[j] = 0;
}

__global__ void advance_step_kernel(int* step) { ++*step; }

template <Source K>
void launch_cast(const CastSource& s, int rows, int cols, const CastTarget& t, cudaStream_t stream) {
    const dim3 block(kBlockX, kBlockY), grid((cols + kTile - 1) / kTile, (rows + kTile - 1) / kTile);
    cast_transpose_kernel<K><<<grid, block, 0, stream>>>(s, rows, cols, t);
}

template <Source K>
void launch_amax(const CastSource& s, int rows, int cols, unsigned* amax_bits, cudaStream_t stream) {
    amax_kernel<K><<<grid_for(std::size_t(rows) * cols, 8), kThreads, 0, stream>>>(s, rows, cols, amax_bits);
}

}  // namespace

void fill_normal_f32(float* out, std::size_t n, std::uint64_t seed, std::uint64_t stream_id, float stddev,
                     cudaStream_t stream) {
    fill_normal_kernel<<<grid_for(n, 4), kThreads, 0, stream>>>(out, n, seed, stream_id, stddev);
}
void fill_normal_bf16(void* out, std::size_t n, std::uint64_t seed, std::uint64_t stream_id, float stddev,
                      cudaStream_t stream) {
    fill_normal_kernel<<<grid_for(n, 4), kThreads, 0, stream>>>(static_cast<__nv_bfloat16*>(out), n, seed,
                                                                 stream_id, stddev);
}
void f32_to_bf16(const float* in, void* out, std::size_t n, cudaStream_t stream) {
    f32_to_bf16_kernel<<<grid_for(n, 4), kThreads, 0, stream>>>(in, static_cast<__nv_bfloat16*>(out), n);
}
void tanh_bf16_inplace(void* x, std::size_t n, cudaStream_t stream) {
    tanh_kernel<<<grid_for(n, 4), kThreads, 0, stream>>>(static_cast<__nv_bfloat16*>(x), n);
}

void cast_transpose(const CastSource& s, int rows, int cols, const CastTarget& t, cudaStream_t stream) {
    switch (s.kind) {
        case Source::Bf16: return launch_cast<Source::Bf16>(s, rows, cols, t, stream);
        case Source::F32: return launch_cast<Source::F32>(s, rows, cols, t, stream);
        case Source::GeluOfBf16: return launch_cast<Source::GeluOfBf16>(s, rows, cols, t, stream);
        case Source::GeluGradBf16: return launch_cast<Source::GeluGradBf16>(s, rows, cols, t, stream);
    }
}

void amax_only(const CastSource& s, int rows, int cols, unsigned* amax_bits, cudaStream_t stream) {
    switch (s.kind) {
        case Source::Bf16: return launch_amax<Source::Bf16>(s, rows, cols, amax_bits, stream);
        case Source::F32: return launch_amax<Source::F32>(s, rows, cols, amax_bits, stream);
        case Source::GeluOfBf16: return launch_amax<Source::GeluOfBf16>(s, rows, cols, amax_bits, stream);
        case Source::GeluGradBf16: return launch_amax<Source::GeluGradBf16>(s, rows, cols, amax_bits, stream);
    }
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

void mse_loss(const void* y, const void* target, std::size_t n, void* grad, float* partials, cudaStream_t stream) {
    mse_kernel<<<kLossPartials, kThreads, 0, stream>>>(static_cast<const __nv_bfloat16*>(y),
                                                        static_cast<const __nv_bfloat16*>(target), n,
                                                        static_cast<__nv_bfloat16*>(grad), partials);
}
void reduce_loss(const float* partials, std::size_t n, const int* step, int capacity, float* losses,
                 cudaStream_t stream) {
    static_assert(kThreads == kLossPartials);
    reduce_loss_kernel<<<1, kThreads, 0, stream>>>(partials, 1.0f / float(n), step, capacity, losses);
}

void adamw(float* w, float* m, float* v, const float* grad, std::size_t n, AdamParams p, const int* step,
           void* w_bf16, cudaStream_t stream) {
    adamw_kernel<<<grid_for(n, 4), kThreads, 0, stream>>>(w, m, v, grad, n, p, step,
                                                          static_cast<__nv_bfloat16*>(w_bf16));
}

void end_step(const ScalingStateArrays& s, int tensors, int history_length, bool algorithm_max, bool delayed,
              const int* step, int capacity, cudaStream_t stream) {
    end_step_kernel<<<1, std::max(32, tensors), 0, stream>>>(s, tensors, history_length, algorithm_max, delayed, step,
                                                             capacity);
}
void advance_step(int* step, cudaStream_t stream) { advance_step_kernel<<<1, 1, 0, stream>>>(step); }

}  // namespace fp8lab::gpu::train
