// SPDX-License-Identifier: Apache-2.0
// cuBLASLt GEMMs (host code) for linear layers: FP8 (E4M3 x E4M3, E5M2 x E4M3) with scale pointers and
// BF16 output, and the BF16 baseline through the same library; plus their timing.
#include <cuda_bf16.h>

#include <algorithm>
#include <vector>

#include "gpu/src/runtime/cuda_check.hpp"
#include "gpu/src/kernels/kernels.hpp"
#include "gpu/src/gemm/lt_matmul.hpp"

namespace fp8lab::gpu {
namespace {

using detail::DeviceBuffer;

cudaDataType_t fp8_type(const emu::Format& f) {
    if (&f == &emu::e4m3()) return CUDA_R_8F_E4M3;
    if (&f == &emu::e5m2()) return CUDA_R_8F_E5M2;
    throw std::invalid_argument("an FP8 GEMM operand must be e4m3 or e5m2, not " + std::string(f.name));
}

// Y (m x n) = A (m x k) * B^T with B stored n x k: the forward of a linear layer.
detail::LtMatmul linear_forward(cublasLtHandle_t handle, int m, int n, int k, cudaDataType_t a_type,
                                cudaDataType_t b_type, const kernels::DeviceScaling* scales, bool fast_accumulation,
                                cudaDataType_t out_type = CUDA_R_16BF) {
    using detail::Stored;
    return detail::LtMatmul(handle, m, n, k, {a_type, Stored::AsIs, scales ? &scales[0].scale_inv : nullptr},
                            {b_type, Stored::Transposed, scales ? &scales[1].scale_inv : nullptr}, out_type,
                            fast_accumulation);
}

double median(std::vector<float> v) {
    std::sort(v.begin(), v.end());
    return v.empty() ? 0 : v[v.size() / 2];
}

}  // namespace

std::vector<float> fp8_gemm(int m, int n, int k, const emu::Format& a_format, std::span<const std::uint8_t> a,
                            float a_scale_inv, const emu::Format& b_format, std::span<const std::uint8_t> b,
                            float b_scale_inv, bool fast_accumulation, bool float32_output) {
    check_gemm_shape(m, n, k);  // refused the same way with or without a GPU
    detail::require_gpu();
    if (&b_format != &emu::e4m3())
        throw std::invalid_argument("the second FP8 GEMM operand must be e4m3 (cuBLASLt has no e5m2 x e5m2 kernel)");
    if (a.size() != std::size_t(m) * k || b.size() != std::size_t(n) * k)
        throw std::invalid_argument("fp8_gemm: operand sizes do not match m, n, k");
    detail::LtHandle handle;
    DeviceBuffer<std::uint8_t> da(a.size()), db(b.size());
    DeviceBuffer<__nv_bfloat16> dy(std::size_t(m) * n);
    DeviceBuffer<float> out(std::size_t(m) * n);
    DeviceBuffer<kernels::DeviceScaling> scales(2);
    DeviceBuffer<char> workspace(detail::kMatmulWorkspaceBytes);
    kernels::DeviceScaling host_scales[2];
    host_scales[0].scale_inv = a_scale_inv;
    host_scales[1].scale_inv = b_scale_inv;
    FP8LAB_CUDA_CHECK(cudaMemcpy(da.ptr, a.data(), a.size(), cudaMemcpyHostToDevice));
    FP8LAB_CUDA_CHECK(cudaMemcpy(db.ptr, b.data(), b.size(), cudaMemcpyHostToDevice));
    FP8LAB_CUDA_CHECK(cudaMemcpy(scales.ptr, host_scales, sizeof host_scales, cudaMemcpyHostToDevice));
    detail::LtMatmul gemm = linear_forward(handle.h, m, n, k, fp8_type(a_format), fp8_type(b_format), scales.ptr,
                                           fast_accumulation, float32_output ? CUDA_R_32F : CUDA_R_16BF);
    if (float32_output) {
        gemm.run(da.ptr, db.ptr, out.ptr, workspace.ptr, nullptr);
    } else {
        gemm.run(da.ptr, db.ptr, dy.ptr, workspace.ptr, nullptr);
        kernels::bf16_to_float(dy.ptr, out.ptr, out.count, nullptr);
    }
    FP8LAB_CUDA_CHECK(cudaGetLastError());
    std::vector<float> y(out.count);
    FP8LAB_CUDA_CHECK(cudaMemcpy(y.data(), out.ptr, out.count * sizeof(float), cudaMemcpyDeviceToHost));
    return y;
}

GemmTiming time_forward_gemms(int m, int n, int k, int repetitions) {
    check_gemm_shape(m, n, k);  // refused the same way with or without a GPU
    detail::require_gpu();
    detail::LtHandle handle;
    const std::size_t a_count = std::size_t(m) * k, b_count = std::size_t(n) * k;
    DeviceBuffer<std::uint8_t> a8(a_count), b8(b_count);
    DeviceBuffer<__nv_bfloat16> a16(a_count), b16(b_count), y(std::size_t(m) * n);
    DeviceBuffer<kernels::DeviceScaling> scales(2);
    DeviceBuffer<char> workspace(detail::kMatmulWorkspaceBytes);
    kernels::fill_random(a8.ptr, a16.ptr, a_count, 1u, nullptr);
    kernels::fill_random(b8.ptr, b16.ptr, b_count, 2u, nullptr);
    const kernels::DeviceScaling ones[2]{};
    FP8LAB_CUDA_CHECK(cudaMemcpy(scales.ptr, ones, sizeof ones, cudaMemcpyHostToDevice));
    detail::LtMatmul fp8 = linear_forward(handle.h, m, n, k, CUDA_R_8F_E4M3, CUDA_R_8F_E4M3, scales.ptr, true);
    detail::LtMatmul bf16 = linear_forward(handle.h, m, n, k, CUDA_R_16BF, CUDA_R_16BF, nullptr, false);
    cudaEvent_t start, stop;
    FP8LAB_CUDA_CHECK(cudaEventCreate(&start));
    FP8LAB_CUDA_CHECK(cudaEventCreate(&stop));
    std::vector<float> t16, t8;
    // Interleaved, so that clock and thermal drift affect both precisions alike.
    for (int r = 0; r < repetitions + 5; ++r) {
        for (int which = 0; which < 2; ++which) {
            FP8LAB_CUDA_CHECK(cudaEventRecord(start));
            if (which == 0)
                bf16.run(a16.ptr, b16.ptr, y.ptr, workspace.ptr, nullptr);
            else
                fp8.run(a8.ptr, b8.ptr, y.ptr, workspace.ptr, nullptr);
            FP8LAB_CUDA_CHECK(cudaEventRecord(stop));
            FP8LAB_CUDA_CHECK(cudaEventSynchronize(stop));
            float ms = 0;
            FP8LAB_CUDA_CHECK(cudaEventElapsedTime(&ms, start, stop));
            if (r >= 5) (which == 0 ? t16 : t8).push_back(ms);  // the first 5 are warm-up
        }
    }
    cudaEventDestroy(start);
    cudaEventDestroy(stop);
    GemmTiming t{m, n, k, median(t16), median(t8), 0, 0};
    const double flops = 2.0 * m * n * k;
    t.bf16_tflops = flops / (t.bf16_ms * 1e-3) / 1e12;
    t.fp8_tflops = flops / (t.fp8_ms * 1e-3) / 1e12;
    return t;
}

}  // namespace fp8lab::gpu
