// `fp8lab bench crossover`: BF16 against FP8 training steps across model sizes on the GPU,
// written as the CSV that lab 8 draws (assets/ holds one recorded on an H100).
#include <CLI/CLI.hpp>

#include <cstdio>
#include <fstream>
#include <iostream>
#include <memory>

#include "app/cli/commands.hpp"
#include "app/cli/usage_error.hpp"
#include "gpu/probe.hpp"
#include "labs/crossover.hpp"

namespace fp8lab::cli {

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
        const gpu::ProbeResult probe = gpu::probe();
        if (!probe.ready) throw UsageError("bench crossover needs an FP8-capable GPU: " + probe.reason);
        const labs::CrossoverSweep sweep = labs::measure_crossover(a->steps, [](int done, int total) {
            std::fprintf(stderr, "\rcrossover: run %d/%d   ", done, total);
            return true;
        });
        std::fprintf(stderr, "\n");
        if (a->out.empty()) {
            labs::write_crossover_csv(std::cout, sweep);
            return;
        }
        {
            std::ofstream out(a->out + ".tmp");
            labs::write_crossover_csv(out, sweep);
            if (!out.flush()) throw std::runtime_error("cannot write " + a->out + ".tmp");
        }
        if (std::rename((a->out + ".tmp").c_str(), a->out.c_str()) != 0) throw std::runtime_error("cannot write " + a->out);
        std::fprintf(stderr, "wrote %s (%zu sizes)\n", a->out.c_str(), sweep.points.size());
    });
}

}  // namespace fp8lab::cli
