// SPDX-License-Identifier: Apache-2.0
// What an experiment asks of its trained model's quantisation for inference, and what the
// evaluation reports: settings and results only, read by the experiment; the MLP computes
// them (models/mlp/inference_quantization.hpp).
#pragma once

#include "emulator/base/enum_names.hpp"
#include "emulator/formats/format.hpp"

namespace fp8lab::emu {

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

}  // namespace fp8lab::emu

namespace fp8lab {
template <>
std::span<const EnumName<emu::WeightQuantization>> enum_names<emu::WeightQuantization>();
template <>
std::span<const EnumName<emu::ActivationQuantization>> enum_names<emu::ActivationQuantization>();
}  // namespace fp8lab
