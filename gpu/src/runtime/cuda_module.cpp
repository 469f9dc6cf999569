// SPDX-License-Identifier: Apache-2.0
// The one symbol libfp8lab_cuda.so exports: its table of entry points (cuda_module.hpp).
// Everything else in the library is hidden, so that it never stands in for the program's.
#include "gpu/src/runtime/cuda_module.hpp"

extern "C" __attribute__((visibility("default"))) const fp8lab::gpu::detail::CudaModule* fp8lab_cuda_module() {
    namespace g = fp8lab::gpu;
    static const g::detail::CudaModule module{g::detail::kCudaModuleAbi,
                                              FP8LAB_VERSION,
                                              &g::probe,
                                              &g::quantize_per_tensor,
                                              &g::quantize_per_tensor_bf16,
                                              &g::cast_transpose_per_tensor,
                                              &g::cast_mse_gradient_per_tensor,
                                              &g::delayed_scaling_on_gpu,
                                              &g::fp8_gemm,
                                              &g::blockwise_unsupported_reason,
                                              &g::cast_transpose_blockwise,
                                              &g::fp8_blockwise_gemm,
                                              &g::emulated_cast_on_gpu,
                                              &g::attention_on_gpu,
                                              &g::time_forward_gemms,
                                              &g::train_mlp_on_gpu,
                                              &g::train_transformer_on_gpu,
                                              &g::gpu_initial_state,
                                              &g::time_inference};
    return &module;
}
