// SPDX-License-Identifier: Apache-2.0
// The experiment description: its enums' name tables, its rules and its one-line summary.
#include "emulator/training/experiment.hpp"

#include "emulator/base/bounds.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <stdexcept>

namespace fp8lab {

template <>
std::span<const EnumName<emu::Precision>> enum_names<emu::Precision>() {
    static constexpr EnumName<emu::Precision> table[] = {
        {emu::Precision::Fp32, "fp32"}, {emu::Precision::Bf16, "bf16"}, {emu::Precision::Fp8, "fp8"}};
    return table;
}

template <>
std::span<const EnumName<emu::TaskKind>> enum_names<emu::TaskKind>() {
    static constexpr EnumName<emu::TaskKind> table[] = {{emu::TaskKind::TeacherRegression, "teacher"},
                                                        {emu::TaskKind::GaussianClusters, "clusters"},
                                                        {emu::TaskKind::Text, "text"},
                                                        {emu::TaskKind::OutlierFeatures, "outliers"}};
    return table;
}

template <>
std::span<const EnumName<emu::ModelKind>> enum_names<emu::ModelKind>() {
    static constexpr EnumName<emu::ModelKind> table[] = {{emu::ModelKind::Mlp, "mlp"},
                                                         {emu::ModelKind::Transformer, "transformer"}};
    return table;
}

template <>
std::span<const EnumName<emu::LrScheduleKind>> enum_names<emu::LrScheduleKind>() {
    static constexpr EnumName<emu::LrScheduleKind> table[] = {{emu::LrScheduleKind::Constant, "constant"},
                                                              {emu::LrScheduleKind::WarmupCosine, "warmup-cosine"}};
    return table;
}

}  // namespace fp8lab

