// CUDA and cuBLASLt status checks that throw GpuError naming the call and the file line.
#pragma once

#include <cublasLt.h>
#include <cuda_runtime.h>

#include <string>

#include "gpu/probe.hpp"
#include "gpu/tensor_ops.hpp"

namespace fp8lab::gpu::detail {

inline void check(cudaError_t e, const char* what, int line) {
    if (e != cudaSuccess)
        throw GpuError(std::string(what) + " (line " + std::to_string(line) + "): " + cudaGetErrorString(e));
}
inline void check(cublasStatus_t s, const char* what, int line) {
    if (s != CUBLAS_STATUS_SUCCESS)
        throw GpuError(std::string(what) + " (line " + std::to_string(line) + "): cuBLASLt status " +
                       std::to_string(int(s)));
}

// Throws GpuUnavailable with the probe's reason when no FP8-capable GPU is usable.
inline void require_gpu() {
    static const ProbeResult p = probe();  // the machine does not change while we run
    if (!p.ready) throw GpuUnavailable(p.reason);
}

// A device buffer freed on scope exit.
template <class T>
struct DeviceBuffer {
    T* ptr = nullptr;
    std::size_t count = 0;
    explicit DeviceBuffer(std::size_t n) : count(n) {
        if (n) check(cudaMalloc(&ptr, n * sizeof(T)), "cudaMalloc", __LINE__);
    }
    ~DeviceBuffer() { cudaFree(ptr); }
    DeviceBuffer(const DeviceBuffer&) = delete;
    DeviceBuffer& operator=(const DeviceBuffer&) = delete;
};

}  // namespace fp8lab::gpu::detail

#define FP8LAB_CUDA_CHECK(call) ::fp8lab::gpu::detail::check((call), #call, __LINE__)
