// SPDX-License-Identifier: Apache-2.0
// One cuBLASLt matmul on row-major matrices: C (m x n) = A (m x k) * B (k x n), either
// operand stored as is or transposed, BF16 or FP8 (with scale_inv pointers), BF16 or
// float32 output.
#pragma once

#include <cublasLt.h>
#include <cuda_runtime.h>

#include <cstddef>

namespace fp8lab::gpu::detail {

enum class Stored { AsIs, Transposed };  // A: m x k or k x m; B: k x n or n x k
// What an FP8 operand's scale pointer points at: one float (per tensor), float32 block
// scales in BlockScaleLayout (cuBLASLt's VEC128_32F and BLK128x128_32F, Hopper only), or
// one float per row of the stored operand (OUTER_VEC_32F: A's m rows, B's n rows).
enum class ScaleMode { PerTensor, Blocks1x128, Tiles128x128, PerRow };

// What cuBLASLt adds after the product, in the same kernel: a BF16 bias of n elements
// (one per output column), then optionally GELU (the tanh form).
struct Epilogue {
    const void* bias = nullptr;
    bool gelu = false;
};

struct MatmulOperand {
    cudaDataType_t type = CUDA_R_16BF;
    Stored stored = Stored::AsIs;
    // FP8 only: the dequantisation factor on the device. cuBLASLt answers
    // CUBLAS_STATUS_NOT_SUPPORTED for scale pointers that are not 16-byte aligned
    // (measured: H100, cuBLASLt 13.1), hence DeviceScaling's alignment.
    const float* scale_inv = nullptr;
    ScaleMode scale_mode = ScaleMode::PerTensor;
};

// Strided batches and leading dimensions (elements; 0: the operand's own width, as stored):
// `count` products, operand i of product b at its pointer + b * stride_i. accumulate: C +=
// instead of C =.
struct MatmulBatch {
    int count = 1;
    long long stride_a = 0, stride_b = 0, stride_c = 0;
    int lda = 0, ldb = 0, ldc = 0;
    bool accumulate = false;
};

inline constexpr std::size_t kMatmulWorkspaceBytes = 32u << 20;

class LtMatmul {
  public:
    // FP8 operands must be A as is and B transposed (cuBLASLt's TN rule for FP8); anything
    // else throws std::invalid_argument. Throws GpuError when cuBLASLt has no kernel.
    // Block-scaled operands have no fast-accumulation mode (refused).
    // `device_alpha`: a float on the device that multiplies the product (read when the
    // GEMM runs, so a captured graph sees each step's value); null: 1.
    LtMatmul(cublasLtHandle_t handle, int m, int n, int k, MatmulOperand a, MatmulOperand b, cudaDataType_t out_type,
             bool fast_accumulation, const float* device_alpha = nullptr, Epilogue epilogue = {},
             MatmulBatch batch = {});
    ~LtMatmul();
    LtMatmul(const LtMatmul&) = delete;
    LtMatmul& operator=(const LtMatmul&) = delete;

    // The first call tries the heuristic's candidates in order and keeps the first that
    // runs (a candidate can be refused at run time); run it once before graph capture.
    void run(const void* a, const void* b, void* c, void* workspace, cudaStream_t stream);

    // Asks cuBLASLt for kernels sized for `sms` SMs (CUBLASLT_MATMUL_DESC_SM_COUNT_TARGET),
    // so that the device's other SMs can run another stream's kernels beside this GEMM; 0:
    // the whole device. Call it before the first run.
    void run_on_sms(int sms);

  private:
    void choose_candidates();  // the heuristic's kernels for desc_ as it is set now
    void release();
    cublasLtHandle_t handle_;
    int m_, n_, k_;  // for the message when cuBLASLt has no kernel
    cublasLtMatmulDesc_t desc_ = nullptr;
    cublasLtMatrixLayout_t lt_first_ = nullptr, lt_second_ = nullptr, lt_out_ = nullptr;
    static constexpr int kCandidates = 8;
    cublasLtMatmulHeuristicResult_t candidates_[kCandidates]{};
    int candidate_count_ = 0, chosen_ = 0;
    const float* device_alpha_ = nullptr;
    float* device_beta_ = nullptr;
    bool accumulate_ = false;  // a device zero: cuBLASLt's device pointer mode takes both
};

// A cuBLASLt handle released on scope exit.
struct LtHandle {
    cublasLtHandle_t h = nullptr;
    LtHandle();
    ~LtHandle();
    LtHandle(const LtHandle&) = delete;
    LtHandle& operator=(const LtHandle&) = delete;
};

}  // namespace fp8lab::gpu::detail
