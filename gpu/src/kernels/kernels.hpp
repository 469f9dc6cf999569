// SPDX-License-Identifier: Apache-2.0
// Launchers of fp8lab's CUDA kernels, with plain C++17 types so that nvcc compiles them
// apart from the C++20 host code that calls them.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

namespace fp8lab::gpu::kernels {

// scale_inv first and the struct 16-byte aligned: &scaling.scale_inv is what cuBLASLt
// takes as a scale pointer, and it refuses pointers that are not 16-byte aligned.
struct alignas(16) DeviceScaling {
    float scale_inv = 1.0f;
    float scale = 1.0f;
};

// out[i] = cvt(x[i] * scale) (nearest-even, satfinite); *amax_bits = max(bits of max |x|).
void quantize_f32(const float* x, std::size_t n, float scale, bool e4m3, std::uint8_t* out, unsigned* amax_bits,
                  cudaStream_t stream);
void quantize_bf16(const std::uint16_t* x, std::size_t n, float scale, bool e4m3, std::uint8_t* out,
                   unsigned* amax_bits, cudaStream_t stream);

// used[step] = *state; history[0] = amaxes[step].
void record_amax(const float* amaxes, int step, float* history, const DeviceScaling* state, DeviceScaling* used,
                 cudaStream_t stream);
// The delayed-scaling update of docs/numerics.md §4 on the device.
void delayed_update(float* history, int length, bool algorithm_max, float numerator, DeviceScaling* state,
                    cudaStream_t stream);

void bf16_to_float(const void* bf16, float* out, std::size_t n, cudaStream_t stream);
// Deterministic values in [-2, 2): as E4M3 codes and as BF16 (either may be null).
void fill_random(std::uint8_t* codes, void* bf16, std::size_t n, unsigned seed, cudaStream_t stream);

}  // namespace fp8lab::gpu::kernels
