// SPDX-License-Identifier: Apache-2.0
// The inference kernels: E4M3 casts of weights and activations with per-tensor, per-row
// and per-token scales, FP8 weights widened to BF16, and the fused FP8-weight kernel that
// serves a few tokens straight from FP8 weights (where memory, not arithmetic, limits).
#include <cuda_bf16.h>
#include <cuda_fp8.h>

#include <algorithm>

#include "gpu/src/kernels/cast_source.cuh"
#include "gpu/src/kernels/inference_kernels.hpp"

namespace fp8lab::gpu::kernels {
namespace {

constexpr float kE4m3Max = 448.0f;
constexpr int kRowThreads = 256;

__device__ float scale_for(float amax) { return amax > 0.0f && amax < INFINITY ? kE4m3Max / amax : 1.0f; }

// max over the block; every thread gets the result.
__device__ float block_max(float v) {
    __shared__ float warp_max[kRowThreads / 32];
    for (int offset = 16; offset > 0; offset /= 2) v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, offset));
    if ((threadIdx.x & 31) == 0) warp_max[threadIdx.x / 32] = v;
    __syncthreads();
    // Every warp reduces the warps' maxima again, so that every thread has the result.
    const unsigned lane = threadIdx.x & 31;
    v = lane < blockDim.x / 32 ? warp_max[lane] : 0.0f;
    for (int offset = 16; offset > 0; offset /= 2) v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, offset));
    __syncthreads();  // warp_max may be reused by the caller's next reduction
    return __shfl_sync(0xffffffffu, v, 0);
}

// Rows are read eight BF16 values (16 bytes) at a time: every width is a multiple of 16.
__device__ float row_amax_of(const __nv_bfloat16* row, int cols) {
    float local = 0.0f;
    for (int g = threadIdx.x; g < cols / 8; g += blockDim.x) {
        const uint4 raw = reinterpret_cast<const uint4*>(row)[g];
        const __nv_bfloat162* pairs = reinterpret_cast<const __nv_bfloat162*>(&raw);
        for (int j = 0; j < 4; ++j) {
            const float2 f = __bfloat1622float2(pairs[j]);
            local = fmaxf(local, fmaxf(fabsf(f.x), fabsf(f.y)));
        }
    }
    return block_max(local);
}

__device__ uint2 cast_eight(uint4 raw, float scale) {
    const __nv_bfloat16* v = reinterpret_cast<const __nv_bfloat16*>(&raw);
    unsigned char codes[8];
    for (int j = 0; j < 8; ++j)
        codes[j] = __nv_cvt_float_to_fp8(__bfloat162float(v[j]) * scale, __NV_SATFINITE, __NV_E4M3);
    return *reinterpret_cast<const uint2*>(codes);
}

__global__ void fill_uniform_kernel(__nv_bfloat16* out, std::size_t n, unsigned seed, float bound) {
    for (std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; i < n;
         i += std::size_t(gridDim.x) * blockDim.x) {
        unsigned h = unsigned(i) * 2654435761u ^ seed * 0x9e3779b9u;
        h ^= h >> 16;
        h *= 0x85ebca6bu;
        h ^= h >> 13;
        h *= 0xc2b2ae35u;
        h ^= h >> 16;
        out[i] = __float2bfloat16((float(h >> 8) * (1.0f / 16777216.0f) * 2.0f - 1.0f) * bound);
    }
}

__global__ void row_amax_kernel(const __nv_bfloat16* x, int rows, int cols, float* amax) {
    for (int r = blockIdx.x; r < rows; r += gridDim.x) {
        const float a = row_amax_of(x + std::size_t(r) * cols, cols);
        if (threadIdx.x == 0) amax[r] = a;
    }
}

__global__ void scales_kernel(const float* amax, int n, bool per_tensor, float* scale, float* scale_inv) {
    if (per_tensor) {
        float local = 0.0f;
        for (int i = threadIdx.x; i < n; i += blockDim.x) local = fmaxf(local, amax[i]);
        const float a = block_max(local);
        if (threadIdx.x == 0) {
            scale[0] = scale_for(a);
            scale_inv[0] = 1.0f / scale[0];
        }
        return;
    }
    for (int i = threadIdx.x; i < n; i += blockDim.x) {
        scale[i] = scale_for(amax[i]);
        scale_inv[i] = 1.0f / scale[i];
    }
}

