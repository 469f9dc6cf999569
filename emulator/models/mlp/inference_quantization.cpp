// SPDX-License-Identifier: Apache-2.0
// Inference quantisation of a trained MLP: fake-quantised weights and layer inputs, a
// float32 forward pass, and the evaluation that an experiment's `inference` asks for.
#include "emulator/models/mlp/inference_quantization.hpp"

#include <algorithm>
#include <cmath>

#include "emulator/scaling/block_recipes.hpp"
#include "emulator/formats/bulk.hpp"
#include "emulator/scaling/current_scaling.hpp"
#include "emulator/training/experiment.hpp"
#include "emulator/models/mlp/mlp_trainer.hpp"
#include "emulator/training/training_task.hpp"

namespace fp8lab {
template <>
std::span<const EnumName<emu::WeightQuantization>> enum_names<emu::WeightQuantization>() {
    using emu::WeightQuantization;
    static constexpr EnumName<WeightQuantization> table[] = {{WeightQuantization::None, "none"},
                                                             {WeightQuantization::PerTensor, "per-tensor"},
                                                             {WeightQuantization::PerChannel, "per-channel"},
                                                             {WeightQuantization::Nvfp4, "nvfp4"},
                                                             {WeightQuantization::Mxfp4, "mxfp4"}};
    return table;
}
template <>
std::span<const EnumName<emu::ActivationQuantization>> enum_names<emu::ActivationQuantization>() {
    using emu::ActivationQuantization;
    static constexpr EnumName<ActivationQuantization> table[] = {
        {ActivationQuantization::None, "none"},       {ActivationQuantization::Static, "static"},
        {ActivationQuantization::Dynamic, "dynamic"}, {ActivationQuantization::PerToken, "per-token"},
        {ActivationQuantization::Nvfp4, "nvfp4"},     {ActivationQuantization::Mxfp4, "mxfp4"}};
    return table;
}
}  // namespace fp8lab

