// SPDX-License-Identifier: Apache-2.0
// `fp8lab bench gemm`: the forward GEMM of each preset's linear layer, BF16 against FP8 on
// cuBLASLt, timed side by side. GEMMs only: the whole training step is `bench gpu`.
#include <CLI/CLI.hpp>

#include <cstdio>
#include <memory>

#include "app/options/command_options.hpp"
#include "app/cli/commands.hpp"
#include "emulator/io/json_writer.hpp"
#include "app/options/usage_error.hpp"
#include "gpu/probe.hpp"
#include "gpu/tensor_ops.hpp"
#include "gpu/trainer.hpp"

namespace fp8lab::cli {
using options::integer_in;
using options::UsageError;
namespace {

void bench_gemm(int repetitions, bool as_json) {
    const gpu::ProbeResult probe = gpu::probe();
    if (!probe.ready) throw UsageError("bench gemm needs an FP8-capable GPU: " + probe.reason);
    std::vector<std::pair<const gpu::GpuPreset*, gpu::GemmTiming>> rows;
    for (const gpu::GpuPreset& p : gpu::gpu_presets()) {
        if (!as_json)
            std::fprintf(stderr, "timing %s (M=%d, N=%d, K=%d)...\n", p.name.c_str(), p.tokens, p.hidden_dim,
                         p.input_dim);
        rows.push_back({&p, gpu::time_forward_gemms(p.tokens, p.hidden_dim, p.input_dim, repetitions)});
    }
    if (as_json) {
        json::JsonWriter json;
        json.begin_object()
            .key("device")
            .value(gpu::describe(probe))
            .key("repetitions")
            .value(repetitions)
            .key("presets")
            .begin_array();
        for (const auto& [p, t] : rows)
            json.begin_object()
                .key("name")
                .value(p->name)
                .key("m")
                .value(t.m)
                .key("n")
                .value(t.n)
                .key("k")
                .value(t.k)
                .key("bf16_ms")
                .value(t.bf16_ms)
                .key("fp8_ms")
                .value(t.fp8_ms)
                .key("bf16_tflops")
                .value(t.bf16_tflops)
                .key("fp8_tflops")
                .value(t.fp8_tflops)
                .key("speedup")
                .value(t.bf16_ms / t.fp8_ms)
                .end_object();
        json.end_array().end_object();
        std::printf("%s\n", json.text().c_str());
        return;
    }
    std::printf("%s: forward GEMM Y[M,N] = X[M,K] W[N,K]^T, cuBLASLt, median of %d (CUDA events)\n",
                gpu::describe(probe).c_str(), repetitions);
    std::printf("%-7s %6s %6s %6s %10s %10s %11s %11s %8s\n", "preset", "M", "N", "K", "BF16 ms", "FP8 ms",
                "BF16 TFLOP/s", "FP8 TFLOP/s", "speedup");
    for (const auto& [p, t] : rows)
        std::printf("%-7s %6d %6d %6d %10.4f %10.4f %11.1f %11.1f %7.2fx\n", p->name.c_str(), t.m, t.n, t.k, t.bf16_ms,
                    t.fp8_ms, t.bf16_tflops, t.fp8_tflops, t.bf16_ms / t.fp8_ms);
}

}  // namespace

void add_bench_gemm_command(CLI::App& bench) {
    auto reps = std::make_shared<int>(50);
    auto json = std::make_shared<bool>(false);
    CLI::App* gemm = bench.add_subcommand("gemm", "GPU: BF16 vs FP8 forward GEMM per preset size (cuBLASLt)");
    gemm->add_option("--repeat", *reps, "Timed repetitions per precision (median)")
        ->capture_default_str()
        ->check(integer_in({1, 10000}));
    gemm->add_flag("--json", *json, "Print JSON");
    gemm->callback([reps, json] { bench_gemm(*reps, *json); });
}

}  // namespace fp8lab::cli
