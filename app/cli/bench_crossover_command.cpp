// `fp8lab bench crossover`, `bench inference` and `bench accumulation`: the GPU
// measurements that labs 8, 9 and 10 draw, written as CSV with the device in the header
// (assets/ holds ones recorded on an H100 for machines without a GPU).
#include <CLI/CLI.hpp>

#include <cstdio>
#include <iostream>
#include <memory>
#include <sstream>

#include "app/cli/atomic_file.hpp"
#include "app/cli/commands.hpp"
#include "app/cli/usage_error.hpp"
#include "gpu/probe.hpp"
#include "labs/accumulation.hpp"
#include "labs/crossover.hpp"
#include "labs/inference_speed.hpp"

namespace fp8lab::cli {
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

}  // namespace

void add_bench_crossover_command(CLI::App& bench) {
    struct Args {
        std::string out;
        int steps = 60;
    };
    auto a = std::make_shared<Args>();
    CLI::App* cmd = bench.add_subcommand("crossover", "GPU: BF16 vs FP8 step time across model sizes (lab 8's sweep)");
    cmd->add_option("--out", a->out, "Write the CSV here (default: standard output)");
    cmd->add_option("--steps", a->steps, "Steps per run (a fifth of them warm up)")->capture_default_str()
        ->check(CLI::Range(10, 100000));
    cmd->callback([a] {
        require_gpu("bench crossover");
        const labs::CrossoverSweep sweep = labs::measure_crossover(a->steps, show_progress);
        std::ostringstream csv;
        labs::write_crossover_csv(csv, sweep);
        emit(a->out, csv.str(), sweep.points.size());
    });

    auto inference_out = std::make_shared<std::string>();
    CLI::App* inference = bench.add_subcommand("inference", "GPU: an MLP's forward pass in BF16 and FP8 (weights only, "
                                                            "weights and activations) at 1, 32 and 8192 tokens (lab 9)");
    inference->add_option("--out", *inference_out, "Write the CSV here (default: standard output)");
    inference->callback([inference_out] {
        require_gpu("bench inference");
        const labs::InferenceSweep sweep = labs::measure_inference(show_progress);
        std::ostringstream csv;
        labs::write_inference_csv(csv, sweep);
        emit(*inference_out, csv.str(), sweep.points.size());
    });

    auto acc_out = std::make_shared<std::string>();
    CLI::App* acc = bench.add_subcommand("accumulation", "GPU: FP8 GEMM accumulation error against K, fast "
                                                         "accumulation off and on (lab 10's measurement)");
    acc->add_option("--out", *acc_out, "Write the CSV here (default: standard output)");
    acc->callback([acc_out] {
        require_gpu("bench accumulation");
        const labs::AccumulationSweep sweep = labs::measure_tensor_core_accumulation(show_progress);
        std::ostringstream csv;
        labs::write_accumulation_csv(csv, sweep);
        emit(*acc_out, csv.str(), sweep.points.size());
    });
}

}  // namespace fp8lab::cli
