// SPDX-License-Identifier: Apache-2.0
// probe() for a build without CUDA: every GPU request reports exactly that.
#include "gpu/probe.hpp"

namespace fp8lab::gpu {

ProbeResult probe() {
    ProbeResult r;
    r.reason =
        "this fp8lab was built without CUDA (configure with FP8LAB_CUDA=ON on a machine "
        "with the CUDA Toolkit)";
    return r;
}

}  // namespace fp8lab::gpu
