// SPDX-License-Identifier: Apache-2.0
// The GPU's table of models: each model kind's GPU trainer, behind the one train_on_gpu
// (gpu/trainer.hpp). Built with and without CUDA: the trainers it names say why not.
#include <array>
#include <stdexcept>
#include <string>

#include "gpu/trainer.hpp"

namespace fp8lab::gpu {
namespace {

struct GpuModel {
    emu::ModelKind kind;
    GpuTrainResult (*train)(const GpuRun& run, const GpuProgress& progress);
};

const std::array<GpuModel, 2>& gpu_models() {
    static const std::array<GpuModel, 2> models{{
        {emu::ModelKind::Mlp, [](const GpuRun& r, const GpuProgress& p) { return train_mlp_on_gpu(r, p); }},
        {emu::ModelKind::Transformer,
         [](const GpuRun& r, const GpuProgress& p) { return train_transformer_on_gpu(r, p); }},
    }};
    return models;
}

}  // namespace

GpuTrainResult train_on_gpu(const GpuRun& run, const GpuProgress& progress) {
    for (const GpuModel& m : gpu_models())
        if (m.kind == run.experiment.model.kind) return m.train(run, progress);
    throw std::invalid_argument("model.kind: " + std::string(enum_name(run.experiment.model.kind)) +
                                " has no GPU trainer");
}

}  // namespace fp8lab::gpu
