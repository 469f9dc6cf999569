// SPDX-License-Identifier: Apache-2.0
// Training on the CPU emulator, whichever the model: the table of models (each one's
// trainer and memory estimate) and the entry points the CLI, the labs and the Python module
// call, which never branch on the model themselves.
#pragma once

#include <cstdint>
#include <span>

#include "emulator/training/experiment.hpp"
#include "emulator/training/trainer_contract.hpp"

namespace fp8lab::emu {

// One model's CPU side.
struct CpuModel {
    ModelKind kind;
    TrainerResult (*train)(const Experiment& experiment, const TrainStepCallback& on_step, bool record_trace,
                           bool record_numerics);
    // About how many bytes its trainer holds (with `trace`, the amax trace's records too).
    std::uint64_t (*training_bytes)(const Experiment& experiment, bool trace);
    // What shrinks it, for a refusal: the command line's options and the experiment's fields.
    const char* size_options;
    const char* size_fields;
};

// Every model the CPU trains, one entry a kind.
std::span<const CpuModel> cpu_models();
// The entry of experiment.model.kind; throws std::invalid_argument for a kind without one.
const CpuModel& cpu_model(ModelKind kind);

// The model's trainer (train_mlp, train_transformer, ...).
TrainerResult train_on_cpu(const Experiment& experiment, const TrainStepCallback& on_step = {},
                           bool record_trace = false, bool record_numerics = false);

// The model's memory estimate, to refuse a run the machine cannot hold before it starts.
std::uint64_t cpu_training_bytes(const Experiment& experiment, bool trace = false);

}  // namespace fp8lab::emu
