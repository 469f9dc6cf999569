// SPDX-License-Identifier: Apache-2.0
// Lab 9, FP8 for inference: a trained MLP with its weights quantised (per tensor or per
// output channel) and its activations too (scales calibrated on sample batches, or
// computed per batch); how calibration size matters; FP8 against FP4 for a KV-cache-like
// tensor. Output error against float32, and accuracy; and the speed of FP8 serving,
// measured on the GPU (or the recording of one).
#include <algorithm>
#include <cmath>
#include <fstream>

#include "emulator/scaling/block_recipes.hpp"
#include "emulator/formats/bulk.hpp"
#include "emulator/formats/convert.hpp"
#include "emulator/scaling/current_scaling.hpp"
#include "emulator/models/mlp/inference_quantization.hpp"
#include "emulator/models/mlp/mlp_trainer.hpp"
#include "emulator/training/training_task.hpp"
#include "labs/framework/asset_files.hpp"
#include "labs/experiments/inference_speed.hpp"
#include "labs/logic/lab_logic.hpp"
#include "labs/experiments/sample_tensors.hpp"

namespace fp8lab::labs {
namespace {

constexpr int kBatchRows = 256, kEvalBatches = 8;
constexpr float kShiftFactor = 3.0f;  // how much larger the shifted inputs are

// A classifier of Gaussian clusters: 64 -> 128 -> 128 -> 16 with biases, trained in FP32.
emu::Experiment model_config() {
    emu::Experiment c;
    c.model = emu::ModelSpec::mlp(64, 128, 2, 16, true);
    c.task = {emu::TaskKind::GaussianClusters, 1, 300};
    c.steps = 300;
    c.optimizer.learning_rate = 2e-3f;
    c.optimizer.weight_decay = 0.01f;
    c.optimizer.grad_clip = 1.0f;
    c.numerics.precision = emu::Precision::Fp32;
    return c;
}

// The model every step of this lab quantises: trained once per process (about a second).
const std::vector<emu::LayerWeights>& trained_model() {
    static const std::vector<emu::LayerWeights> layers = emu::train_mlp(model_config()).final_layers;
    return layers;
}

struct QuantizationVariant {
    std::string name, short_name;  // the table's and the bar chart's
    emu::WeightQuantization weights;
    emu::ActivationQuantization activations;
};

// Lab 9's experiment: its model trained as the training panel trains it, then quantised
// for inference with the step's format, weights per channel and static activation scales.
void map_inference(emu::Experiment& e, const emu::Format& f, int calibration_batches) {
    e = model_config();
    e.inference.enabled = true;
    e.inference.format = &f;
    e.inference.weights = emu::WeightQuantization::PerChannel;
    e.inference.activations = emu::ActivationQuantization::Static;
    e.inference.calibration_batches = calibration_batches;
}

// The amax each layer's input reaches on each calibration batch, [batch][layer]: measured
// once, so that scales for any number of batches are maxima over a prefix.
std::vector<std::vector<float>> calibration_amax(int batches) {
    const emu::TrainingTask task(model_config());
    std::vector<std::vector<float>> per_batch;
    for (int b = 0; b < batches; ++b) {
        std::vector<float> amax(trained_model().size(), 0.0f);
        emu::quantized_forward(trained_model(), task.batch(50000 + std::uint64_t(b), kBatchRows).inputs, kBatchRows,
                               emu::e4m3(), emu::ActivationQuantization::None, {}, &amax);
        per_batch.push_back(std::move(amax));
    }
    return per_batch;
}

// Static activation scales from the first `batches` calibration batches.
std::vector<float> static_scales(const std::vector<std::vector<float>>& amax, int batches, const emu::Format& f) {
    std::vector<float> largest(trained_model().size(), 0.0f);
    for (std::size_t l = 0; l < largest.size(); ++l)
        for (int b = 0; b < batches; ++b) largest[l] = std::max(largest[l], amax[std::size_t(b)][l]);
    return emu::static_activation_scales(largest, f);
}

// The held-out batches and float32's outputs on them, computed once per run of a step.
// `shifted`: the fraction of inputs made kShiftFactor times larger, a shift that the
// calibration batches (always clean) never saw.
struct EvaluationSet {
    std::vector<emu::Batch> batches;
    std::vector<std::vector<float>> reference;
};

EvaluationSet evaluation_set(double shifted) {
    const emu::TrainingTask task(model_config());
    EvaluationSet set;
    for (int b = 0; b < kEvalBatches; ++b) {
        emu::Batch batch = task.batch(100000 + std::uint64_t(b), kBatchRows);
        const int inputs = int(batch.inputs.size()) / kBatchRows;
        for (int r = 0; r < kBatchRows; ++r)
            if ((b * kBatchRows + r) % 1000 < int(shifted * 1000))
                for (int i = 0; i < inputs; ++i) batch.inputs[std::size_t(r) * inputs + i] *= kShiftFactor;
        set.reference.push_back(emu::quantized_forward(trained_model(), batch.inputs, kBatchRows, emu::e4m3(),
                                                       emu::ActivationQuantization::None, {}));
        set.batches.push_back(std::move(batch));
    }
    return set;
}

struct Evaluation {
    double output_error = 0;  // ||y - y_fp32|| / ||y_fp32|| over the evaluation batches
    double accuracy = 0;      // argmax against the labels
    double agreement = 0;     // argmax against float32's argmax
};

Evaluation evaluate(const std::vector<emu::LayerWeights>& layers, const emu::Format& f, emu::ActivationQuantization how,
                    const std::vector<float>& scales, const EvaluationSet& set) {
    Evaluation e;
    double diff = 0, norm = 0;
    int correct = 0, agree = 0, total = 0;
    const auto argmax = [](const float* p, int n) { return int(std::max_element(p, p + n) - p); };
    for (std::size_t b = 0; b < set.batches.size(); ++b) {
        const std::vector<float>& ref = set.reference[b];
        const std::vector<float> y = emu::quantized_forward(layers, set.batches[b].inputs, kBatchRows, f, how, scales);
        const int classes = int(y.size()) / kBatchRows;
        for (std::size_t i = 0; i < y.size(); ++i) {
            diff += double(y[i] - ref[i]) * (y[i] - ref[i]);
            norm += double(ref[i]) * ref[i];
        }
        for (int r = 0; r < kBatchRows; ++r) {
            const int p = argmax(&y[std::size_t(r) * classes], classes);
            correct += p == set.batches[b].labels[std::size_t(r)];
            agree += p == argmax(&ref[std::size_t(r) * classes], classes);
            ++total;
        }
    }
    e.output_error = std::sqrt(diff / norm);
    e.accuracy = 100.0 * correct / total;
    e.agreement = 100.0 * agree / total;
    return e;
}

std::vector<Column> evaluation_columns() {
    return {{"model"},
            {"output error vs float32", ColumnType::Number},
            {"accuracy", ColumnType::Number, "%"},
            {"same prediction as float32", ColumnType::Number, "%"}};
}

StepLogic weights_and_activations() {
    StepLogic s;
    s.id = "weights-and-activations";
    s.titles = {{"figure output-error", {"format"}}, {"table variants", {"samples"}}};
    s.parameters = {choice("format", format_choice_names({&emu::e4m3(), &emu::e5m2(), &emu::e2m1()}), "e4m3"),
                    integer("calibration", 1, 64, 8)};
    s.training_parameters = {"format", "calibration"};
    s.training_mapping =
        "Training runs this lab's classifier (64-128-128-16 with biases, Gaussian clusters); the "
        "trained model is then quantised for inference in the format, weights per channel and "
        "activations with static scales from the calibration batches, and evaluated on held-out data.";
    s.training = [](const Parameters& p, emu::Experiment& e) {
        map_inference(e, emu::format_by_name(p.choice("format")), int(p.integer("calibration")));
    };
    s.run = [](const Parameters& p, RunContext&) {
        const emu::Format& f = emu::format_by_name(p.choice("format"));
        const int batches = int(p.integer("calibration"));
        const std::vector<float> scales = static_scales(calibration_amax(batches), batches, f);
        const EvaluationSet set = evaluation_set(0);
        const std::vector<QuantizationVariant> variants = {
            {"float32", "float32", emu::WeightQuantization::None, emu::ActivationQuantization::None},
            {"weights only, per tensor", "W per tensor", emu::WeightQuantization::PerTensor,
             emu::ActivationQuantization::None},
            {"weights only, per channel", "W per channel", emu::WeightQuantization::PerChannel,
             emu::ActivationQuantization::None},
            {"weights per channel + activations, static", "W + A static", emu::WeightQuantization::PerChannel,
             emu::ActivationQuantization::Static},
            {"weights per channel + activations, dynamic", "W + A dynamic", emu::WeightQuantization::PerChannel,
             emu::ActivationQuantization::Dynamic},
            {"weights per channel + activations per token", "W + A per token", emu::WeightQuantization::PerChannel,
             emu::ActivationQuantization::PerToken},
            {"weights only, NVFP4", "W NVFP4", emu::WeightQuantization::Nvfp4, emu::ActivationQuantization::None}};
        StepOutput out;
        Figure fig = category_bar_figure("output-error", "relative output error vs float32");
        fig.title_values = {{"format", std::string(f.display_name)}};
        CategoryBars bars{fig, {SeriesKind::Bars, "", 0}};
        Table t{"variants", {}, evaluation_columns(), {}};
        t.title_values = {{"samples", std::to_string(kEvalBatches * kBatchRows)}};
        for (std::size_t i = 0; i < variants.size(); ++i) {
            const QuantizationVariant& v = variants[i];
            const Evaluation e =
                evaluate(emu::quantize_weights(trained_model(), f, v.weights), f, v.activations, scales, set);
            t.rows.push_back({v.name, e.output_error, e.accuracy, e.agreement});
            if (i == 0) continue;  // float32 against itself: no bar to draw
            bars.add(v.short_name, e.output_error);
        }
        bars.finish();
        out.figures.push_back(std::move(fig));
        out.tables.push_back(std::move(t));
        out.notes.push_back("The model: " + std::to_string(trained_model().size()) +
                            " linear layers trained in float32 on Gaussian clusters; quantisation is simulated "
                            "(values rounded to the format, arithmetic in float32).");
        return out;
    };
    s.exercise = choice_exercise({"exponent-adapts", "lower-precision", "rounds-twice", "activations-only"}, 0);
    return s;
}

StepLogic calibration() {
    StepLogic s;
    s.id = "calibration";
    s.titles = {{"figure by-calibration"}, {"table by-calibration", {"shifted", "factor"}}};
    s.parameters = {choice("format", format_choice_names({&emu::e4m3(), &emu::e5m2(), &emu::e2m1()}), "e4m3"),
                    integer("shifted", 0, 20, 2)};
    s.training_parameters = {"format"};
    s.training_mapping =
        "Training runs this lab's classifier; the trained model is then quantised for inference in "
        "the format (weights per channel, static activation scales from 8 calibration batches) and "
        "evaluated on held-out data. The shift is this step's own test and is not mapped.";
    s.training = [](const Parameters& p, emu::Experiment& e) {
        map_inference(e, emu::format_by_name(p.choice("format")), 8);
    };
    s.run = [](const Parameters& p, RunContext& ctx) {
        const emu::Format& f = emu::format_by_name(p.choice("format"));
        const double shifted = double(p.integer("shifted")) / 100;
        const std::vector<emu::LayerWeights> weights =
            emu::quantize_weights(trained_model(), f, emu::WeightQuantization::PerChannel);
        const EvaluationSet set = evaluation_set(shifted);
        const std::vector<std::vector<float>> amax = calibration_amax(64);
        const Evaluation dynamic = evaluate(weights, f, emu::ActivationQuantization::Dynamic, {}, set);
        StepOutput out;
        Figure fig;
        fig.id = "by-calibration";
        fig.x_axis = {"calibration batches", AxisScale::Log2};
        fig.y_axis = {"relative output error vs float32", AxisScale::Log10};
        Series stat = line("static scales from the calibration batches", {}, {}, 0);
        Table t{"by-calibration", {}, evaluation_columns(), {}};
        t.title_values = {{"shifted", number_text(100 * shifted)}, {"factor", number_text(kShiftFactor)}};
        for (int n = 1; n <= 64; n *= 2) {
            if (ctx.cancel_requested()) throw RunCancelled();
            const Evaluation e =
                evaluate(weights, f, emu::ActivationQuantization::Static, static_scales(amax, n, f), set);
            stat.x.push_back(n);
            stat.y.push_back(e.output_error);
            t.rows.push_back({std::to_string(n) + " batch(es)", e.output_error, e.accuracy, e.agreement});
        }
        t.rows.push_back(
            {std::string("dynamic (per batch)"), dynamic.output_error, dynamic.accuracy, dynamic.agreement});
        Series dyn =
            line("dynamic: scale from each batch's own amax", {1, 64}, {dynamic.output_error, dynamic.output_error}, 1);
        dyn.dashed = true;
        fig.series = {stat, dyn};
        out.figures.push_back(std::move(fig));
        out.tables.push_back(std::move(t));
        return out;
    };
    // The exercise: a static scale calibrated to amax 6 meets 9 at inference.
    const float scale = emu::current_scale(6.0f, emu::e4m3()).scale;
    const double back = emu::round_to_format(emu::e4m3(), double(9.0f * scale)) / scale;
    s.exercise = numeric_exercise(back, {{"dynamic", 9}, {"clamped-code", emu::e4m3().max_finite}}, 1e-6);
    return s;
}

// A KV cache as inference engines keep it: keys and values of every past token, per head,
// stored in FP8 with a scale per tensor (calibrated, or the 1.0 used without calibration),
// per head, or in four bits; queries attend over it and the output is compared with
// float32's.
struct KvCache {
    static constexpr int kTokens = 256, kHeads = 4, kHeadDim = 16, kQueries = 16;
    static constexpr int kDim = kHeads * kHeadDim;
    std::vector<float> keys, values, queries;  // tokens (queries) x kDim, head h in columns [16h, 16h + 16)
};

// Keys with three outlier channels 40x the rest, which reach past E4M3's 448 unscaled;
// values whose heads differ in size by 8x each, the smallest mostly below E4M3's normal
// range unscaled.
KvCache make_kv_cache(std::uint64_t seed) {
    KvCache kv;
    const std::size_t n = std::size_t(KvCache::kTokens) * KvCache::kDim;
    kv.keys = sample_tensor(TensorKind::Weights, n, seed + 11);
    kv.values = sample_tensor(TensorKind::Weights, n, seed + 13);
    kv.queries = sample_tensor(TensorKind::Weights, std::size_t(KvCache::kQueries) * KvCache::kDim, seed + 12);
    for (float& v : kv.keys) v *= 200.0f;   // N(0, 4^2)
    for (float& v : kv.queries) v *= 0.5f;  // N(0, 0.01^2): attention peaked, not one-hot
    for (int t = 0; t < KvCache::kTokens; ++t) {
        for (int c : {3, 17, 42}) kv.keys[std::size_t(t) * KvCache::kDim + c] *= 40.0f;
        for (int c = 0; c < KvCache::kDim; ++c)  // N(0, 0.02^2) in head 1 up to N(0, 10^2) in head 4
            kv.values[std::size_t(t) * KvCache::kDim + c] *= float(1 << (3 * (c / KvCache::kHeadDim)));
    }
    return kv;
}

// Attention with its inputs as given and, when `p_format` is set, the probabilities P
// (exp(s - row max), in [0, 1]) stored in it with the scale max / 1 before the second
// matmul, their row sum kept in float: softmax(q k^T / sqrt(d)) v per head, in double.
std::vector<double> attention_with(const std::vector<float>& queries, const std::vector<float>& keys,
                                   const std::vector<float>& values, const emu::Format* p_format) {
    const int T = KvCache::kTokens, D = KvCache::kHeadDim, C = KvCache::kDim;
    std::vector<double> out(std::size_t(KvCache::kQueries) * C, 0.0);
    std::vector<double> p(static_cast<std::size_t>(T));
    const double p_scale = p_format ? p_format->max_finite : 1.0;
    for (int i = 0; i < KvCache::kQueries; ++i)
        for (int h = 0; h < KvCache::kHeads; ++h) {
            double mx = -1e300;
            for (int t = 0; t < T; ++t) {
                double sc = 0;
                for (int c = h * D; c < (h + 1) * D; ++c)
                    sc += double(queries[std::size_t(i) * C + c]) * keys[std::size_t(t) * C + c];
                p[std::size_t(t)] = sc / std::sqrt(double(D));
                mx = std::max(mx, p[std::size_t(t)]);
            }
            double sum = 0;
            for (double& x : p) sum += x = std::exp(x - mx);
            if (p_format)
                for (double& x : p) x = emu::round_to_format(*p_format, float(x * p_scale)) / p_scale;
            for (int t = 0; t < T; ++t)
                for (int c = h * D; c < (h + 1) * D; ++c)
                    out[std::size_t(i) * C + c] += p[std::size_t(t)] / sum * values[std::size_t(t) * C + c];
        }
    return out;
}

// x stored in `f` with one scale per group of columns (`group` wide; kDim for one per
// tensor), each the calibrated amax's (or 1.0 when `unit`); counts the elements clipped.
std::vector<float> store_with_scales(std::vector<float> x, const emu::Format& f, int group, bool unit,
                                     std::size_t& clipped) {
    const int C = KvCache::kDim;
    for (int g0 = 0; g0 < C; g0 += group) {
        float a = 0;
        for (std::size_t r = 0; r < x.size() / C; ++r)
            for (int c = g0; c < g0 + group; ++c) a = std::max(a, std::fabs(x[r * C + std::size_t(c)]));
        const float scale = unit ? 1.0f : emu::current_scale(a, f).scale;
        for (std::size_t r = 0; r < x.size() / C; ++r)
            for (int c = g0; c < g0 + group; ++c) {
                float& v = x[r * C + std::size_t(c)];
                // Clipped: past the rounding boundary above max (not only past max itself,
                // which rounding still absorbs).
                clipped += !std::isfinite(emu::round_to_format(
                    f, double(v * scale), {emu::RoundingMode::NearestEven, emu::Saturation::None}));
                v = float(emu::round_to_format(f, double(v * scale))) / scale;
            }
    }
    return x;
}

StepLogic kv_cache() {
    StepLogic s;
    s.id = "kv-cache";
    s.titles = {{"figure attention-error"}, {"table kv", {"tokens", "heads", "dimension", "queries"}}};
    s.no_training_reason =
        "This step quantises a cache of attention keys and values, which the lab's MLP does not "
        "have; it has no setting a training run could take.";
    s.run = [](const Parameters&, RunContext& ctx) {
        const KvCache kv = make_kv_cache(ctx.seed());
        const std::vector<double> ref = attention_with(kv.queries, kv.keys, kv.values, nullptr);
        double ref_norm = 0;
        for (double v : ref) ref_norm += v * v;
        struct Variant {
            std::string name, short_name;
            double bits;
            std::vector<float> keys, values;
            std::size_t clipped = 0;
        };
        const int C = KvCache::kDim, D = KvCache::kHeadDim;
        const auto scaled = [&](std::string name, std::string short_name, const emu::Format& f, int group, bool unit) {
            Variant v{std::move(name), std::move(short_name), double(f.total_bits), {}, {}};
            v.keys = store_with_scales(kv.keys, f, group, unit, v.clipped);
            v.values = store_with_scales(kv.values, f, group, unit, v.clipped);
            return v;
        };
        std::vector<Variant> variants;
        variants.push_back(scaled("E4M3, scale 1.0 (not calibrated)", "E4M3 1.0", emu::e4m3(), C, true));
        variants.push_back(scaled("E4M3, one calibrated scale per tensor", "E4M3 tensor", emu::e4m3(), C, false));
        variants.push_back(scaled("E4M3, one calibrated scale per head", "E4M3 head", emu::e4m3(), D, false));
        variants.push_back(scaled("E2M1, one calibrated scale per head", "E2M1 head", emu::e2m1(), D, false));
        const auto tokens = std::size_t(KvCache::kTokens), dim = std::size_t(C);
        variants.push_back({"NVFP4 (1x16 blocks: one per token and head)", "NVFP4", 4.5,
                            emu::quantize_nvfp4(kv.keys, tokens, dim).dequantize(),
                            emu::quantize_nvfp4(kv.values, tokens, dim).dequantize()});

        StepOutput out;
        Figure fig = category_bar_figure("attention-error", "relative output error");
        CategoryBars bars{fig, {SeriesKind::Bars, "", 3}};
        Table t{"kv", {}, {}, {}};
        t.title_values = {{"tokens", std::to_string(KvCache::kTokens)},
                          {"heads", std::to_string(KvCache::kHeads)},
                          {"dimension", std::to_string(D)},
                          {"queries", std::to_string(KvCache::kQueries)}};
        t.columns = {{"keys and values stored as"},
                     {"bits per element", ColumnType::Number},
                     {"output error", ColumnType::Number},
                     {"worst head's output error", ColumnType::Number},
                     {"elements clipped", ColumnType::Integer}};
        for (const Variant& v : variants) {
            const std::vector<double> o = attention_with(kv.queries, v.keys, v.values, nullptr);
            double err = 0, worst = 0;
            for (int h = 0; h < KvCache::kHeads; ++h) {
                double e = 0, n = 0;
                for (int i = 0; i < KvCache::kQueries; ++i)
                    for (int c = h * D; c < (h + 1) * D; ++c) {
                        const std::size_t k = std::size_t(i) * C + std::size_t(c);
                        e += (o[k] - ref[k]) * (o[k] - ref[k]);
                        n += ref[k] * ref[k];
                    }
                err += e;
                worst = std::max(worst, std::sqrt(e / n));
            }
            const double relative = std::sqrt(err / ref_norm);
            bars.add(v.short_name, relative);
            t.rows.push_back({v.name, v.bits, relative, worst, std::int64_t(v.clipped)});
        }
        bars.finish();
        out.figures.push_back(std::move(fig));
        out.tables.push_back(std::move(t));
        out.metrics.push_back({"largest key", emu::amax(kv.keys), ""});
        for (int h : {0, KvCache::kHeads - 1}) {
            float a = 0;
            for (int r = 0; r < KvCache::kTokens; ++r)
                for (int c = h * D; c < (h + 1) * D; ++c) a = std::max(a, std::fabs(kv.values[std::size_t(r) * C + c]));
            out.metrics.push_back({"largest value in head " + std::to_string(h + 1), a, ""});
        }
        return out;
    };
    const double key = 600, stored = emu::round_to_format(emu::e4m3(), key);  // nearest, saturating: the defaults
    s.exercise = numeric_exercise(stored, {{"unrounded", key}, {"zero", 0}});
    s.exercise->values = {{"key", number_text(key)}};
    return s;
}

constexpr const char* kInferenceAsset = "h100-inference.csv";

InferenceSweep recorded_inference() {
    const std::string path = asset_path(kInferenceAsset);
    std::ifstream in(path);
    if (!in) throw std::runtime_error("cannot read " + path);
    return read_inference_csv(in, path);
}

// BF16 against the FP8 variants by batch size: measured now on the GPU, or recorded.
StepLogic four_bit_weights() {
    StepLogic s;
    s.id = "four-bit-weights";
    s.titles = {{"figure four-bit-error"}, {"table four-bit", {"samples"}}};
    s.no_training_reason =
        "This step compares fixed quantisations of the classifier the first step trains; an experiment takes any "
        "of them as its inference setting (train --inference-format e4m3 --inference-weights nvfp4|mxfp4 "
        "--inference-activations nvfp4|mxfp4).";
    s.run = [](const Parameters&, RunContext&) {
        const emu::Format& e4m3 = emu::e4m3();
        const EvaluationSet set = evaluation_set(0);
        std::size_t weights = 0, rows = 0;
        for (const emu::LayerWeights& l : trained_model()) {
            weights += l.weight.size();
            rows += std::size_t(l.outputs);
        }
        using W = emu::WeightQuantization;
        using A = emu::ActivationQuantization;
        struct Variant {
            std::string name, short_name;
            W w;
            A a;
            double bits;  // per weight, with its scales (the per-tensor float32s left out)
        };
        const double per_channel = 8 + 32.0 * double(rows) / double(weights);  // a float32 scale per row
        const std::vector<Variant> variants = {
            {"FP8 (E4M3) weights per channel", "W8", W::PerChannel, A::None, per_channel},
            {"NVFP4 weights", "W NVFP4", W::Nvfp4, A::None, emu::block_scaled_bits(emu::e2m1(), e4m3, 16)},
            {"MXFP4 weights", "W MXFP4", W::Mxfp4, A::None, emu::block_scaled_bits(emu::e2m1(), emu::e8m0(), 32)},
            {"FP8 weights per channel + activations per token (W8A8)", "W8A8", W::PerChannel, A::PerToken, per_channel},
            {"NVFP4 weights + activations (W4A4)", "W4A4 NVFP4", W::Nvfp4, A::Nvfp4,
             emu::block_scaled_bits(emu::e2m1(), e4m3, 16)},
            {"MXFP4 weights + activations (W4A4)", "W4A4 MXFP4", W::Mxfp4, A::Mxfp4,
             emu::block_scaled_bits(emu::e2m1(), emu::e8m0(), 32)}};
        StepOutput out;
        Figure fig = category_bar_figure("four-bit-error", "relative output error vs float32");
        CategoryBars bars{fig, {SeriesKind::Bars, "", 4}};
        Table t{"four-bit", {}, {}, {}};
        t.title_values = {{"samples", std::to_string(kEvalBatches * kBatchRows)}};
        t.columns = {{"model"},
                     {"bits per weight", ColumnType::Number},
                     {"weights", ColumnType::Number, "KiB"},
                     {"output error vs float32", ColumnType::Number},
                     {"accuracy", ColumnType::Number, "%"},
                     {"same prediction as float32", ColumnType::Number, "%"}};
        for (const Variant& v : variants) {
            const Evaluation e = evaluate(emu::quantize_weights(trained_model(), e4m3, v.w), e4m3, v.a, {}, set);
            t.rows.push_back(
                {v.name, v.bits, double(weights) * v.bits / 8 / 1024, e.output_error, e.accuracy, e.agreement});
            bars.add(v.short_name, e.output_error);
        }
        bars.finish();
        out.figures.push_back(std::move(fig));
        out.tables.push_back(std::move(t));
        return out;
    };
    // A 7-billion-parameter model's weights in NVFP4, in GB (10^9 bytes).
    const double params = 7e9;
    const auto gb = [&](double bits) { return params * bits / 8 / 1e9; };
    s.exercise = numeric_exercise(
        gb(emu::block_scaled_bits(emu::e2m1(), emu::e4m3(), 16)),
        {{"fp8", gb(8)}, {"elements-only", gb(4)}, {"mxfp4", gb(emu::block_scaled_bits(emu::e2m1(), emu::e8m0(), 32))}},
        1e-3);
    return s;
}

// Every element of x rounded to f, no scale (BF16's range needs none).
std::vector<float> rounded_to(std::vector<float> x, const emu::Format& f) {
    for (float& v : x) v = float(emu::round_to_format(f, double(v)));
    return x;
}

StepLogic fp8_attention() {
    StepLogic s;
    s.id = "fp8-attention";
    s.titles = {{"figure fp8-attention-error"}, {"table fp8-attention"}};
    s.no_training_reason =
        "The lab's MLP has no attention, and the transformer of lab 11 keeps attention's matmuls in BF16, as "
        "Transformer Engine does by default; this step measures what FP8 attention would change.";
    s.run = [](const Parameters&, RunContext& ctx) {
        const KvCache kv = make_kv_cache(ctx.seed());
        const std::vector<double> ref = attention_with(kv.queries, kv.keys, kv.values, nullptr);
        const int C = KvCache::kDim, D = KvCache::kHeadDim;
        std::size_t clipped = 0;
        const auto fp8 = [&](const std::vector<float>& x, int group) {
            return store_with_scales(x, emu::e4m3(), group, false, clipped);
        };
        const emu::Format& bf16 = emu::bf16();
        struct Variant {
            std::string name, short_name, matmuls;
            std::vector<double> out;
        };
        const std::vector<Variant> variants = {
            {"BF16 Q, K, V", "BF16", "none",
             attention_with(rounded_to(kv.queries, bf16), rounded_to(kv.keys, bf16), rounded_to(kv.values, bf16),
                            nullptr)},
            {"FP8 K and V per head (the cache); BF16 Q", "K, V", "none: K and V read back to BF16",
             attention_with(rounded_to(kv.queries, bf16), fp8(kv.keys, D), fp8(kv.values, D), nullptr)},
            {"FP8 Q, K, V per tensor; P in float", "QKV tensor", "q k^T only",
             attention_with(fp8(kv.queries, C), fp8(kv.keys, C), fp8(kv.values, C), nullptr)},
            {"FP8 Q, K, V per head; P in float", "QKV head", "q k^T only",
             attention_with(fp8(kv.queries, D), fp8(kv.keys, D), fp8(kv.values, D), nullptr)},
            {"FP8 Q, K, V per head; P in E4M3 (scale 448)", "QKV+P head", "both: q k^T and P v",
             attention_with(fp8(kv.queries, D), fp8(kv.keys, D), fp8(kv.values, D), &emu::e4m3())}};
        double ref_norm = 0;
        for (double v : ref) ref_norm += v * v;
        StepOutput out;
        Figure fig = category_bar_figure("fp8-attention-error", "relative output error");
        CategoryBars bars{fig, {SeriesKind::Bars, "", 2}};
        Table t{"fp8-attention", {}, {}, {}};
        t.columns = {{"inputs"}, {"matmuls in FP8"}, {"output error", ColumnType::Number}};
        for (const Variant& v : variants) {
            double err = 0;
            for (std::size_t k = 0; k < ref.size(); ++k) err += (v.out[k] - ref[k]) * (v.out[k] - ref[k]);
            const double relative = std::sqrt(err / ref_norm);
            bars.add(v.short_name, relative);
            t.rows.push_back({v.name, v.matmuls, relative});
        }
        bars.finish();
        out.figures.push_back(std::move(fig));
        out.tables.push_back(std::move(t));
        return out;
    };
    // The exercise: P's smallest non-zero value once stored in E4M3 with the scale 448.
    const emu::Format& e4m3 = emu::e4m3();
    s.exercise =
        numeric_exercise(e4m3.min_subnormal / e4m3.max_finite,
                         {{"unscaled", e4m3.min_subnormal}, {"normal", e4m3.min_normal / e4m3.max_finite}}, 1e-3);
    return s;
}

StepLogic serving_speed() {
    StepLogic s;
    s.id = "serving-speed";
    s.titles = {{"figure speedup", {"model"}}, {"table latency", {"model"}}};
    s.exercise_from_recording = true;
    s.backends = {Backend::Cpu, Backend::Gpu};
    std::vector<std::string> models;
    for (const InferenceShape& shape : inference_shapes()) models.push_back(shape.name);
    s.parameters = {choice("model", models, models.back())};
    s.no_training_reason =
        "Inference timing: this step times forward passes of fixed models; none of its settings "
        "changes how a model trains.";
    s.run = [](const Parameters& p, RunContext& ctx) {
        const bool live = ctx.backend() == Backend::Gpu;
        const InferenceSweep sweep = live ? measure_inference([&](int done, int total) {
            ctx.report_progress(double(done) / total, "batch " + std::to_string(done) + " of " + std::to_string(total));
            return !ctx.cancel_requested();
        })
                                          : recorded_inference();
        const std::string model = p.choice("model");
        StepOutput out;
        Figure speed;
        speed.id = "speedup";
        speed.title_values = {{"model", model}};
        speed.x_axis = {"tokens per forward pass", AxisScale::Linear};
        speed.y_axis = {"BF16 time / FP8 time", AxisScale::Linear};
        Table t{"latency", {}, {}, {}};
        t.title_values = {{"model", model}};
        t.columns = {{"variant"},
                     {"tokens", ColumnType::Integer},
                     {"latency", ColumnType::Number, "us"},
                     {"speedup over BF16", ColumnType::Number, "x"},
                     {"weights", ColumnType::Number, "MiB"},
                     {"device memory", ColumnType::Number, "MiB"},
                     {"output error vs BF16", ColumnType::Number},
                     {"kernels"}};
        // Bars grouped by batch size, one per FP8 variant: three batch sizes far apart are
        // categories, not points on a curve.
        const std::vector<int>& batches = inference_batches();
        for (int tokens : batches) speed.x_axis.categories.push_back(std::to_string(tokens));
        const double fp8_variants = double(gpu::kInferenceVariants.size() - 1), width = 0.8 / fp8_variants;
        int colour = 0;
        for (const gpu::InferenceVariantName& v : gpu::kInferenceVariants) {
            Series bars{SeriesKind::Bars, v.label, colour};
            bars.bar_width = width;
            const double offset = (colour - 1 - (fp8_variants - 1) / 2) * width;
            ++colour;
            for (std::size_t b = 0; b < batches.size(); ++b) {
                const gpu::InferenceTiming& bf16 = sweep.at(model, gpu::InferenceVariant::Bf16, batches[b]).timing;
                const gpu::InferenceTiming& m = sweep.at(model, v.variant, batches[b]).timing;
                const double speedup = bf16.median_us / m.median_us;
                t.rows.push_back({std::string(v.label), std::int64_t(batches[b]), m.median_us, speedup, m.weight_mib,
                                  m.device_mib, m.output_error, m.kernels});
                bars.x.push_back(double(b) + offset);
                bars.y.push_back(speedup);
            }
            if (v.variant != gpu::InferenceVariant::Bf16) speed.series.push_back(std::move(bars));
        }
        speed.x_axis.min = -0.6;
        speed.x_axis.max = double(batches.size()) - 0.4;
        speed.series.push_back(line("break-even (BF16)", {-0.6, double(batches.size()) - 0.4}, {1, 1}, 7));
        speed.series.back().dashed = true;
        out.figures.push_back(std::move(speed));
        out.tables.push_back(std::move(t));
        out.notes.push_back(measurement_note(live, sweep.header, kInferenceAsset));
        return out;
    };
    // The exercise reads the recording: without it the step's run says why.
    try {
        const InferenceSweep sweep = recorded_inference();
        const std::string model = models.back();
        const int tokens = inference_batches().front();
        // At one token the pass reads every weight once: FP8 halves the bytes, the ideal is half
        // BF16's time. The exercise asks for the measured fraction, which no cell states; it
        // separates the ideal (0.5), the speedup read the wrong way up, and the weight-only variant.
        const auto latency = [&](gpu::InferenceVariant v) { return sweep.at(model, v, tokens).timing.median_us; };
        const double bf16 = latency(gpu::InferenceVariant::Bf16);
        const double fp8 = latency(gpu::InferenceVariant::StaticPerTensor);
        s.exercise = numeric_exercise(fp8 / bf16,
                                      {{"ideal", 0.5},
                                       {"inverted", bf16 / fp8},
                                       {"weights-only", latency(gpu::InferenceVariant::WeightOnly) / bf16}},
                                      0.01);
        s.exercise->values = {{"model", model}};
    } catch (const std::exception&) {
    }
    return s;
}

}  // namespace

LabLogic inference_lab() {
    return {
        "inference",
        {weights_and_activations(), calibration(), kv_cache(), fp8_attention(), four_bit_weights(), serving_speed()}};
}

}  // namespace fp8lab::labs
