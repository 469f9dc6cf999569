// SPDX-License-Identifier: Apache-2.0
// The CPU emulator's trainers, chosen by the model's kind.
#include "emulator/models/cpu_training.hpp"

#include "emulator/models/transformer/transformer_trainer.hpp"

namespace fp8lab::emu {

TrainerResult train_on_cpu(const Experiment& e, const TrainStepCallback& on_step, bool record_trace,
                           bool record_numerics) {
    return e.model.kind == ModelKind::Transformer ? train_transformer(e, on_step, record_trace, record_numerics)
                                                  : train_mlp(e, on_step, record_trace, record_numerics);
}

}  // namespace fp8lab::emu
