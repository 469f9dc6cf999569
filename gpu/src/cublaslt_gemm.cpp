// cuBLASLt GEMMs (host code) for linear layers: FP8 (E4M3 x E4M3, E5M2 x E4M3) with scale pointers and
// BF16 output, and the BF16 baseline through the same library; plus their timing.
#include <cuda_bf16.h>

#include <algorithm>
#include <vector>

#include "gpu/src/cuda_check.hpp"
#include "gpu/src/kernels.hpp"

namespace fp8lab::gpu {
namespace {

using detail::DeviceBuffer;

constexpr std::size_t kWorkspaceBytes = 32u << 20;

cudaDataType_t fp8_type(const emu::Format& f) {
    if (&f == &emu::e4m3()) return CUDA_R_8F_E4M3;
    if (&f == &emu::e5m2()) return CUDA_R_8F_E5M2;
    throw std::invalid_argument("an FP8 GEMM operand must be e4m3 or e5m2, not " + std::string(f.name));
}

// Y (m x n row-major) = A (m x k row-major) * B (n x k row-major)^T. cuBLASLt is
// column-major: Y^T = B * A^T there, with B as the transposed "A" operand and A as the
// plain "B" operand: the TN layout that FP8 kernels require.
class LtGemm {
public:
    LtGemm(cublasLtHandle_t handle, int m, int n, int k, cudaDataType_t a_type, cudaDataType_t b_type,
           const float* a_scale_inv, const float* b_scale_inv, bool fast_accumulation)
        : handle_(handle) {
        // A throw leaves no destructor to run: release what was created so far.
        try {
            FP8LAB_CUDA_CHECK(cublasLtMatmulDescCreate(&desc_, CUBLAS_COMPUTE_32F, CUDA_R_32F));
            const cublasOperation_t t = CUBLAS_OP_T, nop = CUBLAS_OP_N;
            FP8LAB_CUDA_CHECK(cublasLtMatmulDescSetAttribute(desc_, CUBLASLT_MATMUL_DESC_TRANSA, &t, sizeof t));
            FP8LAB_CUDA_CHECK(cublasLtMatmulDescSetAttribute(desc_, CUBLASLT_MATMUL_DESC_TRANSB, &nop, sizeof nop));
            if (a_scale_inv) {
                FP8LAB_CUDA_CHECK(cublasLtMatmulDescSetAttribute(desc_, CUBLASLT_MATMUL_DESC_A_SCALE_POINTER, &b_scale_inv,
                                                                sizeof b_scale_inv));
                FP8LAB_CUDA_CHECK(cublasLtMatmulDescSetAttribute(desc_, CUBLASLT_MATMUL_DESC_B_SCALE_POINTER, &a_scale_inv,
                                                                sizeof a_scale_inv));
                const std::int8_t fast = fast_accumulation ? 1 : 0;
                FP8LAB_CUDA_CHECK(cublasLtMatmulDescSetAttribute(desc_, CUBLASLT_MATMUL_DESC_FAST_ACCUM, &fast, sizeof fast));
            }
            FP8LAB_CUDA_CHECK(cublasLtMatrixLayoutCreate(&lt_a_, b_type, k, n, k));
            FP8LAB_CUDA_CHECK(cublasLtMatrixLayoutCreate(&lt_b_, a_type, k, m, k));
            FP8LAB_CUDA_CHECK(cublasLtMatrixLayoutCreate(&lt_d_, CUDA_R_16BF, n, m, n));
            cublasLtMatmulPreference_t pref;
            FP8LAB_CUDA_CHECK(cublasLtMatmulPreferenceCreate(&pref));
            FP8LAB_CUDA_CHECK(cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES,
                                                                  &kWorkspaceBytes, sizeof kWorkspaceBytes));
            int found = 0;
            const cublasStatus_t s = cublasLtMatmulAlgoGetHeuristic(handle_, desc_, lt_a_, lt_b_, lt_d_, lt_d_, pref,
                                                                     kCandidates, candidates_, &found);
            cublasLtMatmulPreferenceDestroy(pref);
            candidate_count_ = s == CUBLAS_STATUS_SUCCESS ? found : 0;
            if (candidate_count_ == 0)
                throw GpuError("cuBLASLt has no kernel for this GEMM (m=" + std::to_string(m) + " n=" + std::to_string(n) +
                               " k=" + std::to_string(k) + ")");
        } catch (...) {
            release();
            throw;
        }
    }
    ~LtGemm() { release(); }
    LtGemm(const LtGemm&) = delete;
    LtGemm& operator=(const LtGemm&) = delete;
    // The first run tries the heuristic's candidates in order and keeps the first that
    // runs: a candidate can be refused at run time (CUBLAS_STATUS_NOT_SUPPORTED).
    void run(const void* a, const void* b, void* y, void* workspace, cudaStream_t stream) {
        const float alpha = 1.0f, beta = 0.0f;
        cublasStatus_t status = CUBLAS_STATUS_NOT_SUPPORTED;
        for (; chosen_ < candidate_count_; ++chosen_) {
            status = cublasLtMatmul(handle_, desc_, &alpha, b, lt_a_, a, lt_b_, &beta, y, lt_d_, y, lt_d_,
                                    &candidates_[chosen_].algo, workspace, kWorkspaceBytes, stream);
            if (status != CUBLAS_STATUS_NOT_SUPPORTED) break;
        }
        FP8LAB_CUDA_CHECK(status);
    }

private:
    void release() {
        if (lt_a_) cublasLtMatrixLayoutDestroy(lt_a_);
        if (lt_b_) cublasLtMatrixLayoutDestroy(lt_b_);
        if (lt_d_) cublasLtMatrixLayoutDestroy(lt_d_);
        if (desc_) cublasLtMatmulDescDestroy(desc_);
    }

