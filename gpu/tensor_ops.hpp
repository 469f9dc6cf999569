// SPDX-License-Identifier: Apache-2.0
// GPU building blocks behind plain C++ types: per-tensor FP8 quantisation (fused cast +
// amax), the delayed-scaling update on the device, and cuBLASLt FP8 / BF16 GEMMs.
// Every call throws GpuUnavailable (with probe()'s reason) when no GPU can run it, and
// GpuError when CUDA or cuBLASLt fails.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <stdexcept>
#include <vector>

#include "emulator/scaling/current_scaling.hpp"
#include "emulator/scaling/delayed_scaling.hpp"
#include "emulator/training/experiment.hpp"
#include "emulator/formats/format.hpp"
#include "emulator/formats/quantized_tensor.hpp"
#include "emulator/scaling/tensor_numerics.hpp"

namespace fp8lab::gpu {

struct GpuUnavailable : std::runtime_error {
    using std::runtime_error::runtime_error;
};
struct GpuError : std::runtime_error {
    using std::runtime_error::runtime_error;
};

struct QuantizedOnGpu {
    std::vector<std::uint8_t> codes;
    float amax = 0;  // max |x| (NaN skipped, Inf kept), from the same pass
};

// codes[i] = cvt(x[i] * scale) to E4M3 or E5M2, nearest-even, saturating to finite
// (docs/numerics.md §4); one kernel reads x once and also reduces the amax.
QuantizedOnGpu quantize_per_tensor(const emu::Format& format, std::span<const float> x, float scale);

// The same from BF16 input (raw bits), as the training step stores activations.
QuantizedOnGpu quantize_per_tensor_bf16(const emu::Format& format, std::span<const std::uint16_t> x, float scale);

// The training step's fused cast + transpose + amax kernel on a rows x cols float32
// tensor (the scale read from device memory, as in the step): codes row-major, their
// transpose (cols x rows), the amax, and the cast's numerics as the kernel counts them
// with recording on (elements, zeros, flushed, saturated, subnormal, relative error).
struct CastTransposedOnGpu {
    std::vector<std::uint8_t> codes, codes_t;
    float amax = 0;
    emu::TensorNumerics numerics;
};
CastTransposedOnGpu cast_transpose_per_tensor(const emu::Format& format, std::span<const float> x, int rows, int cols,
                                              float scale);
// The same kernel as the step runs it on the output's gradient: from BF16 outputs y and
// targets t (bit patterns, rows x cols) it casts 2 (y - t) / (rows cols) rounded to BF16,
// and writes the loss as one partial sum of (y - t)^2 per 64 x 64 tile, in tile order.
struct MseGradientCastOnGpu {
    CastTransposedOnGpu cast;
    std::vector<float> loss_partials;
};
MseGradientCastOnGpu cast_mse_gradient_per_tensor(const emu::Format& format, std::span<const std::uint16_t> y,
                                                  std::span<const std::uint16_t> t, int rows, int cols, float scale);

// Runs the delayed-scaling update kernel once per amax, entirely on the device, and
// returns the scale each step would quantise with (entry t is the scale of step t).
std::vector<emu::ScalePair> delayed_scaling_on_gpu(const emu::Format& format, emu::DelayedScalingConfig config,
                                                   std::span<const float> amax_per_step);

// Y (m x n, row-major, returned as float from the BF16 output) = dequant(A) (m x k) *
// dequant(B)^T (n x k), both row-major codes: one cuBLASLt FP8 GEMM with the scale_inv
// of each operand passed as its scale pointer, FP32 accumulation.
// A may be E4M3 or E5M2 (a gradient), B must be E4M3 (E5M2 x E5M2 has no kernel).
// m, n and k must be multiples of 16; anything else is refused naming the dimension.
// `float32_output`: D in float32 instead of BF16, so that the accumulation's own error is
// not hidden under BF16's rounding of the result.
std::vector<float> fp8_gemm(int m, int n, int k, const emu::Format& a_format, std::span<const std::uint8_t> a,
                            float a_scale_inv, const emu::Format& b_format, std::span<const std::uint8_t> b,
                            float b_scale_inv, bool fast_accumulation, bool float32_output = false);

// Blockwise FP8 (DeepSeek-V3) needs cuBLASLt's block-scaled GEMMs (VEC128_32F and
// BLK128x128_32F): Hopper (compute capability 9.0) and cuBLASLt 12.9 or newer. Empty when
// this machine has them, else the reason a person can read.
std::string blockwise_unsupported_reason();

// The training step's block-scaled cast kernels on a rows x cols float32 tensor (multiples
// of 16): 128 x 128 tiles for the codes and their transpose; 1 x 128 blocks along the rows
// for the codes and along the columns for the transpose (cols x rows); or one scale per
// row of the codes and per row of the transpose (rowwise, torchao's amax floor). Scales in
// the order of emu::QuantizedTensor::block_scale_inv, so each half compares with
// emu::quantize of x or of its transpose.
enum class NativeBlocks { Vectors1x128, Tiles128x128, Rows };
struct BlockwiseCastOnGpu {
    std::vector<std::uint8_t> codes, codes_t;
    std::vector<float> scale_inv, scale_inv_t;
    float amax = 0;
};
BlockwiseCastOnGpu cast_transpose_blockwise(std::span<const float> x, int rows, int cols, NativeBlocks blocks);

// Y (m x n, float32) = dequant(A) * dequant(B)^T for emu::quantize_blockwise results: A is
// m x k in 1 x 128 blocks, B is n x k in 1 x 128 blocks or 128 x 128 tiles (cuBLASLt has no
// tiles x tiles kernel); one cuBLASLt GEMM with the block scales in its layouts.
std::vector<float> fp8_blockwise_gemm(const emu::QuantizedTensor& a, const emu::QuantizedTensor& b);

// The GPU's emulated cast of one GEMM operand (MX, NVFP4, blockwise, per-tensor with any
// element format, stochastic rounding), for the tests: x (rows x cols, float32) cast as the
// CPU trainer's OperandQuantizer casts `tensor` of `role` at `step` under `numerics`
// (current scaling for the per-tensor recipes), its blocks along the rows, or with
// `columns` down the columns (the emulator's tensor is then x's transpose; `wgrad_operand`
// as OperandQuantizer's). Codes in the emulator's tensor order, block scale_inv in its
// block order, and the BF16 operand a GEMM reads (x's layout, as floats) with the
// factor the GEMM multiplies by. `paired`: through the kernel that casts a tensor along its
// rows and down its columns from one read, as the training step casts the GELU outputs
// and gradients of NVFP4 (rows a multiple of 16, cols of 128, 16-element vectors; the
// other direction, with the trainer's wgrad flag, is cast alongside and dropped).
struct EmulatedCastOnGpu {
    std::vector<std::uint8_t> codes;
    std::vector<float> scale_inv;
    std::vector<float> operand;
    float tensor_factor = 1.0f;
};
EmulatedCastOnGpu emulated_cast_on_gpu(const emu::Numerics& numerics, emu::TensorRole role, const std::string& tensor,
                                       std::span<const float> x, int rows, int cols, bool columns, bool wgrad_operand,
                                       std::uint64_t step, bool paired = false);

// How the transformer's attention runs on the GPU: fused (S and P in registers, head sizes
// 32, 64 and 128) or by cuBLASLt's GEMMs with S, P, dP and dS through memory (any head size).
enum class AttentionKernel { Fused, Gemms };
std::string_view attention_kernel_name(AttentionKernel k);  // "fused" / "gemms"

// The most device memory the fused attention's backward keeps dS in (docs/gpu.md §3.1): as
// many sequences at a time as fit, and where none fits its dQ kernel recomputes P and dP.
inline constexpr std::size_t kFusedAttentionScoresBudget = std::size_t(1) << 30;

// The transformer's causal grouped-query attention on the device, for the tests: from q|k|v
// (sequences x n rows of (heads + 2 kv_heads) x head_size, rotary applied) and the output's
// gradient (rows x heads x head_size), both rounded to BF16, the output and dqkv (q|k|v's
// layout) as the named kernel computes them, BF16 values as floats. scores_budget: the fused
// backward's dS buffer, in bytes.
struct AttentionOnGpu {
    std::vector<float> out, dqkv;
};
AttentionOnGpu attention_on_gpu(AttentionKernel kernel, std::span<const float> qkv, std::span<const float> dout,
                                int sequences, int n, int heads, int kv_heads, int head_size,
                                std::size_t scores_budget = kFusedAttentionScoresBudget);

// Throws std::invalid_argument naming the first dimension that is not a positive
// multiple of 16 (cuBLASLt's FP8 rule); the same with or without a GPU.
void check_gemm_shape(int m, int n, int k);

// Timing of the forward GEMM of a linear layer, BF16 against FP8, in one run.
struct GemmTiming {
    int m = 0, n = 0, k = 0;
    double bf16_ms = 0, fp8_ms = 0;  // median over the timed repetitions (CUDA events)
    double bf16_tflops = 0, fp8_tflops = 0;
};
GemmTiming time_forward_gemms(int m, int n, int k, int repetitions);

}  // namespace fp8lab::gpu