namespace fp8lab::emu {
namespace {

constexpr float kGeluC = 0.7978845608028654f;
// Held-out batch indices: far past any training batch (task.batches <= 4096).
constexpr std::uint64_t kCalibrationBatch = 1u << 20, kEvaluationBatch = 1u << 21;
constexpr int kEvaluationBatches = 8;

// The mean loss of outputs y (rows x classes) against a batch: MSE, or softmax
// cross-entropy with the labels; and how many rows' argmax is the label.
double batch_loss(const std::vector<float>& y, const Batch& b, TaskKind kind, int rows, int* correct) {
    const int outputs = int(y.size()) / rows;
    double loss = 0;
    int scored = 0;
    for (int r = 0; r < rows; ++r) {
        if (!b.scored.empty() && !b.scored[std::size_t(r)]) continue;  // the outlier task's massive rows
        ++scored;
        const float* p = &y[std::size_t(r) * outputs];
        if (is_regression(kind)) {
            for (int o = 0; o < outputs; ++o) {
                const double d = double(p[o]) - b.targets[std::size_t(r) * outputs + o];
                loss += d * d / outputs;
            }
            continue;
        }
        const double top = *std::max_element(p, p + outputs);
        double sum = 0;
        for (int o = 0; o < outputs; ++o) sum += std::exp(double(p[o]) - top);
        loss += std::log(sum) + top - p[b.labels[std::size_t(r)]];
        *correct += int(std::max_element(p, p + outputs) - p) == b.labels[std::size_t(r)];
    }
    return loss / scored;
}

}  // namespace

void fake_quantize(std::span<float> x, const Format& f, float scale) {
    std::vector<float> scaled(x.size());
    for (std::size_t i = 0; i < x.size(); ++i) scaled[i] = x[i] * scale;
    round_span(f, scaled, x);
    for (float& v : x) v /= scale;
}

std::vector<LayerWeights> quantize_weights(const std::vector<LayerWeights>& trained, const Format& f,
                                           WeightQuantization how) {
    std::vector<LayerWeights> layers = trained;
    for (LayerWeights& l : layers) {
        std::span<float> w(l.weight);
        if (how == WeightQuantization::PerTensor) fake_quantize(w, f, current_scale(amax(w), f).scale);
        if (how == WeightQuantization::PerChannel)
            for (int r = 0; r < l.outputs; ++r) {
                std::span<float> row = w.subspan(std::size_t(r) * l.inputs, std::size_t(l.inputs));
                fake_quantize(row, f, current_scale(amax(row), f).scale);
            }
        if (how == WeightQuantization::Nvfp4)
            l.weight = quantize_nvfp4(w, std::size_t(l.outputs), std::size_t(l.inputs)).dequantize();
        if (how == WeightQuantization::Mxfp4)
            l.weight =
                quantize_mx(w, std::size_t(l.outputs), std::size_t(l.inputs), e2m1(), MxScaleRule::Rceil).dequantize();
    }
    return layers;
}

std::vector<float> quantized_forward(const std::vector<LayerWeights>& layers, std::vector<float> x, int rows,
                                     const Format& f, ActivationQuantization how, std::span<const float> static_scales,
                                     std::vector<float>* observed_amax) {
    for (std::size_t l = 0; l < layers.size(); ++l) {
        const LayerWeights& L = layers[l];
        if (observed_amax) (*observed_amax)[l] = std::max((*observed_amax)[l], amax(x));
        if (how == ActivationQuantization::Static) fake_quantize(x, f, static_scales[l]);
        if (how == ActivationQuantization::Dynamic) fake_quantize(x, f, current_scale(amax(x), f).scale);
        if (how == ActivationQuantization::PerToken)
            for (int r = 0; r < rows; ++r) {
                std::span<float> row = std::span<float>(x).subspan(std::size_t(r) * L.inputs, std::size_t(L.inputs));
                fake_quantize(row, f, current_scale(amax(row), f).scale);
            }
        if (how == ActivationQuantization::Nvfp4)
            x = quantize_nvfp4(x, std::size_t(rows), std::size_t(L.inputs)).dequantize();
        if (how == ActivationQuantization::Mxfp4)
            x = quantize_mx(x, std::size_t(rows), std::size_t(L.inputs), e2m1(), MxScaleRule::Rceil).dequantize();
        // Each output sums bias + x_0 w_0 + x_1 w_1 + ... in that order, as one scalar loop
        // would; the loop runs over the outputs innermost (on the transposed weight), so the
        // compiler vectorises across outputs without reordering any sum.
        const std::size_t in = std::size_t(L.inputs), out = std::size_t(L.outputs);
        std::vector<float> wt(in * out);
        for (std::size_t o = 0; o < out; ++o)
            for (std::size_t i = 0; i < in; ++i) wt[i * out + o] = L.weight[o * in + i];
        std::vector<float> y(std::size_t(rows) * out);
        for (std::size_t r = 0; r < std::size_t(rows); ++r) {
            float* acc = &y[r * out];
            for (std::size_t o = 0; o < out; ++o) acc[o] = L.bias.empty() ? 0.0f : L.bias[o];
            for (std::size_t i = 0; i < in; ++i) {
                const float xi = x[r * in + i];
                const float* w = &wt[i * out];
                for (std::size_t o = 0; o < out; ++o) acc[o] += xi * w[o];
            }
            if (l + 1 < layers.size())
                for (std::size_t o = 0; o < out; ++o)
                    acc[o] =
                        0.5f * acc[o] * (1.0f + std::tanh(kGeluC * (acc[o] + 0.044715f * acc[o] * acc[o] * acc[o])));
        }
        x = std::move(y);
    }
    return x;
}

std::vector<float> static_activation_scales(std::span<const float> amax, const Format& f) {
    std::vector<float> scales;
    for (float a : amax) scales.push_back(current_scale(a, f).scale);
    return scales;
}

InferenceResult evaluate_inference(const Experiment& e, const std::vector<LayerWeights>& trained) {
    const InferenceSpec& spec = e.inference;
    const Format& f = *spec.format;
    const TrainingTask task(e);
    const int rows = e.tokens;
    std::vector<float> amax(trained.size(), 0.0f);
    if (spec.activations == ActivationQuantization::Static)
        for (int b = 0; b < spec.calibration_batches; ++b)
            quantized_forward(trained, task.batch(kCalibrationBatch + std::uint64_t(b), rows).inputs, rows, f,
                              ActivationQuantization::None, {}, &amax);
    const std::vector<float> scales = static_activation_scales(amax, f);
    const std::vector<LayerWeights> quantized = quantize_weights(trained, f, spec.weights);
    InferenceResult result;
    double diff = 0, norm = 0;
    int correct_reference = 0, correct_quantized = 0, agree = 0;
    for (int b = 0; b < kEvaluationBatches; ++b) {
        const Batch batch = task.batch(kEvaluationBatch + std::uint64_t(b), rows);
        const std::vector<float> ref =
            quantized_forward(trained, batch.inputs, rows, f, ActivationQuantization::None, {});
        const std::vector<float> y = quantized_forward(quantized, batch.inputs, rows, f, spec.activations, scales);
        for (std::size_t i = 0; i < y.size(); ++i) {
            diff += double(y[i] - ref[i]) * (y[i] - ref[i]);
            norm += double(ref[i]) * ref[i];
        }
        result.reference_loss += batch_loss(ref, batch, e.task.kind, rows, &correct_reference) / kEvaluationBatches;
        result.quantized_loss += batch_loss(y, batch, e.task.kind, rows, &correct_quantized) / kEvaluationBatches;
        if (e.task.kind == TaskKind::GaussianClusters) {
            const int classes = int(y.size()) / rows;
            for (int r = 0; r < rows; ++r) {
                const float* p = &y[std::size_t(r) * classes];
                const float* q = &ref[std::size_t(r) * classes];
                agree += std::max_element(p, p + classes) - p == std::max_element(q, q + classes) - q;
            }
        }
    }
    result.evaluated_rows = rows * kEvaluationBatches;
    result.output_error = norm > 0 ? std::sqrt(diff / norm) : 0.0;
    if (e.task.kind == TaskKind::GaussianClusters) {
        result.reference_accuracy = 100.0 * correct_reference / result.evaluated_rows;
        result.quantized_accuracy = 100.0 * correct_quantized / result.evaluated_rows;
        result.agreement = 100.0 * agree / result.evaluated_rows;
    }
    return result;
}

}  // namespace fp8lab::emu
