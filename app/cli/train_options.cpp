// SPDX-License-Identifier: Apache-2.0
// Training options: CLI11 declarations and their checked application to an experiment.
#include "app/cli/train_options.hpp"

#include <CLI/CLI.hpp>

#include <algorithm>
#include <charconv>
#include <fstream>
#include <utility>
#include <sstream>

#include "app/options/command_options.hpp"
#include "app/options/usage_error.hpp"
#include "emulator/base/quoted_input.hpp"
#include "emulator/io/user_files.hpp"

namespace fp8lab::cli {
using options::integer_in;
using options::real_in;
using options::seed_value;
using options::UsageError;
namespace {

bool given(const TrainArgs& a, const char* option) { return a.command->count(option) > 0; }

template <class E>
E parse_option(const std::string& text, const char* option) {
    try {
        return parse_enum_or_throw<E>(text, option);
    } catch (const std::invalid_argument& e) {
        throw UsageError(e.what());
    }
}

const emu::Format* element_format(const std::string& name, const char* option) {
    const emu::Format* f = emu::find_format(name);
    if (!f || !emu::recipe_allows(emu::Fp8Recipe::Delayed, *f))
        throw UsageError(std::string(option) + ": " + emu::quoted_input(name) +
                         " is not e4m3, e5m2, e3m2, e2m3 or e2m1");
    return f;
}

emu::Experiment read_experiment_file(const std::string& path) {
    try {
        return emu::experiment_from_json(emu::read_user_file("--experiment", path), path);
    } catch (const std::exception& e) {  // invalid_argument: the file; runtime_error: its contents
        throw UsageError(e.what());
    }
}

// The shortest text that reads back as this float32 (help texts show the defaults).
std::string shortest(float v) {
    char buf[32];
    const auto r = std::to_chars(buf, buf + sizeof buf, v);
    return std::string(buf, r.ptr);
}

}  // namespace

void add_train_options(CLI::App& cmd, TrainArgs& a) {
    a.command = &cmd;
    const emu::Experiment d;
    cmd.add_option("--experiment", a.experiment_file,
                   "Experiment file (JSON) to start from; options given override it");
    cmd.add_option("--backend", a.backend, "cpu (the emulator) or gpu")->capture_default_str();
    cmd.add_flag("--print-experiment", a.print_experiment, "Print the experiment as JSON and exit");
    cmd.add_option("--precision", a.precision,
                   enum_choices<emu::Precision>() + " (default " + std::string(enum_name(d.numerics.precision)) + ")");
    cmd.add_option("--recipe", a.recipe,
                   enum_choices<emu::Fp8Recipe>() + " (default " + std::string(enum_name(d.numerics.recipe)) + ")");
    cmd.add_option("--formats", a.formats, "hybrid (E4M3, E5M2 gradients) or e4m3 (every role)");
    cmd.add_option("--input-format", a.input_format, "Element format of the layer inputs");
    cmd.add_option("--weight-format", a.weight_format, "Element format of the weights");
    cmd.add_option("--gradient-format", a.gradient_format, "Element format of the output gradients");
    cmd.add_option("--gradient-rounding", a.gradient_rounding, "nearest-even or stochastic");
    cmd.add_option("--saturation", a.saturation, "finite or none (overflow becomes Inf/NaN)");
    cmd.add_option(
           "--history", a.history,
           "Delayed scaling: amax history length (default " + std::to_string(d.numerics.delayed.history_length) + ")")
        ->check(integer_in(emu::bounds::kHistory));
    cmd.add_option(
        "--algo", a.algo,
        enum_choices<emu::AmaxAlgorithm>() + " (default " + std::string(enum_name(d.numerics.delayed.algorithm)) + ")");
    cmd.add_option("--margin", a.margin,
                   "Delayed scaling: margin (default " + std::to_string(d.numerics.delayed.margin) + ")")
        ->check(integer_in(emu::bounds::kMargin));
    cmd.add_option("--fast-accumulation", a.fast_accumulation,
                   "FP8 GEMMs with fast accumulation (the GPU's tensor cores; the CPU models them): none or a list of "
                   "forward, dgrad, wgrad (e.g. forward,wgrad)");
    cmd.add_option("--task", a.task,
                   enum_choices<emu::TaskKind>() + " (default " + std::string(enum_name(d.task.kind)) + ")");
    cmd.add_option("--batches", a.batches, "Distinct batches of data (default " + std::to_string(d.task.batches) + ")")
        ->check(integer_in(emu::bounds::kBatches));
    cmd.add_option("--outlier-scale", a.outlier_scale,
                   "Outlier task: its two massive channels, in the others' standard deviation (default " +
                       shortest(d.task.outlier_scale) + ")")
        ->check(real_in(emu::bounds::kOutlierScale));
    cmd.add_option("--steps", a.steps, "Training steps (default " + std::to_string(d.steps) + ")")
        ->check(integer_in(emu::bounds::kSteps));
    cmd.add_option("--hidden", a.hidden, "Hidden size (default " + std::to_string(d.model.hidden) + ")")
        ->check(integer_in(emu::bounds::kWidth));
    cmd.add_option("--layers", a.layers, "Hidden layers (default " + std::to_string(d.model.hidden_layers) + ")")
        ->check(integer_in(emu::bounds::kHiddenLayers));
    cmd.add_option("--tokens", a.tokens, "Tokens (rows) per step (default " + std::to_string(d.tokens) + ")")
        ->check(integer_in(emu::bounds::kTokens));
    cmd.add_option("--input", a.input_dim, "Input size (default " + std::to_string(d.model.input) + ")")
        ->check(integer_in(emu::bounds::kWidth));
    cmd.add_option("--output", a.output_dim, "Outputs or classes (default " + std::to_string(d.model.output) + ")")
        ->check(integer_in(emu::bounds::kWidth));
    cmd.add_flag("--biases", a.biases, "Give every layer a bias");
    const emu::TransformerSpec t = emu::default_transformer_experiment().model.transformer;
    cmd.add_option("--model", a.model,
                   enum_choices<emu::ModelKind>() + " (default " + std::string(enum_name(d.model.kind)) +
                       "); transformer starts from its default experiment: a byte-level language model on text");
    cmd.add_option("--width", a.width, "Transformer: model width (default " + std::to_string(t.width) + ")")
        ->check(integer_in(emu::bounds::kWidth));
    cmd.add_option("--blocks", a.blocks, "Transformer: blocks (default " + std::to_string(t.layers) + ")")
        ->check(integer_in(emu::bounds::kTransformerLayers));
    cmd.add_option("--heads", a.heads, "Transformer: query heads (default " + std::to_string(t.heads) + ")")
        ->check(integer_in(emu::bounds::kHeads));
    cmd.add_option("--kv-heads", a.kv_heads,
                   "Transformer: key/value heads (default " + std::to_string(t.kv_heads) + ")")
        ->check(integer_in(emu::bounds::kHeads));
    cmd.add_option("--ffn", a.ffn, "Transformer: SwiGLU inner width (default " + std::to_string(t.ffn) + ")")
        ->check(integer_in(emu::bounds::kWidth));
    cmd.add_option(
           "--sequence", a.sequence,
           "Transformer: bytes per sequence (default " + std::to_string(t.sequence) + "); --tokens is sequences x this")
        ->check(integer_in(emu::bounds::kSequence));
    cmd.add_flag("--separate-qkv", a.separate_qkv, "Transformer: three Q, K, V projections instead of one fused");
    cmd.add_flag("--tied-output", a.tied_output, "Transformer: the output projection is the embedding's transpose");
    cmd.add_flag("--output-fp8", a.output_fp8,
                 "Transformer: the output projection under the FP8 recipe too (BF16 by default)");
    cmd.add_option("--corpus", a.corpus,
                   "Text task: a plain-text file or folder (default " + std::string(emu::kDefaultCorpus) + ")");
    cmd.add_option("--eval-every", a.eval_every,
                   "Text task: validation loss every this many steps (default " +
                       std::to_string(emu::default_transformer_experiment().task.eval_every) + ")")
        ->check(integer_in(emu::bounds::kSteps));
    cmd.add_option("--lr", a.learning_rate, "AdamW learning rate (default " + shortest(d.optimizer.learning_rate) + ")")
        ->check(real_in(emu::bounds::kLearningRate));
    cmd.add_option("--weight-decay", a.weight_decay,
                   "AdamW decoupled weight decay (default " + shortest(d.optimizer.weight_decay) + ")")
        ->check(real_in(emu::bounds::kWeightDecay));
    cmd.add_option(
           "--grad-clip", a.grad_clip,
           "Clip the gradients' global L2 norm to this, 0 off (default " + shortest(d.optimizer.grad_clip) + ")")
        ->check(real_in(emu::bounds::kGradClip));
    cmd.add_option("--seed", a.seed,
                   "Seed of the data and of the initial weights (default " + std::to_string(d.task.seed) + ")")
        ->check(seed_value());
    cmd.add_option("--lr-schedule", a.lr_schedule,
                   "Learning rate per step: " + enum_choices<emu::LrScheduleKind>() + " (default " +
                       std::string(enum_name(d.optimizer.schedule.kind)) + ")");
    cmd.add_option(
           "--warmup", a.warmup,
           "warmup-cosine: steps of linear warm-up (default " + std::to_string(d.optimizer.schedule.warmup_steps) + ")")
        ->check(integer_in(emu::bounds::kWarmupSteps));
    cmd.add_option("--lr-floor", a.lr_floor,
                   "warmup-cosine: the last step's rate as a fraction of --lr (default " +
                       shortest(d.optimizer.schedule.floor) + ")")
        ->check(real_in(emu::bounds::kLrFloor));
    cmd.add_option("--seeds", a.seeds,
                   "Train the experiment this many times, run k from seed + k, and report the final loss's spread "
                   "(default " +
                       std::to_string(d.seeds) + ")")
        ->check(integer_in(emu::bounds::kSeeds));
    cmd.add_flag("--no-scaling", a.no_scaling, "FP8 with scale 1 everywhere (shows underflow)");
    cmd.add_flag("--first-last-bf16", a.first_last_bf16, "Keep the first and last layer in BF16");
    cmd.add_flag("--loss-scaling", a.loss_scaling, "Dynamic loss scaling (GradScaler defaults)");
    cmd.add_option("--trace", a.trace, "Write the amax trace to this file");
    cmd.add_option("--stats", a.stats,
                   "Write every FP8 cast's numerics to this CSV file: per step and tensor the amax, scale, elements "
                   "zero already, flushed to zero, saturated, subnormal, and the relative error (any recipe, both "
                   "models, on the CPU emulator and on the GPU, which counts them in its cast kernels)");
    cmd.add_option("--inference-format", a.inference_format,
                   "After training, evaluate the model quantised for inference to this format (e4m3, e5m2, e3m2, e2m3 "
                   "or e2m1) on held-out data");
    cmd.add_option("--inference-weights", a.inference_weights,
                   "Inference: " + enum_choices<emu::WeightQuantization>() + " (default " +
                       std::string(enum_name(d.inference.weights)) + ")");
    cmd.add_option("--inference-activations", a.inference_activations,
                   "Inference: " + enum_choices<emu::ActivationQuantization>() + " (default " +
                       std::string(enum_name(d.inference.activations)) + ")");
    cmd.add_option("--calibration-batches", a.calibration_batches,
                   "Inference: batches that set static activation scales (default " +
                       std::to_string(d.inference.calibration_batches) + ")")
        ->check(integer_in(emu::bounds::kCalibrationBatches));
}

emu::Experiment experiment_from_options(const TrainArgs& a) {
    emu::Experiment e = a.experiment_file.empty() ? emu::Experiment{} : read_experiment_file(a.experiment_file);
    if (given(a, "--model")) {
        const emu::ModelKind kind = parse_option<emu::ModelKind>(a.model, "--model");
        // Another model than the file's would start from that model's defaults and drop every
        // setting the file holds: refused, not done silently.
        if (kind != e.model.kind && !a.experiment_file.empty())
            throw UsageError("--model " + a.model + ": the experiment file " + emu::quoted_input(a.experiment_file) +
                             " describes the " + std::string(enum_name(e.model.kind)) +
                             " model, whose settings this would drop; leave --model out, or set model.kind in the "
                             "file");
        if (kind != e.model.kind)
            e = kind == emu::ModelKind::Transformer ? emu::default_transformer_experiment() : emu::Experiment{};
    }
    // The MLP's own settings mean nothing to the transformer: named, not ignored.
    if (e.model.kind == emu::ModelKind::Transformer)
        for (const char* option :
             {"--hidden", "--layers", "--input", "--output", "--biases", "--batches", "--outlier-scale",
              "--inference-format", "--inference-weights", "--inference-activations", "--calibration-batches"})
            if (given(a, option))
                throw UsageError(std::string(option) +
                                 ": is a setting of the MLP; the transformer (--model transformer) has none such "
                                 "(its size: --width, --blocks, --heads, --kv-heads, --ffn, --sequence)");
    {
        emu::TransformerSpec& t = e.model.transformer;
        const bool transformer = e.model.kind == emu::ModelKind::Transformer;
        for (const char* option : {"--width", "--blocks", "--heads", "--kv-heads", "--ffn", "--sequence",
                                   "--separate-qkv", "--tied-output", "--output-fp8", "--corpus", "--eval-every"})
            if (given(a, option) && !transformer)
                throw UsageError(std::string(option) + ": is a transformer setting (add --model transformer)");
        if (given(a, "--width")) t.width = a.width;
        if (given(a, "--blocks")) t.layers = a.blocks;
        if (given(a, "--heads")) t.heads = a.heads;
        if (given(a, "--kv-heads")) t.kv_heads = a.kv_heads;
        if (given(a, "--ffn")) t.ffn = a.ffn;
        if (given(a, "--sequence")) {
            // Keep the number of sequences a step unless --tokens says otherwise.
            const int sequences = std::max(1, e.tokens / t.sequence);
            t.sequence = a.sequence;
            e.tokens = sequences * t.sequence;
        }
        if (a.separate_qkv) t.fused_qkv = false;
        if (a.tied_output) t.tied_output = true;
        if (a.output_fp8) t.output_bf16 = false;
        if (given(a, "--corpus")) e.task.corpus = a.corpus;
        if (given(a, "--eval-every")) e.task.eval_every = a.eval_every;
    }
    emu::Numerics& n = e.numerics;
    if (given(a, "--precision")) n.precision = parse_option<emu::Precision>(a.precision, "--precision");
    if (given(a, "--recipe")) {
        // The recipes that dictate their element formats get them unless the formats are given.
        emu::set_recipe(e, parse_option<emu::Fp8Recipe>(a.recipe, "--recipe"));
    }
    if (given(a, "--formats")) {
        const emu::FormatRecipe r = parse_option<emu::FormatRecipe>(a.formats, "--formats");
        n.formats = {&emu::e4m3(), &emu::e4m3(), r == emu::FormatRecipe::Hybrid ? &emu::e5m2() : &emu::e4m3()};
    }
    if (given(a, "--input-format")) n.formats.input = element_format(a.input_format, "--input-format");
    if (given(a, "--weight-format")) n.formats.weight = element_format(a.weight_format, "--weight-format");
    if (given(a, "--gradient-format")) n.formats.gradient = element_format(a.gradient_format, "--gradient-format");
    if (given(a, "--gradient-rounding"))
        n.rounding.gradient = parse_option<emu::RoundingMode>(a.gradient_rounding, "--gradient-rounding");
    if (given(a, "--saturation")) n.saturation = parse_option<emu::Saturation>(a.saturation, "--saturation");
    if (given(a, "--history")) n.delayed.history_length = a.history;
    if (given(a, "--algo")) n.delayed.algorithm = parse_option<emu::AmaxAlgorithm>(a.algo, "--algo");
    if (given(a, "--margin")) n.delayed.margin = a.margin;
    if (given(a, "--fast-accumulation")) {
        n.fast_accumulation = {};
        std::stringstream list(a.fast_accumulation);
        for (std::string gemm; std::getline(list, gemm, ',');) {
            if (gemm == "forward")
                n.fast_accumulation.forward = true;
            else if (gemm == "dgrad")
                n.fast_accumulation.dgrad = true;
            else if (gemm == "wgrad")
                n.fast_accumulation.wgrad = true;
            else if (gemm != "none")
                throw UsageError("--fast-accumulation: " + emu::quoted_input(gemm) +
                                 " is not none, forward, dgrad or wgrad");
        }
    }
    if (given(a, "--task")) e.task.kind = parse_option<emu::TaskKind>(a.task, "--task");
    if (given(a, "--batches")) e.task.batches = a.batches;
    if (given(a, "--outlier-scale")) e.task.outlier_scale = a.outlier_scale;
    if (given(a, "--steps")) e.steps = a.steps;
    if (given(a, "--hidden")) e.model.hidden = a.hidden;
    if (given(a, "--layers")) e.model.hidden_layers = a.layers;
    if (given(a, "--tokens")) e.tokens = a.tokens;
    if (given(a, "--input")) e.model.input = a.input_dim;
    if (given(a, "--output")) e.model.output = a.output_dim;
    if (a.biases) e.model.biases = true;
    if (given(a, "--lr")) e.optimizer.learning_rate = a.learning_rate;
    if (given(a, "--weight-decay")) e.optimizer.weight_decay = a.weight_decay;
    if (given(a, "--grad-clip")) e.optimizer.grad_clip = a.grad_clip;
    if (given(a, "--seed")) e.task.seed = e.init_seed = a.seed;
    if (given(a, "--seeds")) e.seeds = a.seeds;
    if (given(a, "--lr-schedule"))
        e.optimizer.schedule.kind = parse_option<emu::LrScheduleKind>(a.lr_schedule, "--lr-schedule");
    if (given(a, "--warmup")) e.optimizer.schedule.warmup_steps = a.warmup;
    if (given(a, "--lr-floor")) e.optimizer.schedule.floor = a.lr_floor;
    if (a.no_scaling) n.scaling = false;
    if (a.first_last_bf16) n.edge_layers_bf16 = true;
    if (a.loss_scaling) n.loss_scaling = true;
    emu::InferenceSpec& inference = e.inference;
    if (given(a, "--inference-format")) {
        inference.enabled = true;
        inference.format = element_format(a.inference_format, "--inference-format");
    }
    if (given(a, "--inference-weights"))
        inference.weights = parse_option<emu::WeightQuantization>(a.inference_weights, "--inference-weights");
    if (given(a, "--inference-activations"))
        inference.activations =
            parse_option<emu::ActivationQuantization>(a.inference_activations, "--inference-activations");
    if (given(a, "--calibration-batches")) inference.calibration_batches = a.calibration_batches;
    if (!inference.enabled &&
        (given(a, "--inference-weights") || given(a, "--inference-activations") || given(a, "--calibration-batches")))
        throw UsageError(
            "--inference-weights, --inference-activations and --calibration-batches need "
            "--inference-format (or an experiment file with inference enabled)");
    try {
        emu::validate(e);
    } catch (const std::invalid_argument& err) {
        // Name the option that set the field, where one did.
        static constexpr std::pair<const char*, const char*> kOptionOf[] = {
            {"steps", "--steps"},
            {"tokens", "--tokens"},
            {"model.hidden", "--hidden"},
            {"model.hidden_layers", "--layers"},
            {"model.input", "--input"},
            {"model.output", "--output"},
            {"model.transformer.width", "--width"},
            {"model.transformer.layers", "--blocks"},
            {"model.transformer.heads", "--heads"},
            {"model.transformer.kv_heads", "--kv-heads"},
            {"model.transformer.ffn", "--ffn"},
            {"model.transformer.sequence", "--sequence"},
            {"task.corpus", "--corpus"},
            {"task.kind", "--task"},
            {"task.batches", "--batches"},
            {"task.outlier_scale", "--outlier-scale"},
            {"numerics.delayed.history", "--history"},
            {"numerics.delayed.margin", "--margin"},
            {"optimizer.learning_rate", "--lr"},
            {"optimizer.weight_decay", "--weight-decay"},
            {"optimizer.grad_clip", "--grad-clip"},
            {"inference.calibration_batches", "--calibration-batches"}};
        const std::string what = err.what();
        for (const auto& [field, option] : kOptionOf)
            if (what.rfind(std::string(field) + ":", 0) == 0 && given(a, option))
                throw UsageError(std::string(option) + " (" + what + ")");
        throw UsageError(what);
    }
    return e;
}

}  // namespace fp8lab::cli
