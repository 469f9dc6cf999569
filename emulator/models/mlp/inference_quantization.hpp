// SPDX-License-Identifier: Apache-2.0
// A trained MLP quantised for inference: its weights (per tensor, per output channel, or
// 4-bit NVFP4 or MXFP4 blocks) and the inputs of its layers (static, dynamic or per-token
// scales, or 4-bit blocks), evaluated on held-out data against its own float32 forward pass.
#pragma once

#include <span>
#include <string_view>
#include <vector>

#include "emulator/base/enum_names.hpp"
#include "emulator/formats/format.hpp"

namespace fp8lab::emu {

struct Experiment;
struct LayerWeights;

// Nvfp4 and Mxfp4 are whole recipes (E2M1 elements in blocks of 16 with E4M3 scales and
// a tensor scale, or of 32 with E8M0 RCEIL scales, along the contraction dimension): they
// ignore the spec's format.
enum class WeightQuantization { None, PerTensor, PerChannel, Nvfp4, Mxfp4 };
enum class ActivationQuantization { None, Static, Dynamic, PerToken, Nvfp4, Mxfp4 };

// What an experiment does with its trained model: nothing (enabled false), or an
// evaluation of the model quantised this way on held-out batches of its task.
struct InferenceSpec {
    bool enabled = false;
    const Format* format = &e4m3();  // of the weights and of the activations
    WeightQuantization weights = WeightQuantization::PerChannel;
    ActivationQuantization activations = ActivationQuantization::Static;
    int calibration_batches = 8;  // held-out batches whose amax sets the static scales
    bool operator==(const InferenceSpec&) const = default;
};

struct InferenceResult {
    int evaluated_rows = 0;
    double output_error = 0;        // ||y - y_fp32|| / ||y_fp32|| over the evaluation rows
    double reference_loss = 0;      // the float32 model's loss on them
    double quantized_loss = 0;      // the quantised model's
    double reference_accuracy = 0;  // classification: % of rows whose argmax is the label
    double quantized_accuracy = 0;
    double agreement = 0;  // classification: % of rows with float32's argmax
};

// x -> value(cvt(x * scale)) / scale, in float32 as a cast kernel computes it.
void fake_quantize(std::span<float> x, const Format& format, float scale);

// The weights after quantisation and dequantisation (float32 values on the format's grid).
std::vector<LayerWeights> quantize_weights(const std::vector<LayerWeights>& layers, const Format& format,
                                           WeightQuantization how);

// The forward pass in float32 (GELU between layers), each layer's input first quantised
// to `format` as `how` says: with static_scales[layer], with the scale of its own amax,
// or with one scale per row (token). `observed_amax`, when given, receives the largest
// |input| each layer saw (calibration).
std::vector<float> quantized_forward(const std::vector<LayerWeights>& layers, std::vector<float> x, int rows,
                                     const Format& format, ActivationQuantization how,
                                     std::span<const float> static_scales, std::vector<float>* observed_amax = nullptr);

// Static scales per layer from the largest amax each layer's input reached.
std::vector<float> static_activation_scales(std::span<const float> amax, const Format& format);

// The whole evaluation of an experiment's trained model under experiment.inference:
// calibration on held-out batches after the training ones, evaluation on the next eight.
InferenceResult evaluate_inference(const Experiment& experiment, const std::vector<LayerWeights>& trained);

}  // namespace fp8lab::emu

namespace fp8lab {
template <>
std::span<const EnumName<emu::WeightQuantization>> enum_names<emu::WeightQuantization>();
template <>
std::span<const EnumName<emu::ActivationQuantization>> enum_names<emu::ActivationQuantization>();
}  // namespace fp8lab
