// Training options shared by `fp8lab train` and `fp8lab bench trainer`.
#pragma once

#include <cstdint>
#include <string>

#include "emulator/mlp_trainer.hpp"

namespace CLI {
class App;
}

namespace fp8lab::cli {

struct TrainArgs {
    std::string precision = "fp8", recipe = "delayed", formats = "hybrid", algo = "max", task = "teacher";
    int history = 1024, margin = 0, steps = 200, hidden = 128, layers = 2, tokens = 128;
    int input_dim = 64, output_dim = 16;
    float learning_rate = 2e-3f;
    std::uint64_t seed = 1;
    bool no_scaling = false, first_last_bf16 = false, loss_scaling = false;
    std::string trace;
};

void add_train_options(CLI::App& cmd, TrainArgs& args);
// Throws UsageError naming the option for a value it cannot accept.
emu::TrainerConfig trainer_config(const TrainArgs& args);

}  // namespace fp8lab::cli
