// SPDX-License-Identifier: Apache-2.0
// The GPU trainer in a build without CUDA: it checks the configuration, then says why not.
#include "gpu/probe.hpp"
#include "gpu/tensor_ops.hpp"
#include "gpu/trainer.hpp"

namespace fp8lab::gpu {

GpuTrainResult train_mlp_on_gpu(const GpuRun& config, const GpuProgress&) {
    validate(config);
    throw GpuUnavailable(probe().reason);
}

GpuTrainResult train_transformer_on_gpu(const GpuRun& config, const GpuProgress&) {
    validate(config);
    throw GpuUnavailable(probe().reason);
}

GpuInitialState gpu_initial_state(const GpuRun& config) {
    validate(config);
    throw GpuUnavailable(probe().reason);
}

}  // namespace fp8lab::gpu
