// SPDX-License-Identifier: Apache-2.0
// `fp8lab bench crossover`, `bench inference` and `bench accumulation`: the GPU
// measurements that labs 8, 9 and 10 draw, written as CSV with the device in the header
// (assets/ holds ones recorded on an H100 for machines without a GPU).
#include <CLI/CLI.hpp>

#include <cstdio>
#include <iostream>
#include <memory>
#include <sstream>
#include <utility>

#include "app/files/atomic_file.hpp"
#include "app/options/command_options.hpp"
#include "app/cli/commands.hpp"
#include "app/options/usage_error.hpp"
#include "gpu/probe.hpp"
#include "labs/experiments/accumulation.hpp"
#include "labs/experiments/crossover.hpp"
#include "labs/experiments/transformer_speed.hpp"
#include "labs/experiments/inference_speed.hpp"

namespace fp8lab::cli {
using files::write_file_atomically;
using options::check_output_option;
using options::integer_in;
using options::UsageError;
namespace {

void require_gpu(const char* command) {
    const gpu::ProbeResult probe = gpu::probe();
    if (!probe.ready) throw UsageError(std::string(command) + " needs an FP8-capable GPU: " + probe.reason);
}

bool show_progress(int done, int total) {
    std::fprintf(stderr, "\rrun %d/%d   ", done, total);
    return true;
}

void emit(const std::string& path, const std::string& csv, std::size_t rows) {
    std::fprintf(stderr, "\n");
    if (path.empty()) {
        std::cout << csv;
        return;
    }
    write_file_atomically(path, csv);
    std::fprintf(stderr, "wrote %s (%zu rows)\n", path.c_str(), rows);
}

// A GPU measurement written as CSV: `measure` runs it and returns the CSV and its rows.
template <class Measure>
void add_recording_command(CLI::App& bench, const std::string& name, const std::string& description, Measure measure) {
    auto out = std::make_shared<std::string>();
    CLI::App* cmd = bench.add_subcommand(name, description);
    cmd->add_option("--out", *out, "Write the CSV here (default: standard output)");
    cmd->callback([out, cmd, name, measure] {
        check_output_option(*cmd, "--out", *out);  // found before the measurement, not after it
        require_gpu(("bench " + name).c_str());
        const auto [csv, rows] = measure();
        emit(*out, csv, rows);
    });
}

template <class Sweep, class Writer>
std::pair<std::string, std::size_t> as_csv(const Sweep& sweep, Writer write) {
    std::ostringstream csv;
    write(csv, sweep);
    return {csv.str(), sweep.points.size()};
}

}  // namespace

void add_bench_crossover_command(CLI::App& bench) {
    auto steps = std::make_shared<int>(60);
    add_recording_command(bench, "crossover", "GPU: BF16 vs FP8 step time across model sizes (lab 8's sweep)", [steps] {
        return as_csv(labs::measure_crossover(*steps, show_progress), labs::write_crossover_csv);
    });
    bench.get_subcommand("crossover")
        ->add_option("--steps", *steps, "Steps per run (a fifth of them warm up)")
        ->capture_default_str()
        ->check(integer_in({10, 100000}));
    auto transformer_steps = std::make_shared<int>(30);
    add_recording_command(
        bench, "transformer",
        "GPU: the transformer's training step at its three sizes, BF16 against FP8 current and delayed scaling, "
        "blockwise and rowwise, fused and separate QKV (lab 11's speed table)",
        [transformer_steps] {
            std::ostringstream csv;
            const labs::TransformerSpeed s = labs::measure_transformer_speed(*transformer_steps, show_progress);
            labs::write_transformer_speed_csv(csv, s);
            return std::pair<std::string, std::size_t>{csv.str(), s.rows.size()};
        });
    bench.get_subcommand("transformer")
        ->add_option("--steps", *transformer_steps, "Steps per run (a fifth of them warm up)")
        ->capture_default_str()
        ->check(integer_in({10, 100000}));
    add_recording_command(bench, "inference",
                          "GPU: an MLP's forward pass in BF16 and FP8 (weights only, weights and activations) at 1, 32 "
                          "and 8192 tokens (lab 9)",
                          [] { return as_csv(labs::measure_inference(show_progress), labs::write_inference_csv); });
    add_recording_command(
        bench, "accumulation",
        "GPU: FP8 GEMM accumulation error against K, fast accumulation off and on (lab 10's "
        "measurement)",
        [] { return as_csv(labs::measure_tensor_core_accumulation(show_progress), labs::write_accumulation_csv); });
}

}  // namespace fp8lab::cli
