// SPDX-License-Identifier: Apache-2.0
// The GPU building blocks in a build without CUDA: every call says so.
#include "gpu/probe.hpp"
#include "gpu/tensor_ops.hpp"

namespace fp8lab::gpu {
namespace {

[[noreturn]] void unavailable() { throw GpuUnavailable(probe().reason); }

}  // namespace

QuantizedOnGpu quantize_per_tensor(const emu::Format&, std::span<const float>, float) { unavailable(); }
QuantizedOnGpu quantize_per_tensor_bf16(const emu::Format&, std::span<const std::uint16_t>, float) { unavailable(); }
CastTransposedOnGpu cast_transpose_per_tensor(const emu::Format&, std::span<const float>, int, int, float) {
    unavailable();
}
MseGradientCastOnGpu cast_mse_gradient_per_tensor(const emu::Format&, std::span<const std::uint16_t>,
                                                  std::span<const std::uint16_t>, int, int, float) {
    unavailable();
}
std::vector<emu::ScalePair> delayed_scaling_on_gpu(const emu::Format&, emu::DelayedScalingConfig,
                                                   std::span<const float>) {
    unavailable();
}
std::vector<float> fp8_gemm(int m, int n, int k, const emu::Format&, std::span<const std::uint8_t>, float,
                            const emu::Format&, std::span<const std::uint8_t>, float, bool, bool) {
    check_gemm_shape(m, n, k);
    unavailable();
}
std::string blockwise_unsupported_reason() { return probe().reason; }
BlockwiseCastOnGpu cast_transpose_blockwise(std::span<const float>, int, int, NativeBlocks) { unavailable(); }
std::vector<float> fp8_blockwise_gemm(const emu::QuantizedTensor&, const emu::QuantizedTensor&) { unavailable(); }
EmulatedCastOnGpu emulated_cast_on_gpu(const emu::Numerics&, emu::TensorRole, const std::string&,
                                       std::span<const float>, int, int, bool, bool, std::uint64_t, bool) {
    unavailable();
}
AttentionOnGpu attention_on_gpu(AttentionKernel, std::span<const float>, std::span<const float>, int, int, int, int,
                                int, std::size_t) {
    unavailable();
}
GemmTiming time_forward_gemms(int m, int n, int k, int) {
    check_gemm_shape(m, n, k);
    unavailable();
}

}  // namespace fp8lab::gpu
