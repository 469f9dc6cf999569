// SPDX-License-Identifier: Apache-2.0
// fp8lab's CUDA kernels: fused cast + amax, the delayed-scaling update, conversions and
// fills. Float32 operation for operation as the emulator (docs/numerics.md §4).
#include <cuda_bf16.h>
#include <cuda_fp8.h>

#include <algorithm>
#include <cfloat>

#include "gpu/src/kernels/delayed_update.cuh"
#include "gpu/src/kernels/kernels.hpp"

namespace fp8lab::gpu::kernels {
namespace {

__device__ float load(const float* x, std::size_t i) { return x[i]; }
__device__ float load(const std::uint16_t* x, std::size_t i) { return __uint_as_float(unsigned(x[i]) << 16); }

// amax over |x| with fmaxf, which skips NaN and keeps Inf; non-negative floats order
// like their bit patterns, so the warps' results meet in one atomicMax on the bits.
template <class T>
__global__ void quantize_kernel(const T* x, std::size_t n, float scale, __nv_fp8_interpretation_t format,
                                std::uint8_t* out, unsigned* amax_bits) {
    float local = 0.0f;
    for (std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; i < n;
         i += std::size_t(gridDim.x) * blockDim.x) {
        const float v = load(x, i);
        local = fmaxf(local, fabsf(v));
        out[i] = __nv_cvt_float_to_fp8(__fmul_rn(v, scale), __NV_SATFINITE, format);
    }
    for (int offset = 16; offset > 0; offset /= 2) local = fmaxf(local, __shfl_xor_sync(0xffffffffu, local, offset));
    if ((threadIdx.x & 31) == 0) atomicMax(amax_bits, __float_as_uint(local));
}

template <class T>
void launch_quantize(const T* x, std::size_t n, float scale, bool e4m3, std::uint8_t* out, unsigned* amax_bits,
                     cudaStream_t stream) {
    if (n == 0) return;
    const int threads = 256;
    const int blocks = int(std::min<std::size_t>((n + threads - 1) / threads, 4096));
    quantize_kernel<<<blocks, threads, 0, stream>>>(x, n, scale, e4m3 ? __NV_E4M3 : __NV_E5M2, out, amax_bits);
}

__global__ void record_amax_kernel(const float* amaxes, int step, float* history, const DeviceScaling* state,
                                   DeviceScaling* used) {
    used[step] = *state;
    history[0] = amaxes[step];
}

__global__ void delayed_update_kernel(float* history, int length, bool algorithm_max, float numerator,
                                      DeviceScaling* state) {
    delayed_update_warp(history, length, algorithm_max, numerator, history[0], state);
}

__global__ void bf16_to_float_kernel(const __nv_bfloat16* in, float* out, std::size_t n) {
    for (std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; i < n;
         i += std::size_t(gridDim.x) * blockDim.x)
        out[i] = __bfloat162float(in[i]);
}

__global__ void fill_kernel(std::uint8_t* codes, __nv_bfloat16* values, std::size_t n, unsigned seed) {
    for (std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; i < n;
         i += std::size_t(gridDim.x) * blockDim.x) {
        unsigned h = unsigned(i) * 2654435761u ^ seed;
        h ^= h >> 15;
        h *= 2246822519u;
        h ^= h >> 13;
        const float v = (float(h & 0xffff) / 65536.0f - 0.5f) * 4.0f;
        if (codes) codes[i] = __nv_cvt_float_to_fp8(v, __NV_SATFINITE, __NV_E4M3);
        if (values) values[i] = __float2bfloat16(v);
    }
}

}  // namespace

void quantize_f32(const float* x, std::size_t n, float scale, bool e4m3, std::uint8_t* out, unsigned* amax_bits,
                  cudaStream_t stream) {
    launch_quantize(x, n, scale, e4m3, out, amax_bits, stream);
}

void quantize_bf16(const std::uint16_t* x, std::size_t n, float scale, bool e4m3, std::uint8_t* out,
                   unsigned* amax_bits, cudaStream_t stream) {
    launch_quantize(x, n, scale, e4m3, out, amax_bits, stream);
}

void record_amax(const float* amaxes, int step, float* history, const DeviceScaling* state, DeviceScaling* used,
                 cudaStream_t stream) {
    record_amax_kernel<<<1, 1, 0, stream>>>(amaxes, step, history, state, used);
}

void delayed_update(float* history, int length, bool algorithm_max, float numerator, DeviceScaling* state,
                    cudaStream_t stream) {
    delayed_update_kernel<<<1, 32, 0, stream>>>(history, length, algorithm_max, numerator, state);
}

void bf16_to_float(const void* bf16, float* out, std::size_t n, cudaStream_t stream) {
    bf16_to_float_kernel<<<256, 256, 0, stream>>>(static_cast<const __nv_bfloat16*>(bf16), out, n);
}

void fill_random(std::uint8_t* codes, void* bf16, std::size_t n, unsigned seed, cudaStream_t stream) {
    fill_kernel<<<1024, 256, 0, stream>>>(codes, static_cast<__nv_bfloat16*>(bf16), n, seed);
}

}  // namespace fp8lab::gpu::kernels
