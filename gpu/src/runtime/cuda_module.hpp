// SPDX-License-Identifier: Apache-2.0
// The entry points of fp8lab's CUDA part, a library of its own (libfp8lab_cuda.so) that
// the program opens with dlopen on the first GPU call: commands that never touch the GPU
// never load the CUDA runtime or cuBLASLt. Every public GPU function that needs CUDA is
// one entry; the program forwards to it (cuda_module_loader.cpp).
#pragma once

#include "gpu/inference_timing.hpp"
#include "gpu/probe.hpp"
#include "gpu/tensor_ops.hpp"
#include "gpu/trainer.hpp"

namespace fp8lab::gpu::detail {

// The program and the library are built from one tree and share these types by layout:
// a library from another build is refused, not called.
inline constexpr int kCudaModuleAbi = 3;
inline constexpr const char* kCudaModuleEntry = "fp8lab_cuda_module";
inline constexpr const char* kCudaModuleFile = "libfp8lab_cuda.so";

struct CudaModule {
    int abi;
    const char* version;  // the project version it was built as
    decltype(&gpu::probe) probe;
    decltype(&gpu::quantize_per_tensor) quantize_per_tensor;
    decltype(&gpu::quantize_per_tensor_bf16) quantize_per_tensor_bf16;
    decltype(&gpu::cast_transpose_per_tensor) cast_transpose_per_tensor;
    decltype(&gpu::cast_mse_gradient_per_tensor) cast_mse_gradient_per_tensor;
    decltype(&gpu::delayed_scaling_on_gpu) delayed_scaling_on_gpu;
    decltype(&gpu::fp8_gemm) fp8_gemm;
    decltype(&gpu::blockwise_unsupported_reason) blockwise_unsupported_reason;
    decltype(&gpu::cast_transpose_blockwise) cast_transpose_blockwise;
    decltype(&gpu::fp8_blockwise_gemm) fp8_blockwise_gemm;
    decltype(&gpu::emulated_cast_on_gpu) emulated_cast_on_gpu;
    decltype(&gpu::attention_on_gpu) attention_on_gpu;
    decltype(&gpu::time_forward_gemms) time_forward_gemms;
    decltype(&gpu::train_mlp_on_gpu) train_mlp_on_gpu;
    decltype(&gpu::train_transformer_on_gpu) train_transformer_on_gpu;
    decltype(&gpu::gpu_initial_state) gpu_initial_state;
    decltype(&gpu::time_inference) time_inference;
};

}  // namespace fp8lab::gpu::detail