    cublasLtHandle_t handle_;
    cublasLtMatmulDesc_t desc_ = nullptr;
    cublasLtMatrixLayout_t lt_a_ = nullptr, lt_b_ = nullptr, lt_d_ = nullptr;
    static constexpr int kCandidates = 8;
    cublasLtMatmulHeuristicResult_t candidates_[kCandidates]{};
    int candidate_count_ = 0, chosen_ = 0;
};

struct Handle {
    cublasLtHandle_t h = nullptr;
    Handle() { FP8LAB_CUDA_CHECK(cublasLtCreate(&h)); }
    ~Handle() { cublasLtDestroy(h); }
};

double median(std::vector<float> v) {
    std::sort(v.begin(), v.end());
    return v.empty() ? 0 : v[v.size() / 2];
}

}  // namespace

std::vector<float> fp8_gemm(int m, int n, int k, const emu::Format& a_format, std::span<const std::uint8_t> a,
                            float a_scale_inv, const emu::Format& b_format, std::span<const std::uint8_t> b,
                            float b_scale_inv, bool fast_accumulation) {
    check_gemm_shape(m, n, k);  // refused the same way with or without a GPU
    detail::require_gpu();
    if (&b_format != &emu::e4m3())
        throw std::invalid_argument("the second FP8 GEMM operand must be e4m3 (cuBLASLt has no e5m2 x e5m2 kernel)");
    if (a.size() != std::size_t(m) * k || b.size() != std::size_t(n) * k)
        throw std::invalid_argument("fp8_gemm: operand sizes do not match m, n, k");
    Handle handle;
    DeviceBuffer<std::uint8_t> da(a.size()), db(b.size());
    DeviceBuffer<__nv_bfloat16> dy(std::size_t(m) * n);
    DeviceBuffer<float> scales(2), out(std::size_t(m) * n);
    DeviceBuffer<char> workspace(kWorkspaceBytes);
    const float host_scales[2] = {a_scale_inv, b_scale_inv};
    FP8LAB_CUDA_CHECK(cudaMemcpy(da.ptr, a.data(), a.size(), cudaMemcpyHostToDevice));
    FP8LAB_CUDA_CHECK(cudaMemcpy(db.ptr, b.data(), b.size(), cudaMemcpyHostToDevice));
    FP8LAB_CUDA_CHECK(cudaMemcpy(scales.ptr, host_scales, sizeof host_scales, cudaMemcpyHostToDevice));
    LtGemm gemm(handle.h, m, n, k, fp8_type(a_format), fp8_type(b_format), scales.ptr, scales.ptr + 1,
                fast_accumulation);
    gemm.run(da.ptr, db.ptr, dy.ptr, workspace.ptr, nullptr);
    kernels::bf16_to_float(dy.ptr, out.ptr, out.count, nullptr);
    FP8LAB_CUDA_CHECK(cudaGetLastError());
    std::vector<float> y(out.count);
    FP8LAB_CUDA_CHECK(cudaMemcpy(y.data(), out.ptr, out.count * sizeof(float), cudaMemcpyDeviceToHost));
    return y;
}

GemmTiming time_forward_gemms(int m, int n, int k, int repetitions) {
    check_gemm_shape(m, n, k);  // refused the same way with or without a GPU
    detail::require_gpu();
    Handle handle;
    const std::size_t a_count = std::size_t(m) * k, b_count = std::size_t(n) * k;
    DeviceBuffer<std::uint8_t> a8(a_count), b8(b_count);
    DeviceBuffer<__nv_bfloat16> a16(a_count), b16(b_count), y(std::size_t(m) * n);
    DeviceBuffer<float> scales(2);
    DeviceBuffer<char> workspace(kWorkspaceBytes);
    kernels::fill_random(a8.ptr, a16.ptr, a_count, 1u, nullptr);
    kernels::fill_random(b8.ptr, b16.ptr, b_count, 2u, nullptr);
    const float ones[2] = {1.0f, 1.0f};
    FP8LAB_CUDA_CHECK(cudaMemcpy(scales.ptr, ones, sizeof ones, cudaMemcpyHostToDevice));
    LtGemm fp8(handle.h, m, n, k, CUDA_R_8F_E4M3, CUDA_R_8F_E4M3, scales.ptr, scales.ptr + 1, true);
    LtGemm bf16(handle.h, m, n, k, CUDA_R_16BF, CUDA_R_16BF, nullptr, nullptr, false);
    cudaEvent_t start, stop;
    FP8LAB_CUDA_CHECK(cudaEventCreate(&start));
    FP8LAB_CUDA_CHECK(cudaEventCreate(&stop));
    std::vector<float> t16, t8;
    // Interleaved, so that clock and thermal drift affect both precisions alike.
    for (int r = 0; r < repetitions + 5; ++r) {
        for (int which = 0; which < 2; ++which) {
            FP8LAB_CUDA_CHECK(cudaEventRecord(start));
            if (which == 0) bf16.run(a16.ptr, b16.ptr, y.ptr, workspace.ptr, nullptr);
            else fp8.run(a8.ptr, b8.ptr, y.ptr, workspace.ptr, nullptr);
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
