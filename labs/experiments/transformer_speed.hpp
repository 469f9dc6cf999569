// SPDX-License-Identifier: Apache-2.0
// The transformer's training step on the GPU at its three preset sizes, BF16 against the FP8
// recipes, fused and separate QKV, fused attention and attention through memory: measured, written to and read from a CSV that
// records the device (assets/ holds one recorded on an H100 for machines without a GPU).
#pragma once

#include <functional>
#include <iosfwd>
#include <string>
#include <vector>

#include "labs/experiments/recorded_csv.hpp"

namespace fp8lab::labs {

struct TransformerSpeedRow {
    std::string preset;     // gpu::transformer_presets()'s name
    std::string precision;  // "bf16", "fp8-current" or "fp8-delayed" (transformer_speed_variants())
    bool fused_qkv = true;
    bool fused_attention = true;  // false: cuBLASLt's GEMMs with S, P, dP and dS through memory
    double ms = 0;                // median per step
    double tokens_per_s = 0;      // tokens per step / ms
    double model_tflops = 0;
    double peak_mib = 0;
};

struct TransformerSpeed {
    RecordedHeader header;
    std::vector<TransformerSpeedRow> rows;
    // The row of a preset, precision, QKV layout and attention; throws std::runtime_error when absent.
    const TransformerSpeedRow& at(const std::string& preset, const std::string& precision, bool fused,
                                  bool fused_attention = true) const;
};

// The variants measured, in the recording's order: BF16, FP8 current scaling (today's
// per-tensor default) and FP8 delayed scaling (the seed's recipe), both HYBRID.
const std::vector<std::string>& transformer_speed_variants();

// Trains every preset in each variant, fused and separate QKV, with fused attention, and BF16
// and FP8 delayed with fused QKV and attention through memory, `steps` steps each on the GPU. `progress(done, total)` returns false to cancel (then throws
// RunCancelled). Throws GpuUnavailable without a GPU.
TransformerSpeed measure_transformer_speed(int steps, const std::function<bool(int, int)>& progress);

void write_transformer_speed_csv(std::ostream& out, const TransformerSpeed& speed);
// Throws std::runtime_error naming the line that is wrong.
TransformerSpeed read_transformer_speed_csv(std::istream& in, const std::string& source_name);

}  // namespace fp8lab::labs
