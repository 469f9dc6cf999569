// SPDX-License-Identifier: Apache-2.0
// cuBLASLt matmuls on row-major matrices, mapped onto cuBLASLt's column-major view.
#include "gpu/src/gemm/lt_matmul.hpp"

#include <cstdint>
#include <stdexcept>
#include <string>

#include "gpu/src/runtime/cuda_check.hpp"

namespace fp8lab::gpu::detail {
namespace {

bool is_fp8(cudaDataType_t t) { return t == CUDA_R_8F_E4M3 || t == CUDA_R_8F_E5M2; }

void set_scale_mode(cublasLtMatmulDesc_t desc, cublasLtMatmulDescAttributes_t attribute, ScaleMode mode) {
    if (mode == ScaleMode::PerTensor) return;  // cuBLASLt's default
#if CUBLAS_VERSION >= 120900
    const std::int32_t value = mode == ScaleMode::Blocks1x128    ? CUBLASLT_MATMUL_MATRIX_SCALE_VEC128_32F
                               : mode == ScaleMode::Tiles128x128 ? CUBLASLT_MATMUL_MATRIX_SCALE_BLK128x128_32F
                                                                 : CUBLASLT_MATMUL_MATRIX_SCALE_OUTER_VEC_32F;
    FP8LAB_CUDA_CHECK(cublasLtMatmulDescSetAttribute(desc, attribute, &value, sizeof value));
#else
    (void)desc, (void)attribute;
    throw GpuUnavailable("this build's cuBLASLt is older than 12.9: it has no block- or row-scaled FP8 GEMMs");
#endif
}

}  // namespace

// A row-major r x c array is cuBLASLt's column-major c x r matrix. So C (m x n row-major)
// is computed as C^T = B^T A^T: cuBLASLt's first operand is our B, its second our A.
LtMatmul::LtMatmul(cublasLtHandle_t handle, int m, int n, int k, MatmulOperand a, MatmulOperand b,
                   cudaDataType_t out_type, bool fast_accumulation, const float* device_alpha, Epilogue epilogue,
                   MatmulBatch batch)
    : handle_(handle), m_(m), n_(n), k_(k), device_alpha_(device_alpha), accumulate_(batch.accumulate) {
    if (batch.accumulate && device_alpha)
        throw std::invalid_argument("an accumulating GEMM takes its alpha from the host");
    if ((is_fp8(a.type) || is_fp8(b.type)) && (a.stored != Stored::AsIs || b.stored != Stored::Transposed))
        throw std::invalid_argument("FP8 GEMMs need A as is and B transposed (both contiguous along k)");
    const auto blocks = [](ScaleMode m) { return m == ScaleMode::Blocks1x128 || m == ScaleMode::Tiles128x128; };
    const bool block_scaled = blocks(a.scale_mode) || blocks(b.scale_mode);
    if (block_scaled && fast_accumulation)
        throw std::invalid_argument("block-scaled FP8 GEMMs have no fast-accumulation mode in cuBLASLt");
    try {  // a throw runs no destructor: release what was created so far
        FP8LAB_CUDA_CHECK(cublasLtMatmulDescCreate(&desc_, CUBLAS_COMPUTE_32F, CUDA_R_32F));
        if (device_alpha_) {
            FP8LAB_CUDA_CHECK(cudaMalloc(&device_beta_, sizeof(float)));
            FP8LAB_CUDA_CHECK(cudaMemset(device_beta_, 0, sizeof(float)));
            const cublasLtPointerMode_t mode = CUBLASLT_POINTER_MODE_DEVICE;
            FP8LAB_CUDA_CHECK(
                cublasLtMatmulDescSetAttribute(desc_, CUBLASLT_MATMUL_DESC_POINTER_MODE, &mode, sizeof mode));
        }
        // First operand (our B): stored n x k is column-major k x n = B, to be transposed.
        const cublasOperation_t op_first = b.stored == Stored::Transposed ? CUBLAS_OP_T : CUBLAS_OP_N;
        // Second operand (our A): stored m x k is column-major k x m = A^T, taken as is.
        const cublasOperation_t op_second = a.stored == Stored::AsIs ? CUBLAS_OP_N : CUBLAS_OP_T;
        FP8LAB_CUDA_CHECK(
            cublasLtMatmulDescSetAttribute(desc_, CUBLASLT_MATMUL_DESC_TRANSA, &op_first, sizeof op_first));
        FP8LAB_CUDA_CHECK(
            cublasLtMatmulDescSetAttribute(desc_, CUBLASLT_MATMUL_DESC_TRANSB, &op_second, sizeof op_second));
        if (b.scale_inv)
            FP8LAB_CUDA_CHECK(cublasLtMatmulDescSetAttribute(desc_, CUBLASLT_MATMUL_DESC_A_SCALE_POINTER, &b.scale_inv,
                                                             sizeof b.scale_inv));
        if (a.scale_inv)
            FP8LAB_CUDA_CHECK(cublasLtMatmulDescSetAttribute(desc_, CUBLASLT_MATMUL_DESC_B_SCALE_POINTER, &a.scale_inv,
                                                             sizeof a.scale_inv));
        set_scale_mode(desc_, CUBLASLT_MATMUL_DESC_A_SCALE_MODE, b.scale_mode);  // cuBLASLt's A is our B
        set_scale_mode(desc_, CUBLASLT_MATMUL_DESC_B_SCALE_MODE, a.scale_mode);
        if (is_fp8(a.type) && !block_scaled) {
            const std::int8_t fast = fast_accumulation ? 1 : 0;
            FP8LAB_CUDA_CHECK(
                cublasLtMatmulDescSetAttribute(desc_, CUBLASLT_MATMUL_DESC_FAST_ACCUM, &fast, sizeof fast));
        }
        if (epilogue.bias) {
            // Our n output columns are the rows of cuBLASLt's column-major D: its bias length.
            const cublasLtEpilogue_t kind = epilogue.gelu ? CUBLASLT_EPILOGUE_GELU_BIAS : CUBLASLT_EPILOGUE_BIAS;
            const cudaDataType_t bias_type = CUDA_R_16BF;
            FP8LAB_CUDA_CHECK(cublasLtMatmulDescSetAttribute(desc_, CUBLASLT_MATMUL_DESC_EPILOGUE, &kind, sizeof kind));
            FP8LAB_CUDA_CHECK(cublasLtMatmulDescSetAttribute(desc_, CUBLASLT_MATMUL_DESC_BIAS_POINTER, &epilogue.bias,
                                                             sizeof epilogue.bias));
            FP8LAB_CUDA_CHECK(cublasLtMatmulDescSetAttribute(desc_, CUBLASLT_MATMUL_DESC_BIAS_DATA_TYPE, &bias_type,
                                                             sizeof bias_type));
        }
        // A stored row-major r x c with leading dimension ld is column-major c x r with ld.
        const auto ld = [](int given, int width) { return std::uint64_t(given > 0 ? given : width); };
        if (b.stored == Stored::Transposed)
            FP8LAB_CUDA_CHECK(cublasLtMatrixLayoutCreate(&lt_first_, b.type, k, n, ld(batch.ldb, k)));
        else
            FP8LAB_CUDA_CHECK(cublasLtMatrixLayoutCreate(&lt_first_, b.type, n, k, ld(batch.ldb, n)));
        if (a.stored == Stored::AsIs)
            FP8LAB_CUDA_CHECK(cublasLtMatrixLayoutCreate(&lt_second_, a.type, k, m, ld(batch.lda, k)));
        else
            FP8LAB_CUDA_CHECK(cublasLtMatrixLayoutCreate(&lt_second_, a.type, m, k, ld(batch.lda, m)));
        FP8LAB_CUDA_CHECK(cublasLtMatrixLayoutCreate(&lt_out_, out_type, n, m, ld(batch.ldc, n)));
        if (batch.count > 1) {
            const auto set_batch = [&](cublasLtMatrixLayout_t layout, long long stride) {
                const std::int32_t count = batch.count;
                const std::int64_t offset = stride;
                FP8LAB_CUDA_CHECK(
                    cublasLtMatrixLayoutSetAttribute(layout, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, &count, sizeof count));
                FP8LAB_CUDA_CHECK(cublasLtMatrixLayoutSetAttribute(layout, CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET,
                                                                   &offset, sizeof offset));
            };
            set_batch(lt_first_, batch.stride_b);  // cuBLASLt's first operand is our B
            set_batch(lt_second_, batch.stride_a);
            set_batch(lt_out_, batch.stride_c);
        }
        choose_candidates();
    } catch (...) {
        release();
        throw;
    }
}

void LtMatmul::choose_candidates() {
    chosen_ = 0;
    cublasLtMatmulPreference_t pref;
    FP8LAB_CUDA_CHECK(cublasLtMatmulPreferenceCreate(&pref));
    const std::size_t workspace = kMatmulWorkspaceBytes;
    const cublasStatus_t set = cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES,
                                                                    &workspace, sizeof workspace);
    int found = 0;
    const cublasStatus_t s = set == CUBLAS_STATUS_SUCCESS
                                 ? cublasLtMatmulAlgoGetHeuristic(handle_, desc_, lt_first_, lt_second_, lt_out_,
                                                                  lt_out_, pref, kCandidates, candidates_, &found)
                                 : set;
    cublasLtMatmulPreferenceDestroy(pref);
    candidate_count_ = s == CUBLAS_STATUS_SUCCESS ? found : 0;
    if (candidate_count_ == 0)
        throw GpuError("cuBLASLt has no kernel for this GEMM (m=" + std::to_string(m_) + " n=" + std::to_string(n_) +
                       " k=" + std::to_string(k_) + ")");
}

