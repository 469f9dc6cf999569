// AdamW on float32 master weights: alone (with an optional BF16 copy for the BF16 GEMMs),
// or fused with the FP8 cast of the weights it writes (codes, transpose and amax).
#include <cuda_bf16.h>

#include <algorithm>

#include "gpu/src/cast_square.cuh"
#include "gpu/src/train_kernels.hpp"

namespace fp8lab::gpu::train {
namespace {

constexpr int kThreads = 256;

struct BiasCorrection {
    float c1, c2;
};
// Step *step + 1 + step_offset, as PyTorch's AdamW counts steps from 1.
__device__ BiasCorrection bias_correction(const AdamParams& p, const int* step, int step_offset) {
    const float t = float(*step + 1 + step_offset);
    return {1.0f - powf(p.beta1, t), 1.0f - powf(p.beta2, t)};
}

__device__ void adamw_one(float& w, float& m, float& v, float g, const AdamParams& p, BiasCorrection b) {
    m = p.beta1 * m + (1.0f - p.beta1) * g;
    v = p.beta2 * v + (1.0f - p.beta2) * g * g;
    const float update = (m / b.c1) / (sqrtf(v / b.c2) + p.epsilon) + p.weight_decay * w;
    w = w - p.learning_rate * update;
}

// Four weights: 16-byte loads and stores of w, m, v and grad; returns the new weights.
__device__ float4 adamw_quad(float4* __restrict__ w, float4* __restrict__ m, float4* __restrict__ v,
                             const float4* __restrict__ grad, std::size_t i, const AdamParams& p, BiasCorrection b) {
    const float4 g = grad[i];
    float4 wi = w[i], mi = m[i], vi = v[i];
    adamw_one(wi.x, mi.x, vi.x, g.x, p, b);
    adamw_one(wi.y, mi.y, vi.y, g.y, p, b);
    adamw_one(wi.z, mi.z, vi.z, g.z, p, b);
    adamw_one(wi.w, mi.w, vi.w, g.w, p, b);
    m[i] = mi;
    v[i] = vi;
    w[i] = wi;
    return wi;
}

__global__ void adamw_kernel(float4* w, float4* m, float4* v, const float4* grad, std::size_t quads, AdamParams p,
                             const int* step, int step_offset, __nv_bfloat162* w_bf16) {
    const BiasCorrection b = bias_correction(p, step, step_offset);
    for (std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; i < quads;
         i += std::size_t(gridDim.x) * blockDim.x) {
        const float4 wi = adamw_quad(w, m, v, grad, i, p, b);
        if (w_bf16) {
            w_bf16[2 * i] = __floats2bfloat162_rn(wi.x, wi.y);
            w_bf16[2 * i + 1] = __floats2bfloat162_rn(wi.z, wi.w);
        }
    }
}

// The same update in 64 x 64 tiles of the rows x cols weight, cast as it is written.
__global__ void __launch_bounds__(kSide * kSide) adamw_cast_kernel(float4* w, float4* m, float4* v, const float4* grad,
                                                                   int rows, int cols, AdamParams p, const int* step,
                                                                   int step_offset, CastTarget t) {
    const BiasCorrection b = bias_correction(p, step, step_offset);
    cast_square([&](int r, int c) { return adamw_quad(w, m, v, grad, (std::size_t(r) * cols + c) / kQuad, p, b); },
                rows, cols, t);
}

}  // namespace

void adamw(float* w, float* m, float* v, const float* grad, std::size_t n, AdamParams p, const int* step,
           int step_offset, void* w_bf16, cudaStream_t stream) {
    const std::size_t blocks = std::clamp<std::size_t>((n / 4 + 2 * kThreads - 1) / (2 * kThreads), 1, 65535);
    adamw_kernel<<<int(blocks), kThreads, 0, stream>>>(
        reinterpret_cast<float4*>(w), reinterpret_cast<float4*>(m), reinterpret_cast<float4*>(v),
        reinterpret_cast<const float4*>(grad), n / 4, p, step, step_offset, static_cast<__nv_bfloat162*>(w_bf16));
}

void adamw_cast_transpose(float* w, float* m, float* v, const float* grad, int rows, int cols, AdamParams p,
                          const int* step, int step_offset, const CastTarget& target, cudaStream_t stream) {
    adamw_cast_kernel<<<square_grid(rows, cols), square_block(), 0, stream>>>(
        reinterpret_cast<float4*>(w), reinterpret_cast<float4*>(m), reinterpret_cast<float4*>(v),
        reinterpret_cast<const float4*>(grad), rows, cols, p, step, step_offset, target);
}

}  // namespace fp8lab::gpu::train