// Eight elements per thread: 16-byte loads, 8-byte stores.
__global__ void cast_rows_kernel(const __nv_bfloat16* x, int rows, int cols, const float* scale, bool per_row,
                                 std::uint8_t* out) {
    const std::size_t groups = std::size_t(rows) * cols / 8;
    for (std::size_t g = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; g < groups;
         g += std::size_t(gridDim.x) * blockDim.x) {
        const float s = scale[per_row ? g * 8 / cols : 0];
        reinterpret_cast<uint2*>(out)[g] = cast_eight(reinterpret_cast<const uint4*>(x)[g], s);
    }
}

__global__ void cast_rows_dynamic_kernel(const __nv_bfloat16* x, int rows, int cols, std::uint8_t* out,
                                         float* scale_inv) {
    for (int r = blockIdx.x; r < rows; r += gridDim.x) {
        const __nv_bfloat16* row = x + std::size_t(r) * cols;
        const float s = scale_for(row_amax_of(row, cols));
        for (int g = threadIdx.x; g < cols / 8; g += blockDim.x)
            reinterpret_cast<uint2*>(out + std::size_t(r) * cols)[g] =
                cast_eight(reinterpret_cast<const uint4*>(row)[g], s);
        if (threadIdx.x == 0) scale_inv[r] = 1.0f / s;
    }
}

__device__ float decode_e4m3(unsigned char code) {
    return __half2float(__half(__nv_cvt_fp8_to_halfraw(__nv_fp8_storage_t(code), __NV_E4M3)));
}

__global__ void widen_rows_kernel(const std::uint8_t* codes, const float* scale_inv, int rows, int cols,
                                  __nv_bfloat16* out) {
    const std::size_t groups = std::size_t(rows) * cols / 8;
    for (std::size_t g = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; g < groups;
         g += std::size_t(gridDim.x) * blockDim.x) {
        const float s = scale_inv[g * 8 / cols];
        const uint2 raw = reinterpret_cast<const uint2*>(codes)[g];
        const unsigned char* c = reinterpret_cast<const unsigned char*>(&raw);
        __nv_bfloat16 v[8];
        for (int j = 0; j < 8; ++j) v[j] = __float2bfloat16(decode_e4m3(c[j]) * s);
        reinterpret_cast<uint4*>(out)[g] = *reinterpret_cast<const uint4*>(v);
    }
}

// One warp per output row: each lane reads 16 weight codes at a time (one 16-byte load),
// so a warp streams 512 contiguous bytes of the row; the few tokens' activations come
// from L1/L2, shared by every warp of the SM.
template <int Tokens>
__global__ void fp8_weight_gemv_kernel(const __nv_bfloat16* x, const std::uint8_t* w, const float* scale_inv,
                                       const __nv_bfloat16* bias, bool gelu_on, int n, int k, __nv_bfloat16* y) {
    const int lane = threadIdx.x & 31;
    for (int r = blockIdx.x * (blockDim.x / 32) + threadIdx.x / 32; r < n; r += gridDim.x * (blockDim.x / 32)) {
        float acc[Tokens] = {};
        const std::uint8_t* row = w + std::size_t(r) * k;
        for (int k0 = lane * 16; k0 < k; k0 += 32 * 16) {
            const uint4 raw = __ldg(reinterpret_cast<const uint4*>(row + k0));
            const unsigned char* c = reinterpret_cast<const unsigned char*>(&raw);
            float wf[16];
            for (int j = 0; j < 16; ++j) wf[j] = decode_e4m3(c[j]);
            for (int t = 0; t < Tokens; ++t) {
                const uint4* xt = reinterpret_cast<const uint4*>(x + std::size_t(t) * k + k0);
                const uint4 lo = xt[0], hi = xt[1];
                const __nv_bfloat16* a = reinterpret_cast<const __nv_bfloat16*>(&lo);
                const __nv_bfloat16* b = reinterpret_cast<const __nv_bfloat16*>(&hi);
                for (int j = 0; j < 8; ++j) acc[t] = fmaf(wf[j], __bfloat162float(a[j]), acc[t]);
                for (int j = 0; j < 8; ++j) acc[t] = fmaf(wf[8 + j], __bfloat162float(b[j]), acc[t]);
            }
        }
        for (int t = 0; t < Tokens; ++t) {
            float v = acc[t];
            for (int offset = 16; offset > 0; offset /= 2) v += __shfl_xor_sync(0xffffffffu, v, offset);
            if (lane == 0) {
                v = v * scale_inv[r] + __bfloat162float(bias[r]);
                y[std::size_t(t) * n + r] = __float2bfloat16(gelu_on ? train::gelu(v) : v);
            }
        }
    }
}

