// SPDX-License-Identifier: Apache-2.0
// The CPU emulator's table of models (cpu_training.hpp).
#include "emulator/models/cpu_training.hpp"

#include <array>
#include <stdexcept>
#include <string>

#include "emulator/models/mlp/mlp_trainer.hpp"
#include "emulator/models/transformer/transformer_trainer.hpp"

namespace fp8lab::emu {

namespace {

TrainerResult train_mlp_entry(const Experiment& e, const TrainStepCallback& on_step, bool trace, bool numerics) {
    return train_mlp(e, on_step, trace, numerics);
}
TrainerResult train_transformer_entry(const Experiment& e, const TrainStepCallback& on_step, bool trace,
                                      bool numerics) {
    return train_transformer(e, on_step, trace, numerics);
}
// The transformer's trace is not counted yet: its estimate covers parameters and activations.
std::uint64_t transformer_bytes_entry(const Experiment& e, bool /*trace*/) { return transformer_training_bytes(e); }

constexpr std::array<CpuModel, 2> models{{
    {ModelKind::Mlp, train_mlp_entry, mlp_training_bytes, "--hidden, --layers, --tokens, --input or --output",
     "model.hidden, model.hidden_layers, tokens, model.input or model.output"},
    {ModelKind::Transformer, train_transformer_entry, transformer_bytes_entry,
     "--width, --blocks, --ffn, --sequence or --tokens", "model.transformer.width, .layers, .ffn, .sequence or tokens"},
}};

}  // namespace

std::span<const CpuModel> cpu_models() { return models; }

const CpuModel& cpu_model(ModelKind kind) {
    for (const CpuModel& m : models)
        if (m.kind == kind) return m;
    throw std::invalid_argument("model.kind: " + std::string(enum_name(kind)) + " has no CPU trainer");
}

TrainerResult train_on_cpu(const Experiment& e, const TrainStepCallback& on_step, bool record_trace,
                           bool record_numerics) {
    return cpu_model(e.model.kind).train(e, on_step, record_trace, record_numerics);
}

std::uint64_t cpu_training_bytes(const Experiment& e, bool trace) {
    return cpu_model(e.model.kind).training_bytes(e, trace);
}

}  // namespace fp8lab::emu
