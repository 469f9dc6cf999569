// SPDX-License-Identifier: Apache-2.0
// CUDA and cuBLASLt status checks that throw GpuError naming the call, its file and line.
#pragma once

#include <cublasLt.h>
#include <cuda_runtime.h>

#include <string>
#include <vector>

#include "gpu/probe.hpp"
#include "gpu/tensor_ops.hpp"

namespace fp8lab::gpu::detail {

// "gpu/src/FILE.cpp:LINE": where the failed call is, from __FILE__ (which may be absolute).
inline std::string call_site(const char* file, int line) {
    const std::string path = file;
    const std::size_t from = path.rfind("gpu/src/");
    return (from == std::string::npos ? path : path.substr(from)) + ":" + std::to_string(line);
}
inline void check(cudaError_t e, const char* what, const char* file, int line) {
    if (e != cudaSuccess)
        throw GpuError(std::string(what) + " (" + call_site(file, line) + "): " + cudaGetErrorString(e));
}
inline void check(cublasStatus_t s, const char* what, const char* file, int line) {
    if (s != CUBLAS_STATUS_SUCCESS)
        throw GpuError(std::string(what) + " (" + call_site(file, line) + "): cuBLASLt status " +
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
        if (n) check(cudaMalloc(&ptr, n * sizeof(T)), "cudaMalloc", __FILE__, __LINE__);
    }
    ~DeviceBuffer() { cudaFree(ptr); }
    DeviceBuffer(const DeviceBuffer&) = delete;
    DeviceBuffer& operator=(const DeviceBuffer&) = delete;
};

// Blocking copies between a device buffer and the host, for tests' and probes' small data.
template <class T>
void upload(DeviceBuffer<T>& to, const T* from, std::size_t n) {
    check(cudaMemcpy(to.ptr, from, n * sizeof(T), cudaMemcpyHostToDevice), "cudaMemcpy", __FILE__, __LINE__);
}
template <class T>
void upload(DeviceBuffer<T>& to, const std::vector<T>& from) {
    upload(to, from.data(), from.size());
}
template <class T>
std::vector<T> download(const DeviceBuffer<T>& from) {
    std::vector<T> to(from.count);
    check(cudaMemcpy(to.data(), from.ptr, from.count * sizeof(T), cudaMemcpyDeviceToHost), "cudaMemcpy", __FILE__,
          __LINE__);
    return to;
}

}  // namespace fp8lab::gpu::detail

#define FP8LAB_CUDA_CHECK(call) ::fp8lab::gpu::detail::check((call), #call, __FILE__, __LINE__)
