// SPDX-License-Identifier: Apache-2.0
// What this machine's GPU can do for fp8lab, with a reason a person can read.
#pragma once

#include <cstdint>
#include <string>

namespace fp8lab::gpu {

struct ProbeResult {
    bool built_with_cuda = false;
    bool ready = false;             // an FP8-capable GPU is usable
    bool fp8_tensor_cores = false;  // compute capability >= 8.9
    std::string device_name;
    int compute_major = 0;
    int compute_minor = 0;
    std::uint64_t memory_bytes = 0;
    int driver_version = 0;  // e.g. 13000 for CUDA 13.0
    int runtime_version = 0;
    std::string reason;  // why not ready; empty when ready
};

ProbeResult probe();

// One line for the UI and the CLI: "NVIDIA H100 (sm_90, 80 GiB)" or the reason.
std::string describe(const ProbeResult& result);

}  // namespace fp8lab::gpu