void LtMatmul::run_on_sms(int sms) {
    if (sms < 0) throw std::invalid_argument("LtMatmul::run_on_sms: " + std::to_string(sms) + " SMs");
    const std::int32_t target = sms;
    FP8LAB_CUDA_CHECK(
        cublasLtMatmulDescSetAttribute(desc_, CUBLASLT_MATMUL_DESC_SM_COUNT_TARGET, &target, sizeof target));
    choose_candidates();
}

LtMatmul::~LtMatmul() { release(); }

void LtMatmul::release() {
    if (lt_first_) cublasLtMatrixLayoutDestroy(lt_first_);
    if (lt_second_) cublasLtMatrixLayoutDestroy(lt_second_);
    if (lt_out_) cublasLtMatrixLayoutDestroy(lt_out_);
    if (desc_) cublasLtMatmulDescDestroy(desc_);
    if (device_beta_) cudaFree(device_beta_);
}

void LtMatmul::run(const void* a, const void* b, void* c, void* workspace, cudaStream_t stream) {
    const float host_alpha = 1.0f, host_beta = accumulate_ ? 1.0f : 0.0f;
    const float* alpha = device_alpha_ ? device_alpha_ : &host_alpha;
    const float* beta = device_alpha_ ? device_beta_ : &host_beta;
    cublasStatus_t status = CUBLAS_STATUS_NOT_SUPPORTED;
    for (; chosen_ < candidate_count_; ++chosen_) {
        status = cublasLtMatmul(handle_, desc_, alpha, b, lt_first_, a, lt_second_, beta, c, lt_out_, c, lt_out_,
                                &candidates_[chosen_].algo, workspace, kMatmulWorkspaceBytes, stream);
        if (status != CUBLAS_STATUS_NOT_SUPPORTED) break;
    }
    FP8LAB_CUDA_CHECK(status);
}

LtHandle::LtHandle() { FP8LAB_CUDA_CHECK(cublasLtCreate(&h)); }
LtHandle::~LtHandle() { cublasLtDestroy(h); }

}  // namespace fp8lab::gpu::detail
