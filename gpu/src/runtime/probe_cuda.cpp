// SPDX-License-Identifier: Apache-2.0
// probe() through the CUDA runtime: device, compute capability, memory, FP8 support.
#include <cuda_runtime.h>

#include "gpu/probe.hpp"

namespace fp8lab::gpu {

ProbeResult probe() {
    ProbeResult r;
    r.built_with_cuda = true;
    cudaRuntimeGetVersion(&r.runtime_version);
    if (cudaDriverGetVersion(&r.driver_version) != cudaSuccess || r.driver_version == 0) {
        r.reason = "no NVIDIA driver is installed (the CUDA runtime found none)";
        return r;
    }
    int count = 0;
    const cudaError_t err = cudaGetDeviceCount(&count);
    if (err != cudaSuccess || count == 0) {
        r.reason = err == cudaSuccess ? std::string("no CUDA device found")
                                      : std::string("no usable CUDA device: ") + cudaGetErrorString(err);
        return r;
    }
    cudaDeviceProp prop{};
    if (cudaGetDeviceProperties(&prop, 0) != cudaSuccess) {
        r.reason = "cannot read the properties of CUDA device 0";
        return r;
    }
    r.device_name = prop.name;
    r.compute_major = prop.major;
    r.compute_minor = prop.minor;
    r.memory_bytes = prop.totalGlobalMem;
    r.fp8_tensor_cores = prop.major * 10 + prop.minor >= 89;
    if (!r.fp8_tensor_cores) {
        r.reason = r.device_name + " has compute capability " + std::to_string(prop.major) + "." +
                   std::to_string(prop.minor) + "; FP8 tensor cores need 8.9 (Ada) or newer";
        return r;
    }
    if (r.runtime_version > r.driver_version) {
        r.reason = "the NVIDIA driver supports CUDA " + std::to_string(r.driver_version / 1000) + "." +
                   std::to_string(r.driver_version % 1000 / 10) + ", older than this build's runtime " +
                   std::to_string(r.runtime_version / 1000) + "." + std::to_string(r.runtime_version % 1000 / 10);
        return r;
    }
    r.ready = true;
    return r;
}

}  // namespace fp8lab::gpu
