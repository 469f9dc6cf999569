// SPDX-License-Identifier: Apache-2.0
// The transformer's attention on the device for the tests: either kernel (fused, or
// cuBLASLt's GEMMs through memory) run once forward and once backward on host tensors.
#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "gpu/src/runtime/cuda_check.hpp"
#include "gpu/src/gemm/lt_matmul.hpp"
#include "gpu/src/models/transformer/transformer_attention.hpp"
#include "gpu/tensor_ops.hpp"

namespace fp8lab::gpu {
namespace {

using detail::DeviceBuffer;

void to_device(std::span<const float> x, DeviceBuffer<__nv_bfloat16>& d) {
    std::vector<__nv_bfloat16> host(x.size());
    for (std::size_t i = 0; i < x.size(); ++i) host[i] = __float2bfloat16(x[i]);
    FP8LAB_CUDA_CHECK(cudaMemcpy(d.ptr, host.data(), x.size() * sizeof(__nv_bfloat16), cudaMemcpyHostToDevice));
}

std::vector<float> to_host(const DeviceBuffer<__nv_bfloat16>& d) {
    std::vector<__nv_bfloat16> host(d.count);
    FP8LAB_CUDA_CHECK(cudaMemcpy(host.data(), d.ptr, d.count * sizeof(__nv_bfloat16), cudaMemcpyDeviceToHost));
    std::vector<float> out(d.count);
    for (std::size_t i = 0; i < out.size(); ++i) out[i] = __bfloat162float(host[i]);
    return out;
}

}  // namespace

AttentionOnGpu attention_on_gpu(AttentionKernel kernel, std::span<const float> qkv, std::span<const float> dout,
                                int sequences, int n, int heads, int kv_heads, int head_size,
                                std::size_t scores_budget) {
    if (sequences < 1 || n < 1 || heads < 1 || kv_heads < 1 || heads % kv_heads != 0 || head_size < 1)
        throw std::invalid_argument(
            "attention_on_gpu: sequences, n, heads and head_size must be positive and "
            "kv_heads must divide heads");
    if (kernel == AttentionKernel::Fused && !transformer::flash_attention_supports(head_size))
        throw std::invalid_argument("attention_on_gpu: the fused kernels take head sizes 32, 64 and 128, not " +
                                    std::to_string(head_size));
    const int rows = sequences * n, qkv_w = (heads + 2 * kv_heads) * head_size, ow = heads * head_size;
    if (qkv.size() != std::size_t(rows) * qkv_w || dout.size() != std::size_t(rows) * ow)
        throw std::invalid_argument(
            "attention_on_gpu: qkv needs rows x (heads + 2 kv_heads) x head_size elements and "
            "dout rows x heads x head_size");
    detail::require_gpu();
    detail::LtHandle lt;
    DeviceBuffer<std::uint8_t> workspace(detail::kMatmulWorkspaceBytes);
    std::unique_ptr<transformer::Attention> attention;
    if (kernel == AttentionKernel::Fused)
        attention = std::make_unique<transformer::FlashAttention>(sequences, n, heads, kv_heads, head_size, qkv_w,
                                                                  scores_budget);
    else
        attention = std::make_unique<transformer::GemmAttention>(lt.h, sequences, n, heads, kv_heads, head_size, qkv_w,
                                                                 workspace.ptr);
    DeviceBuffer<__nv_bfloat16> q(qkv.size()), d_o(dout.size());
    to_device(qkv, q);
    to_device(dout, d_o);
    DeviceBuffer<__nv_bfloat16> probs(attention->probs_elements()), out(std::size_t(rows) * ow),
        dqkv(std::size_t(rows) * qkv_w);
    DeviceBuffer<float> lse(attention->lse_elements());
    FP8LAB_CUDA_CHECK(cudaMemset(dqkv.ptr, 0xff, dqkv.count * sizeof(__nv_bfloat16)));  // NaN where nothing writes
    attention->forward(q.ptr, {probs.ptr, lse.ptr}, out.ptr, nullptr);
    attention->backward(q.ptr, out.ptr, {probs.ptr, lse.ptr}, d_o.ptr, dqkv.ptr, nullptr);
    FP8LAB_CUDA_CHECK(cudaGetLastError());
    FP8LAB_CUDA_CHECK(cudaDeviceSynchronize());
    return {to_host(out), to_host(dqkv)};
}

}  // namespace fp8lab::gpu
