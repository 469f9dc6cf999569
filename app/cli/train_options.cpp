// Training options: CLI11 declarations and their checked conversion to a TrainerConfig.
#include "app/cli/train_options.hpp"

#include <CLI/CLI.hpp>

#include "app/cli/usage_error.hpp"

namespace fp8lab::cli {

void add_train_options(CLI::App& cmd, TrainArgs& a) {
    cmd.add_option("--precision", a.precision, "fp32, bf16 or fp8")->capture_default_str();
    cmd.add_option("--recipe", a.recipe, "fp8: delayed, current, mx-floor, mx-rceil, blockwise, nvfp4")
        ->capture_default_str();
    cmd.add_option("--formats", a.formats, "hybrid (E5M2 gradients) or e4m3 (E4M3 gradients)")->capture_default_str();
    cmd.add_option("--history", a.history, "Delayed scaling: amax history length")->capture_default_str();
    cmd.add_option("--algo", a.algo, "Delayed scaling: max or most_recent")->capture_default_str();
    cmd.add_option("--margin", a.margin, "Delayed scaling: margin")->capture_default_str();
    cmd.add_option("--task", a.task, "teacher (regression) or clusters (classification)")->capture_default_str();
    cmd.add_option("--steps", a.steps, "Training steps")->capture_default_str();
    cmd.add_option("--hidden", a.hidden, "Hidden size")->capture_default_str();
    cmd.add_option("--layers", a.layers, "Hidden layers")->capture_default_str();
    cmd.add_option("--tokens", a.tokens, "Tokens (rows) per step")->capture_default_str();
    cmd.add_option("--input", a.input_dim, "Input size")->capture_default_str();
    cmd.add_option("--output", a.output_dim, "Outputs (regression) or classes")->capture_default_str();
    cmd.add_option("--lr", a.learning_rate, "AdamW learning rate")->capture_default_str();
    cmd.add_option("--seed", a.seed, "Seed of data and initial weights")->capture_default_str();
    cmd.add_flag("--no-scaling", a.no_scaling, "FP8 with scale 1 everywhere (shows underflow)");
    cmd.add_flag("--first-last-bf16", a.first_last_bf16, "Keep the first and last layer in BF16");
    cmd.add_flag("--loss-scaling", a.loss_scaling, "Dynamic loss scaling (GradScaler defaults)");
    cmd.add_option("--trace", a.trace, "Write the amax trace to this file");
}

emu::TrainerConfig trainer_config(const TrainArgs& a) {
    emu::TrainerConfig c;
    if (a.precision == "fp32") c.precision = emu::Precision::Fp32;
    else if (a.precision == "bf16") c.precision = emu::Precision::Bf16;
    else if (a.precision == "fp8") c.precision = emu::Precision::Fp8;
    else throw UsageError("--precision: '" + a.precision + "' is not fp32, bf16 or fp8");
    bool known = false;
    for (emu::Fp8Recipe r : {emu::Fp8Recipe::Delayed, emu::Fp8Recipe::Current, emu::Fp8Recipe::MxFloor,
                             emu::Fp8Recipe::MxRceil, emu::Fp8Recipe::Blockwise, emu::Fp8Recipe::Nvfp4})
        if (emu::fp8_recipe_name(r) == a.recipe) {
            c.fp8.recipe = r;
            known = true;
        }
    if (!known) throw UsageError("--recipe: unknown recipe '" + a.recipe + "'");
    if (a.formats == "hybrid") c.fp8.formats = emu::FormatRecipe::Hybrid;
    else if (a.formats == "e4m3") c.fp8.formats = emu::FormatRecipe::E4M3;
    else throw UsageError("--formats: '" + a.formats + "' is not hybrid or e4m3");
    if (a.algo == "max") c.fp8.delayed.algorithm = emu::AmaxAlgorithm::Max;
    else if (a.algo == "most_recent") c.fp8.delayed.algorithm = emu::AmaxAlgorithm::MostRecent;
    else throw UsageError("--algo: '" + a.algo + "' is not max or most_recent");
    if (a.task == "teacher") c.task.kind = emu::TaskKind::TeacherRegression;
    else if (a.task == "clusters") c.task.kind = emu::TaskKind::GaussianClusters;
    else throw UsageError("--task: '" + a.task + "' is not teacher or clusters");
    auto at_least = [](int v, int lo, const char* option) {
        if (v < lo) throw UsageError(std::string(option) + ": must be at least " + std::to_string(lo) +
                                     ", got " + std::to_string(v));
    };
    at_least(a.history, 1, "--history");
    at_least(a.margin, 0, "--margin");
    at_least(a.steps, 1, "--steps");
    at_least(a.hidden, 1, "--hidden");
    at_least(a.layers, 1, "--layers");
    at_least(a.tokens, 1, "--tokens");
    at_least(a.input_dim, 1, "--input");
    at_least(a.output_dim, c.task.kind == emu::TaskKind::GaussianClusters ? 2 : 1, "--output");
    if (!(a.learning_rate > 0)) throw UsageError("--lr: must be positive");
    c.fp8.delayed.history_length = a.history;
    c.fp8.delayed.margin = a.margin;
    c.fp8.scaling_disabled = a.no_scaling;
    c.first_last_in_bf16 = a.first_last_bf16;
    c.loss_scaling = a.loss_scaling;
    c.steps = a.steps;
    c.hidden_dim = a.hidden;
    c.hidden_layers = a.layers;
    c.tokens = a.tokens;
    c.task.input_dim = a.input_dim;
    c.task.output_dim = a.output_dim;
    c.task.seed = a.seed;
    c.init_seed = a.seed;
    c.learning_rate = a.learning_rate;
    c.record_trace = !a.trace.empty();
    return c;
}

}  // namespace fp8lab::cli
