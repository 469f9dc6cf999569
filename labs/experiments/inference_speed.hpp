// SPDX-License-Identifier: Apache-2.0
// How fast FP8 serves: an MLP's forward pass on the GPU in BF16, FP8 weights only and FP8
// weights and activations, at a few batch sizes, written to and read from a CSV that
// records the device (assets/ holds one recorded on an H100 for machines without a GPU).
#pragma once

#include <functional>
#include <iosfwd>
#include <string>
#include <vector>

#include "gpu/inference_timing.hpp"
#include "labs/experiments/recorded_csv.hpp"

namespace fp8lab::labs {

// A model measured: its name in tables and its layer widths.
struct InferenceShape {
    std::string name;
    std::vector<int> widths;
};
// Lab 9's own classifier and one transformer MLP block (the crossover's large shape).
const std::vector<InferenceShape>& inference_shapes();
// Batch sizes in tokens: one token (generation), a small batch, a prefill-sized batch.
const std::vector<int>& inference_batches();

struct InferencePoint {
    std::string model;  // an InferenceShape's name
    gpu::InferenceTiming timing;
};

struct InferenceSweep {
    RecordedHeader header;  // device, date, configuration
    std::vector<InferencePoint> points;
    // The point of (model, variant, tokens); throws std::runtime_error when it is missing.
    const InferencePoint& at(const std::string& model, gpu::InferenceVariant v, int tokens) const;
};

// Every shape, batch and variant on the GPU. `progress(done, total)` returns false to
// cancel (then throws RunCancelled). Throws GpuUnavailable without a GPU.
InferenceSweep measure_inference(const std::function<bool(int, int)>& progress);

void write_inference_csv(std::ostream& out, const InferenceSweep& sweep);
// Throws std::runtime_error naming the line that is wrong.
InferenceSweep read_inference_csv(std::istream& in, const std::string& source_name);

}  // namespace fp8lab::labs
