// SPDX-License-Identifier: Apache-2.0
// A trained MLP quantised for inference: its weights (per tensor, per output channel, or
// 4-bit NVFP4 or MXFP4 blocks) and the inputs of its layers (static, dynamic or per-token
// scales, or 4-bit blocks), evaluated on held-out data against its own float32 forward pass.
#pragma once

#include <span>
#include <string_view>
#include <vector>

#include "emulator/formats/format.hpp"
#include "emulator/training/inference_spec.hpp"

namespace fp8lab::emu {

struct Experiment;
struct LayerWeights;

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
