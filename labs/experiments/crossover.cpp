// SPDX-License-Identifier: Apache-2.0
// The crossover sweep: measured on the GPU through the training step, kept as CSV.
#include "labs/experiments/crossover.hpp"

#include <istream>
#include <ostream>
#include <sstream>
#include <stdexcept>

#include "gpu/probe.hpp"
#include "gpu/tensor_ops.hpp"
#include "gpu/trainer.hpp"
#include "labs/framework/run_context.hpp"
#include "labs/experiments/recorded_csv.hpp"
#include "labs/framework/table.hpp"

namespace fp8lab::labs {

std::vector<CrossoverPoint> crossover_shapes() {
    std::vector<CrossoverPoint> shapes;
    for (int tokens : {32, 128, 512, 2048, 8192, 16384, 32768}) shapes.push_back({1024, 4096, tokens});
    for (int tokens : {128, 512, 2048, 8192, 16384}) shapes.push_back({4096, 16384, tokens});
    for (CrossoverPoint& p : shapes) {
        p.model_gflops = gpu::model_flops_per_step(gpu::gpu_bench_experiment(p.d, p.h, p.tokens)) / 1e9;
    }
    return shapes;
}

CrossoverSweep measure_crossover(int steps, const std::function<bool(int, int)>& progress) {
    const gpu::ProbeResult probe = gpu::probe();
    if (!probe.ready) throw gpu::GpuUnavailable(probe.reason);
    CrossoverSweep sweep;
    sweep.header = {{"source", "fp8lab crossover sweep (labs/crossover.cpp)"},
                    {"device", gpu::describe(probe)},
                    {"date", utc_now_text()},
                    {"configuration", "delayed scaling, hybrid formats, history 16, CUDA graphs, " +
                                          std::to_string(steps) + " steps per run, median of the timed steps"}};
    sweep.points = crossover_shapes();
    const int total = int(sweep.points.size()) * 2;
    int done = 0;
    for (CrossoverPoint& p : sweep.points) {
        for (emu::Precision precision : {emu::Precision::Bf16, emu::Precision::Fp8}) {
            gpu::GpuRun c{gpu::gpu_bench_experiment(p.d, p.h, p.tokens)};
            c.experiment.numerics.precision = precision;
            c.experiment.steps = steps;
            c.warmup_steps = std::max(1, steps / 5);
            c.record_trace = false;
            const gpu::GpuTrainResult r = gpu::train_mlp_on_gpu(c);
            const double mib = double(r.peak_memory_bytes) / (1024.0 * 1024.0);
            if (precision == emu::Precision::Bf16) {
                p.bf16_ms = r.median_step_ms;
                p.bf16_mib = mib;
                p.bf16_loss = r.final_loss();
            } else {
                p.fp8_ms = r.median_step_ms;
                p.fp8_mib = mib;
                p.fp8_loss = r.final_loss();
            }
            if (progress && !progress(++done, total)) throw RunCancelled();
        }
    }
    return sweep;
}

namespace {
const char* kCrossoverMagic = "# fp8lab crossover v1";
const char* kCrossoverColumns = "d,h,tokens,model_gflops,bf16_ms,fp8_ms,bf16_mib,fp8_mib,bf16_loss,fp8_loss";
}  // namespace

void write_crossover_csv(std::ostream& out, const CrossoverSweep& s) {
    std::vector<RecordedRow> rows;
    for (const CrossoverPoint& p : s.points)
        rows.push_back({std::to_string(p.d), std::to_string(p.h), std::to_string(p.tokens),
                        shortest_text(p.model_gflops), shortest_text(p.bf16_ms), shortest_text(p.fp8_ms),
                        shortest_text(p.bf16_mib), shortest_text(p.fp8_mib), shortest_text(p.bf16_loss),
                        shortest_text(p.fp8_loss)});
    write_recorded_csv(out, kCrossoverMagic, s.header, kCrossoverColumns, rows);
}

CrossoverSweep read_crossover_csv(std::istream& in, const std::string& source) {
    CrossoverSweep s;
    s.header = read_recorded_csv(
        in, source, kCrossoverMagic, kCrossoverColumns, [&](const std::string& line, const auto& fail) {
            const std::vector<std::string> f = split_fields(line, 10, fail);
            // Bounds wide enough for any GPU run of the sweep, narrow enough to catch a corrupt field.
            constexpr emu::RealBounds kTimeMs{0, 1e7, true}, kMib{0, 1e8}, kLoss{0, 1e30}, kGflops{0, 1e12, true};
            CrossoverPoint p;
            p.d = int(integer_field(f[0], "d", emu::bounds::kWidth, fail));
            p.h = int(integer_field(f[1], "h", emu::bounds::kWidth, fail));
            p.tokens = int(integer_field(f[2], "tokens", emu::bounds::kTokens, fail));
            p.model_gflops = real_field(f[3], "model_gflops", kGflops, fail);
            p.bf16_ms = real_field(f[4], "bf16_ms", kTimeMs, fail);
            p.fp8_ms = real_field(f[5], "fp8_ms", kTimeMs, fail);
            p.bf16_mib = real_field(f[6], "bf16_mib", kMib, fail);
            p.fp8_mib = real_field(f[7], "fp8_mib", kMib, fail);
            p.bf16_loss = real_field(f[8], "bf16_loss", kLoss, fail);
            p.fp8_loss = real_field(f[9], "fp8_loss", kLoss, fail);
            s.points.push_back(p);
        });
    return s;
}

}  // namespace fp8lab::labs
