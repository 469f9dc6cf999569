// SPDX-License-Identifier: Apache-2.0
// Inference timing in a build without CUDA: it says why it cannot run.
#include "gpu/inference_timing.hpp"
#include "gpu/probe.hpp"
#include "gpu/tensor_ops.hpp"

namespace fp8lab::gpu {

std::vector<InferenceTiming> time_inference(const InferenceModel&, int) { throw GpuUnavailable(probe().reason); }

}  // namespace fp8lab::gpu
