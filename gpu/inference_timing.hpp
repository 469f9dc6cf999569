// SPDX-License-Identifier: Apache-2.0
// Timing an MLP's forward pass for inference on the GPU: BF16 against FP8 weights only and
// FP8 weights and activations (per-tensor static or dynamic scales, or per-token
// activation scales with per-channel weight scales), each captured in a CUDA graph and
// timed with CUDA events, with the memory it holds and its output error against BF16.
#pragma once

#include <array>
#include <string>
#include <string_view>
#include <vector>

namespace fp8lab::gpu {

enum class InferenceVariant { Bf16, WeightOnly, StaticPerTensor, DynamicPerTensor, PerTokenPerChannel };

struct InferenceVariantName {
    InferenceVariant variant;
    const char* id;     // in CSV files
    const char* label;  // in tables and legends
};
inline constexpr std::array<InferenceVariantName, 5> kInferenceVariants{{
    {InferenceVariant::Bf16, "bf16", "BF16"},
    {InferenceVariant::WeightOnly, "w8", "FP8 weights only (per channel)"},
    {InferenceVariant::StaticPerTensor, "w8a8-static", "FP8 W+A, static per-tensor scales"},
    {InferenceVariant::DynamicPerTensor, "w8a8-dynamic", "FP8 W+A, dynamic per-tensor scales"},
    {InferenceVariant::PerTokenPerChannel, "w8a8-per-token", "FP8 W+A, per-token x per-channel scales"},
}};
const InferenceVariantName& inference_variant_name(InferenceVariant v);
// Throws std::invalid_argument listing the ids when `id` is none of them.
InferenceVariant inference_variant_from_id(std::string_view id);

// Layer widths: input, hidden..., output (every one a multiple of 16, cuBLASLt's FP8
// rule); every layer has a bias, every hidden layer GELU (tanh form).
struct InferenceModel {
    std::vector<int> widths;
};

struct InferenceTiming {
    InferenceVariant variant = InferenceVariant::Bf16;
    int tokens = 0;
    double median_us = 0;     // one forward pass: the median over timed batches of graph replays
    double weight_mib = 0;    // bytes of the stored weights, their scales and biases
    double device_mib = 0;    // device memory the variant held while it ran (cudaMemGetInfo)
    double output_error = 0;  // ||y - y_BF16|| / ||y_BF16|| on the same input
    std::string kernels;      // how it ran, in words
};

// Every variant of `model` at `tokens` rows (weights drawn deterministically, the same
// for every variant; static scales calibrated on the timed input). Throws GpuUnavailable
// without a GPU, std::invalid_argument for widths that are not multiples of 16.
std::vector<InferenceTiming> time_inference(const InferenceModel& model, int tokens);

}  // namespace fp8lab::gpu
