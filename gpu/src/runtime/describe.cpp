// SPDX-License-Identifier: Apache-2.0
// Human-readable one-line description of a probe result.
#include "gpu/probe.hpp"

namespace fp8lab::gpu {

std::string describe(const ProbeResult& r) {
    if (!r.ready) return r.reason;
    const double gib = double(r.memory_bytes) / double(1ull << 30);
    return r.device_name + " (sm_" + std::to_string(r.compute_major) + std::to_string(r.compute_minor) + ", " +
           std::to_string(int(gib + 0.5)) + " GiB)";
}

}  // namespace fp8lab::gpu
