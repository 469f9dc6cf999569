// SPDX-License-Identifier: Apache-2.0
// Where FP8 training starts to pay off: BF16 and FP8 step times across model sizes,
// measured on the GPU, written to and read from a CSV that records the device.
#pragma once

#include <functional>
#include <iosfwd>
#include <string>
#include <utility>
#include <vector>

#include "labs/experiments/recorded_csv.hpp"

namespace fp8lab::labs {

struct CrossoverPoint {
    int d = 0, h = 0, tokens = 0;
    double model_gflops = 0;           // per step
    double bf16_ms = 0, fp8_ms = 0;    // median per step
    double bf16_mib = 0, fp8_mib = 0;  // device memory the run took
    double bf16_loss = 0, fp8_loss = 0;
};

struct CrossoverSweep {
    RecordedHeader header;  // device, date, configuration  // device, date, configuration
    std::vector<CrossoverPoint> points;
};

// The shapes measured: d=1024/h=4096 and d=4096/h=16384 over a range of tokens per step.
std::vector<CrossoverPoint> crossover_shapes();

// Trains BF16 and FP8 at every shape on the GPU (delayed scaling, `steps` steps each,
// CUDA graphs). `progress(done, total)` returns false to cancel (then throws
// RunCancelled). Throws GpuUnavailable without a GPU.
CrossoverSweep measure_crossover(int steps, const std::function<bool(int, int)>& progress);

void write_crossover_csv(std::ostream& out, const CrossoverSweep& sweep);
// Throws std::runtime_error naming the line that is wrong.
CrossoverSweep read_crossover_csv(std::istream& in, const std::string& source_name);

}  // namespace fp8lab::labs
