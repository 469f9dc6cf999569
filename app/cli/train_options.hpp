// SPDX-License-Identifier: Apache-2.0
// Training options shared by `fp8lab train` and `fp8lab bench trainer`: every one sets a
// field of the experiment description, over an experiment file when one is given.
#pragma once

#include <cstdint>
#include <string>

#include "emulator/training/experiment.hpp"

namespace CLI {
class App;
class Option;
}  // namespace CLI

namespace fp8lab::cli {

struct TrainArgs {
    std::string experiment_file, backend = "cpu", trace, stats;
    bool print_experiment = false;
    std::string export_code;  // a labs::CodeTarget's name: print the experiment as that code and exit
    std::string compare;      // variants to train on the same seeds and compare, paired: "bf16,delayed"
    bool json = false;        // with compare: the table as JSON
    // Values of the options; each applies only when given on the command line.
    std::string precision, recipe, formats, input_format, weight_format, gradient_format, gradient_rounding, saturation,
        algo, task, fast_accumulation, inference_format, inference_weights, inference_activations;
    int calibration_batches = 0;
    int history = 0, margin = 0, steps = 0, hidden = 0, layers = 0, tokens = 0, input_dim = 0, output_dim = 0,
        batches = 0, seeds = 0, warmup = 0;
    std::string lr_schedule, model, corpus;
    int width = 0, blocks = 0, heads = 0, kv_heads = 0, ffn = 0, sequence = 0, eval_every = 0;
    bool separate_qkv = false, tied_output = false, output_fp8 = false;
    float lr_floor = 0, outlier_scale = 0;
    float learning_rate = 0, weight_decay = 0, grad_clip = 0;
    std::uint64_t seed = 0;
    bool no_scaling = false, first_last_bf16 = false, loss_scaling = false, biases = false;
    CLI::App* command = nullptr;
};

void add_train_options(CLI::App& cmd, TrainArgs& args);
// The experiment the options describe: the file's (or the labs' default), then every
// option given. Throws UsageError naming the option or the file's field.
emu::Experiment experiment_from_options(const TrainArgs& args);

}  // namespace fp8lab::cli