namespace fp8lab::emu {
namespace {

[[noreturn]] void refuse(const std::string& field, const std::string& why) {
    throw std::invalid_argument(field + ": " + why);
}

void check_range(const std::string& field, long long v, IntegerBounds b) {
    if (!contains(b, v)) refuse(field, "must be " + describe(b) + ", not " + std::to_string(v));
}

void check_float(const std::string& field, float v, RealBounds b) {
    if (!contains(b, v)) {
        char text[32];
        std::snprintf(text, sizeof text, "%.9g", double(v));
        refuse(field, "must be a finite number " + describe(b) + ", not " + text);
    }
}

std::string role_formats(const Experiment& e) {
    const auto& f = e.numerics.formats;
    if (f.input == f.weight && f.weight == f.gradient) return std::string(f.input->name);
    if (f.input == &e4m3() && f.weight == &e4m3() && f.gradient == &e5m2()) return "hybrid";
    return std::string(f.input->name) + "/" + std::string(f.weight->name) + "/" + std::string(f.gradient->name);
}

}  // namespace

std::string_view precision_name(Precision p) { return enum_name(p); }
std::string_view task_kind_name(TaskKind kind) { return enum_name(kind); }

bool Experiment::operator==(const Experiment& other) const { return to_json(*this) == to_json(other); }

Experiment with_precision(Experiment e, Precision p) {
    e.numerics.precision = p;
    return e;
}

std::vector<float> learning_rates(const Experiment& e) {
    const OptimizerSpec& o = e.optimizer;
    std::vector<float> rates(std::size_t(std::max(e.steps, 0)), o.learning_rate);
    if (o.schedule.kind == LrScheduleKind::Constant) return rates;
    const int warmup = std::min(o.schedule.warmup_steps, e.steps);
    const double peak = o.learning_rate, floor = o.schedule.floor;
    const double decay_steps = std::max(1, e.steps - warmup - 1);
    constexpr double kPi = 3.141592653589793;
    for (int s = 0; s < e.steps; ++s) {
        double rate;
        if (s < warmup) {
            rate = peak * double(s + 1) / double(warmup);
        } else {
            const double progress = std::min(1.0, double(s - warmup) / decay_steps);
            rate = peak * (floor + (1.0 - floor) * 0.5 * (1.0 + std::cos(kPi * progress)));
        }
        rates[std::size_t(s)] = float(rate);
    }
    return rates;
}

Experiment with_seed(Experiment e, int k) {
    e.task.seed += std::uint64_t(k);
    e.init_seed += std::uint64_t(k);
    e.seeds = 1;
    return e;
}

void set_recipe(Experiment& e, Fp8Recipe recipe) {
    Numerics& n = e.numerics;
    const Recipe& to = emu::recipe(recipe);
    // Choosing a recipe gives the roles its formats: the defaults of the library it follows
    // (hybrid for the per-tensor recipes, E4M3 everywhere for MX, as Transformer Engine),
    // or the formats it fixes. Formats set after this override the defaults.
    n.formats = to.formats;
    n.recipe = recipe;
}

Recipe recipe_of(const Numerics& n) {
    Recipe r = recipe(n.recipe);
    if (!n.scaling) {  // every recipe: scale 1 in each of its blocks, the roles' formats and rounding
        r.rule = ScaleRule::One;
        r.hadamard_wgrad = false;
    }
    if (r.rule == ScaleRule::Nvfp4) {  // its own options instead of the roles' rounding and the saturation
        if (!n.nvfp4.weight_tiles) r.blocks.weight = r.blocks.input;
        r.rounding.gradient = n.nvfp4.stochastic_gradients ? RoundingMode::Stochastic : RoundingMode::NearestEven;
        r.hadamard_wgrad = n.nvfp4.hadamard_wgrad;
    } else {
        r.formats = n.formats;
        r.rounding = n.rounding;
        r.saturation = n.saturation;
    }
    return r;
}

void set_all_formats(Experiment& e, const Format& f) {
    if (!is_element_format(f)) return;
    e.numerics.formats = {&f, &f, &f};
}

Experiment default_transformer_experiment() {
    Experiment e;
    e.model.kind = ModelKind::Transformer;
    e.task.kind = TaskKind::Text;
    e.tokens = e.model.transformer.sequence * 8;
    // Long enough to write mostly words (about 3.0 bits per byte of validation loss at the
    // end) while 4 seeds of BF16 and FP8 take under 3 minutes on a 2-core laptop; at this
    // size 2e-3 ended lower than 3e-3 and 1e-3 (docs/numerics.md §5.1).
    e.steps = 700;
    e.optimizer.learning_rate = 2e-3f;
    e.optimizer.weight_decay = 0.0f;
    e.optimizer.grad_clip = 1.0f;
    e.optimizer.schedule = {LrScheduleKind::WarmupCosine, 20, 0.1f};
    return e;
}

namespace {

// The transformer's own rules: shapes that divide, and the MLP's settings it does not take.
void validate_transformer(const Experiment& e) {
    const TransformerSpec& t = e.model.transformer;
    check_range("model.transformer.width", t.width, bounds::kWidth);
    check_range("model.transformer.layers", t.layers, bounds::kTransformerLayers);
    check_range("model.transformer.heads", t.heads, bounds::kHeads);
    check_range("model.transformer.kv_heads", t.kv_heads, bounds::kHeads);
    check_range("model.transformer.ffn", t.ffn, bounds::kWidth);
    check_range("model.transformer.sequence", t.sequence, bounds::kSequence);
    if (t.width % t.heads != 0)
        refuse("model.transformer.heads", std::to_string(t.heads) + " does not divide the width (" +
                                              std::to_string(t.width) + "): every head has width / heads channels");
    if (t.heads % t.kv_heads != 0)
        refuse("model.transformer.kv_heads", std::to_string(t.kv_heads) + " does not divide the query heads (" +
                                                 std::to_string(t.heads) + "): each key/value head serves a group");
    if (t.head_size() % 2 != 0)
        refuse("model.transformer.heads", "the head size width / heads = " + std::to_string(t.head_size()) +
                                              " is odd: rotary embedding turns channels in pairs");
    if (e.tokens % t.sequence != 0)
        refuse("tokens", std::to_string(e.tokens) + " is not a whole number of sequences of " +
                             std::to_string(t.sequence) + " bytes (model.transformer.sequence)");
    if (e.task.kind != TaskKind::Text) refuse("task.kind", "the transformer trains on the text task ('text')");
    if (e.numerics.edge_layers_bf16)
        refuse("numerics.edge_layers_bf16",
               "is the MLP's setting; the transformer keeps its output projection in BF16 through "
               "model.transformer.output_bf16");
    if (e.inference.enabled) refuse("inference.enabled", "the inference evaluation is built for the MLP only");
    if (e.task.corpus.empty()) refuse("task.corpus", "names no file or folder");
}

}  // namespace

void validate(const Experiment& e) {
    check_range("task.eval_every", e.task.eval_every, bounds::kSteps);
    check_range("task.eval_sequences", e.task.eval_sequences, bounds::kEvalSequences);
    if (e.model.kind == ModelKind::Transformer) {
        validate_transformer(e);
    } else if (e.task.kind == TaskKind::Text) {
        refuse("task.kind", "the text task is the transformer's (model.kind 'transformer')");
    }
    check_range("model.input", e.model.input, bounds::kWidth);
    check_range("model.hidden", e.model.hidden, bounds::kWidth);
    check_range("model.hidden_layers", e.model.hidden_layers, bounds::kHiddenLayers);
    check_range("model.output", e.model.output, bounds::kWidth);
    if (e.task.kind == TaskKind::GaussianClusters && e.model.output < 2)
        refuse("model.output", "a classification task needs at least 2 classes");
    check_range("task.batches", e.task.batches, bounds::kBatches);
    check_float("task.outlier_scale", e.task.outlier_scale, bounds::kOutlierScale);
    if (e.task.kind == TaskKind::OutlierFeatures && e.model.input < kOutlierChannels.back() + 1)
        refuse("model.input", "the outlier task's massive channels are " + std::to_string(kOutlierChannels[0]) +
                                  " and " + std::to_string(kOutlierChannels[1]) + ": it needs at least " +
                                  std::to_string(kOutlierChannels.back() + 1) + " inputs");
    check_range("tokens", e.tokens, bounds::kTokens);
    check_range("steps", e.steps, bounds::kSteps);
    check_range("seeds", e.seeds, bounds::kSeeds);
    const OptimizerSpec& o = e.optimizer;
    check_float("optimizer.learning_rate", o.learning_rate, bounds::kLearningRate);
    check_float("optimizer.beta1", o.beta1, bounds::kBeta);
    check_float("optimizer.beta2", o.beta2, bounds::kBeta);
    check_float("optimizer.epsilon", o.epsilon, bounds::kEpsilon);
    check_float("optimizer.weight_decay", o.weight_decay, bounds::kWeightDecay);
    check_float("optimizer.grad_clip", o.grad_clip, bounds::kGradClip);
    check_range("optimizer.schedule.warmup_steps", o.schedule.warmup_steps, bounds::kWarmupSteps);
    check_float("optimizer.schedule.floor", o.schedule.floor, bounds::kLrFloor);
    const Numerics& n = e.numerics;
    check_range("numerics.delayed.history", n.delayed.history_length, bounds::kHistory);
    check_range("numerics.delayed.margin", n.delayed.margin, bounds::kMargin);
    const char* roles[3] = {"input", "weight", "gradient"};
    const TensorRole role_values[3] = {TensorRole::Input, TensorRole::Weight, TensorRole::GradOutput};
    for (int r = 0; r < 3; ++r) {
        const Format& f = *n.formats.of(role_values[r]);
        const std::string field = std::string("numerics.formats.") + roles[r];
        if (!is_element_format(f)) refuse(field, "'" + std::string(f.name) + "' is not e4m3, e5m2, e3m2, e2m3 or e2m1");
        if (n.precision == Precision::Fp8 && !recipe_allows(n.recipe, f))
            refuse(field, "recipe '" + std::string(fp8_recipe_name(n.recipe)) + "' takes " +
                              allowed_formats_text(n.recipe) + ", not " + std::string(f.name));
        const RoundingMode m = n.rounding.of(role_values[r]);
        if (m != RoundingMode::NearestEven && m != RoundingMode::Stochastic)
            refuse(std::string("numerics.rounding.") + roles[r],
                   "a training cast rounds to nearest-even or stochastic, not " + std::string(rounding_mode_name(m)));
    }
    const LossScalerConfig& s = n.loss_scaler;
    check_float("numerics.loss_scaling.initial_scale", s.initial_scale, bounds::kInitialLossScale);
    check_float("numerics.loss_scaling.growth_factor", s.growth_factor, bounds::kGrowthFactor);
    check_float("numerics.loss_scaling.backoff_factor", s.backoff_factor, bounds::kBackoffFactor);
    check_range("numerics.loss_scaling.growth_interval", s.growth_interval, bounds::kGrowthInterval);
    const InferenceSpec& i = e.inference;
    if (!is_element_format(*i.format))
        refuse("inference.format",
               ((std::string(1, '\'') += i.format->name) += "' is not e4m3, e5m2, e3m2, e2m3 or e2m1"));
    check_range("inference.calibration_batches", i.calibration_batches, bounds::kCalibrationBatches);
}

std::string describe_numerics(const Experiment& e) {
    const Numerics& n = e.numerics;
    if (n.precision != Precision::Fp8) return n.precision == Precision::Bf16 ? "BF16" : "FP32";
    const Recipe& r = recipe(n.recipe);
    const bool nvfp4 = r.rule == ScaleRule::Nvfp4;  // its own options, its formats its name
    std::string text = nvfp4 ? r.family : "FP8 " + std::string(fp8_recipe_name(n.recipe));
    if (!nvfp4) text += " (" + role_formats(e) + ")";
    if (!n.scaling)
        text += " without scaling (scale 1)";
    else if (r.rule == ScaleRule::Delayed)
        text += ", history " + std::to_string(n.delayed.history_length) + " " +
                std::string(amax_algorithm_name(n.delayed.algorithm)) + " margin " + std::to_string(n.delayed.margin);
    if (nvfp4)
        text += std::string(n.nvfp4.weight_tiles ? ", 16x16 weight tiles" : ", 1x16 weight blocks") +
                (n.nvfp4.stochastic_gradients ? ", stochastic gradients" : "") +
                (n.nvfp4.hadamard_wgrad ? ", Hadamard wgrad" : "");
    if (n.rounding.gradient == RoundingMode::Stochastic && !nvfp4) text += ", stochastic gradients";
    if (n.rounding.input == RoundingMode::Stochastic || n.rounding.weight == RoundingMode::Stochastic)
        text += ", stochastic forward casts";
    if (n.saturation == Saturation::None) text += ", no saturation";
    if (n.fast_accumulation.any())
        text += std::string(", fast accumulation") + (n.fast_accumulation.forward ? " fwd" : "") +
                (n.fast_accumulation.dgrad ? " dgrad" : "") + (n.fast_accumulation.wgrad ? " wgrad" : "");
    if (n.edge_layers_bf16) text += ", first/last layer BF16";
    if (e.model.kind == ModelKind::Transformer && e.model.transformer.output_bf16) text += ", output projection BF16";
    if (n.loss_scaling) text += ", dynamic loss scaling";
    return text;
}

std::string describe_skipped_steps(std::size_t skipped, std::size_t steps, bool loss_scaling) {
    return std::to_string(skipped) + " of " + std::to_string(steps) +
           " steps not applied: a weight gradient was not finite" +
           (loss_scaling ? " (the loss scaler backed off each time)" : "");
}

std::string describe_inference(const InferenceSpec& i) {
    const std::string f(i.format->name);
    const bool four_bit_weights = i.weights == WeightQuantization::Nvfp4 || i.weights == WeightQuantization::Mxfp4;
    std::string text = "inference with " + (i.weights == WeightQuantization::None ? std::string("float32 weights")
                                            : four_bit_weights ? std::string(enum_name(i.weights)) + " weights"
                                                               : f + " weights " + std::string(enum_name(i.weights)));
    if (i.activations == ActivationQuantization::None) return text + ", float32 activations";
    if (i.activations == ActivationQuantization::Nvfp4 || i.activations == ActivationQuantization::Mxfp4)
        return text + ", " + std::string(enum_name(i.activations)) + " activations";
    text += ", " + f + " activations " + std::string(enum_name(i.activations));
    if (i.activations == ActivationQuantization::Static)
        text += " (" + std::to_string(i.calibration_batches) + " calibration batches)";
    return text;
}

std::string model_name(const Experiment& e) {
    if (e.model.kind == ModelKind::Transformer)
        return "Transformer on text (" + std::to_string(e.model.transformer.layers) + " blocks of width " +
               std::to_string(e.model.transformer.width) + ")";
    return "MLP (" + std::to_string(e.model.hidden_layers + 1) + " linear layers, width " +
           std::to_string(e.model.hidden) + ")";
}

std::string describe(const Experiment& e) {
    std::string shape;
    if (e.model.kind == ModelKind::Transformer) {
        const TransformerSpec& t = e.model.transformer;
        shape = "transformer " + std::to_string(t.layers) + "x" + std::to_string(t.width) + " (" +
                std::to_string(t.heads) + "/" + std::to_string(t.kv_heads) + " heads, ffn " + std::to_string(t.ffn) +
                ", " + (t.fused_qkv ? "fused" : "separate") + " QKV, sequence " + std::to_string(t.sequence) + ")";
    } else {
        shape = std::to_string(e.model.input);
        for (int l = 0; l < e.model.hidden_layers; ++l) (shape += '-') += std::to_string(e.model.hidden);
        (shape += '-') += std::to_string(e.model.output);
        if (e.model.biases) shape += " with biases";
    }
    std::string text = shape + ", " + std::string(task_kind_name(e.task.kind)) + ", " + std::to_string(e.tokens) +
                       " tokens, " + std::to_string(e.steps) + " steps" +
                       (e.seeds > 1 ? " x " + std::to_string(e.seeds) + " seeds" : std::string()) + ", " +
                       describe_numerics(e);
    const LrSchedule& lr = e.optimizer.schedule;
    if (lr.kind == LrScheduleKind::WarmupCosine) {
        char floor[32];
        std::snprintf(floor, sizeof floor, "%g", double(lr.floor));
        text += ", lr warm-up " + std::to_string(lr.warmup_steps) + " steps then cosine to " + floor + "x";
    }
    if (e.inference.enabled) text += "; then " + describe_inference(e.inference);
    return text;
}

}  // namespace fp8lab::emu
