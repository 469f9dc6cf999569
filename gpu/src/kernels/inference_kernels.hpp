// SPDX-License-Identifier: Apache-2.0
// Launchers of the inference kernels (gpu/inference_timing.hpp): weight and activation
// casts to E4M3 with per-tensor, per-row or given scales, FP8 weights widened to BF16, and
// a fused FP8-weight x BF16-activation kernel for a few tokens. Plain C++17 types.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

namespace fp8lab::gpu::kernels {

// BF16 values uniform in [-bound, bound), a function of (seed, index) only.
void fill_uniform_bf16(void* out, std::size_t n, unsigned seed, float bound, cudaStream_t stream);

// amax[r] = max |x[r][:]| of a rows x cols BF16 matrix.
void row_amax_bf16(const void* x, int rows, int cols, float* amax, cudaStream_t stream);

// From amax[0..n): per tensor, scale[0] = 448 / max(amax) and scale_inv[0] its inverse;
// else the same per element (an amax of 0 gives scale 1).
void scales_from_amax(const float* amax, int n, bool per_tensor, float* scale, float* scale_inv, cudaStream_t stream);

// out = E4M3(x * scale) (nearest-even, saturating), scale[r] per row or scale[0] for all.
void cast_rows_e4m3(const void* x, int rows, int cols, const float* scale, bool per_row, std::uint8_t* out,
                    cudaStream_t stream);

// One pass per row: its amax, its scale, its cast; scale_inv[r] for the GEMM.
void cast_rows_dynamic_e4m3(const void* x, int rows, int cols, std::uint8_t* out, float* scale_inv,
                            cudaStream_t stream);

// out (BF16) = decode(codes[r][c]) * scale_inv[r].
void widen_rows_e4m3(const std::uint8_t* codes, const float* scale_inv, int rows, int cols, void* out,
                     cudaStream_t stream);

// y[t][r] = act(scale_inv[r] * sum_k decode(w[r][k]) x[t][k] + bias[r]) for t < tokens
// (at most kFusedWeightOnlyTokens), float32 accumulation, BF16 out; k a multiple of 16.
inline constexpr int kFusedWeightOnlyTokens = 4;
void fp8_weight_gemv(const void* x, int tokens, const std::uint8_t* w, const float* scale_inv, const void* bias,
                     bool gelu, int n, int k, void* y, cudaStream_t stream);

// y[t][c] = act(y[t][c] + bias[c]) in place, for a GEMM whose epilogue cuBLASLt refused.
void bias_gelu_bf16(void* y, int rows, int cols, const void* bias, bool gelu, cudaStream_t stream);

}  // namespace fp8lab::gpu::kernels