__global__ void bias_gelu_kernel(__nv_bfloat16* y, int rows, int cols, const __nv_bfloat16* bias, bool gelu_on) {
    const std::size_t n = std::size_t(rows) * cols;
    for (std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; i < n;
         i += std::size_t(gridDim.x) * blockDim.x) {
        const float v = __bfloat162float(y[i]) + __bfloat162float(bias[i % cols]);
        y[i] = __float2bfloat16(gelu_on ? train::gelu(v) : v);
    }
}

int grid_for(std::size_t work, int threads) {
    return int(std::clamp<std::size_t>((work + threads - 1) / threads, 1, 4096));
}

}  // namespace

void fill_uniform_bf16(void* out, std::size_t n, unsigned seed, float bound, cudaStream_t stream) {
    fill_uniform_kernel<<<grid_for(n, 256), 256, 0, stream>>>(static_cast<__nv_bfloat16*>(out), n, seed, bound);
}

void row_amax_bf16(const void* x, int rows, int cols, float* amax, cudaStream_t stream) {
    row_amax_kernel<<<std::min(rows, 4096), kRowThreads, 0, stream>>>(static_cast<const __nv_bfloat16*>(x), rows, cols,
                                                                      amax);
}

void scales_from_amax(const float* amax, int n, bool per_tensor, float* scale, float* scale_inv, cudaStream_t stream) {
    scales_kernel<<<1, kRowThreads, 0, stream>>>(amax, n, per_tensor, scale, scale_inv);
}

void cast_rows_e4m3(const void* x, int rows, int cols, const float* scale, bool per_row, std::uint8_t* out,
                    cudaStream_t stream) {
    cast_rows_kernel<<<grid_for(std::size_t(rows) * cols / 8, 256), 256, 0, stream>>>(
        static_cast<const __nv_bfloat16*>(x), rows, cols, scale, per_row, out);
}

void cast_rows_dynamic_e4m3(const void* x, int rows, int cols, std::uint8_t* out, float* scale_inv,
                            cudaStream_t stream) {
    cast_rows_dynamic_kernel<<<std::min(rows, 4096), kRowThreads, 0, stream>>>(static_cast<const __nv_bfloat16*>(x),
                                                                               rows, cols, out, scale_inv);
}

void widen_rows_e4m3(const std::uint8_t* codes, const float* scale_inv, int rows, int cols, void* out,
                     cudaStream_t stream) {
    widen_rows_kernel<<<grid_for(std::size_t(rows) * cols / 8, 256), 256, 0, stream>>>(
        codes, scale_inv, rows, cols, static_cast<__nv_bfloat16*>(out));
}

void fp8_weight_gemv(const void* x, int tokens, const std::uint8_t* w, const float* scale_inv, const void* bias,
                     bool gelu_on, int n, int k, void* y, cudaStream_t stream) {
    const auto* xb = static_cast<const __nv_bfloat16*>(x);
    const auto* bb = static_cast<const __nv_bfloat16*>(bias);
    auto* yb = static_cast<__nv_bfloat16*>(y);
    const int warps = 8, blocks = std::max(1, std::min((n + warps - 1) / warps, 4096));
    switch (tokens) {
    case 1:
        fp8_weight_gemv_kernel<1><<<blocks, warps * 32, 0, stream>>>(xb, w, scale_inv, bb, gelu_on, n, k, yb);
        break;
    case 2:
        fp8_weight_gemv_kernel<2><<<blocks, warps * 32, 0, stream>>>(xb, w, scale_inv, bb, gelu_on, n, k, yb);
        break;
    case 3:
        fp8_weight_gemv_kernel<3><<<blocks, warps * 32, 0, stream>>>(xb, w, scale_inv, bb, gelu_on, n, k, yb);
        break;
    case 4:
        fp8_weight_gemv_kernel<4><<<blocks, warps * 32, 0, stream>>>(xb, w, scale_inv, bb, gelu_on, n, k, yb);
        break;
    default:
        break;  // the caller checks kFusedWeightOnlyTokens
    }
}

void bias_gelu_bf16(void* y, int rows, int cols, const void* bias, bool gelu_on, cudaStream_t stream) {
    bias_gelu_kernel<<<grid_for(std::size_t(rows) * cols, 256), 256, 0, stream>>>(
        static_cast<__nv_bfloat16*>(y), rows, cols, static_cast<const __nv_bfloat16*>(bias), gelu_on);
}

}  // namespace fp8lab::gpu::kernels
