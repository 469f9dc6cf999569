// SPDX-License-Identifier: Apache-2.0
// `fp8lab bench emulator`: bulk quantisation throughput against CUDA's host loop.
#include <CLI/CLI.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <map>
#include <memory>
#include <numeric>
#include <stdexcept>
#include <string>
#include <vector>

#include "app/bench/cuda_host_reference.hpp"
#include "app/options/command_options.hpp"
#include "app/cli/commands.hpp"
#include "emulator/base/available_memory.hpp"
#include "app/options/usage_error.hpp"
#include "emulator/formats/bulk.hpp"
#include "emulator/base/cpu_level.hpp"
#include "emulator/models/mlp/mlp_trainer.hpp"
#include "emulator/base/parallel.hpp"
#include "emulator/base/stochastic_bits.hpp"
#include "emulator/gemm/trainer_matrix.hpp"
#include "labs/framework/training_mapping.hpp"

namespace fp8lab::cli {
using options::integer_in;
using options::UsageError;
namespace {

using Clock = std::chrono::steady_clock;

// Normal(0, 1) data from the counter-based generator (Box-Muller), filled in parallel.
std::vector<float> normal_data(std::size_t n, std::uint64_t seed) {
    std::vector<float> x(n);
    emu::parallel_for_chunks(n, 1 << 16, [&](std::size_t, std::size_t b, std::size_t e) {
        for (std::size_t i = b; i < e; ++i) {
            const double u1 = (emu::stochastic_bits(seed, 2 * i, 32) + 1.0) * 0x1p-32;
            const double u2 = emu::stochastic_bits(seed, 2 * i + 1, 32) * 0x1p-32;
            x[i] = float(std::sqrt(-2.0 * std::log(u1)) * std::cos(6.283185307179586 * u2));
        }
    });
    return x;
}

// Median seconds of `reps` runs of f.
template <class F>
double median_seconds(int reps, F&& f) {
    std::vector<double> t;
    for (int r = 0; r < reps; ++r) {
        const auto start = Clock::now();
        f();
        t.push_back(std::chrono::duration<double>(Clock::now() - start).count());
    }
    std::sort(t.begin(), t.end());
    return t[t.size() / 2];
}

void bench_emulator(std::size_t elements, int reps) {
    const int all_threads = emu::max_threads();
    std::printf(
        "fp8lab bench emulator: %zu float32 values (N(0,1) times a per-tensor scale), "
        "E4M3, nearest-even, saturate finite; median of %d runs; %d hardware threads\n",
        elements, reps, all_threads);
    const std::vector<float> x = normal_data(elements, 2026);
    const float scale = float(emu::e4m3().max_finite) / emu::amax(x);
    std::vector<std::uint8_t> ours(elements), theirs(elements);

    struct Row {
        const char* what;
        int threads;
        double seconds;
    };
    std::vector<Row> rows;
    for (int threads : {1, all_threads}) {
        emu::set_max_threads(threads);
        rows.push_back({"fp8lab bulk quantize", threads,
                        median_seconds(reps, [&] { emu::quantize_span(emu::e4m3(), x, scale, ours); })});
        if (threads == all_threads && all_threads == 1) break;
    }
    emu::set_max_threads(all_threads);
    const bool have_cuda = bench::cuda_host_reference_available();
    if (have_cuda) {
        for (int threads : {1, all_threads}) {
            rows.push_back({"CUDA __nv_cvt_float_to_fp8 loop", threads,
                            median_seconds(reps, [&] { bench::cuda_host_quantize_e4m3(x, scale, theirs, threads); })});
            if (all_threads == 1) break;
        }
    }
    for (const Row& r : rows)
        std::printf("  %-34s %2d thread(s): %8.3f ms  %7.3f G elements/s\n", r.what, r.threads, r.seconds * 1e3,
                    double(elements) / r.seconds * 1e-9);

    // The exhaustive sweep of one format: every float32 bit pattern through the bulk path.
    std::vector<float> block(1 << 24);
    std::vector<std::uint8_t> codes(block.size());
    const auto sweep_start = Clock::now();
    for (std::uint64_t base = 0; base < (1ull << 32); base += block.size()) {
        for (std::size_t i = 0; i < block.size(); ++i)
            block[i] = std::bit_cast<float>(static_cast<std::uint32_t>(base + i));
        emu::quantize_span(emu::e4m3(), block, 1.0f, codes);
    }
    const double sweep = std::chrono::duration<double>(Clock::now() - sweep_start).count();
    std::printf(
        "  all 2^32 float32 inputs to E4M3 (bulk path, %d threads, incl. generating "
        "inputs): %.2f s\n",
        all_threads, sweep);

    if (have_cuda) {
        const bool same = ours == theirs;
        std::printf("  codes identical to CUDA's: %s\n", same ? "yes" : "NO");
        std::printf("ratio, fp8lab bulk / CUDA host loop: single thread %.1fx, %d threads %.1fx\n",
                    rows[2].seconds / rows[0].seconds, all_threads, rows.back().seconds / rows[1].seconds);
        if (!same) throw std::runtime_error("bulk codes differ from CUDA's host conversion");
    } else {
        std::printf("ratio: not measured, this build has no cuda_fp8.h to compare with\n");
    }
}

// The sizes bench trainer runs at: the labs' default experiment, or the course
// notebook's MLP (768 -> 3072 -> 768, 32 tokens).
enum class TrainerSize { Lab, Notebook };

// The step's GEMMs alone, as the trainer runs them (emu::product, the same threads): per
// layer the forward x W^T, the weight gradient g^T x and, past the first layer, the input
// gradient g W, on float32 operands of the step's shapes; ms per step, median of `reps`
// runs of `steps` steps. "vs GEMMs" in the table is a step's time over this.
double gemms_alone_ms(const emu::Experiment& e, int steps, int reps) {
    std::vector<int> widths{e.model.input};
    for (int l = 0; l < e.model.hidden_layers; ++l) widths.push_back(e.model.hidden);
    widths.push_back(e.model.output);
    const Eigen::Index rows = e.tokens;
    std::vector<emu::Matrix> x, w, g;
    for (std::size_t l = 0; l + 1 < widths.size(); ++l) {
        x.push_back(emu::Matrix::Random(rows, widths[l]));
        w.push_back(emu::Matrix::Random(widths[l + 1], widths[l]));
        g.push_back(emu::Matrix::Random(rows, widths[l + 1]));
    }
    emu::Matrix out;
    std::vector<double> ms;
    for (int r = 0; r < reps; ++r) {
        const Clock::time_point start = Clock::now();
        for (int s = 0; s < steps; ++s)
            for (std::size_t l = 0; l < x.size(); ++l) {
                emu::product(x[l], w[l].transpose(), out);
                emu::product(g[l].transpose(), x[l], out);
                if (l > 0) emu::product(g[l], w[l], out);
            }
        ms.push_back(std::chrono::duration<double, std::milli>(Clock::now() - start).count() / double(steps));
    }
    std::sort(ms.begin(), ms.end());
    return ms[ms.size() / 2];
}

void bench_trainer(int steps, TrainerSize size, int reps) {
    // The labs' experiment, with their warm-up and cosine decay: at a constant rate the
    // notebook's MLP spikes late in every precision and NVFP4 seems to "win" (issue 38).
    emu::Experiment base = labs::lab_experiment();
    base.seeds = 1;
    base.steps = steps;
    if (size == TrainerSize::Notebook) {
        base.model.input = base.model.output = 768;
        base.model.hidden = 3072;
        base.model.hidden_layers = 1;
        base.tokens = 32;
    }
    // Start-up (initial weights, the teacher, the first batches) is not a step: the clock
    // runs from the end of the warm-up steps to the last step.
    const int warmup = std::min(steps - 1, std::max(1, base.task.batches));
    std::printf(
        "fp8lab bench trainer: CPU emulator, %s (%s), %d steps each (ms/step over the last %d), "
        "%d rounds of every precision in turn (medians; ratios within a round, median and range), %d threads, "
        "GEMM path %s, element loops' code %s (this CPU's fastest: %s)\n",
        size == TrainerSize::Lab ? "the labs' default experiment" : "the notebook's MLP", emu::describe(base).c_str(),
        steps, steps - warmup, reps, emu::max_threads(), std::string(enum_name(emu::gemm_cpu_level())).c_str(),
        std::string(enum_name(emu::loop_cpu_level())).c_str(),
        std::string(enum_name(emu::detected_cpu_level())).c_str());
    // Every round runs each precision once and the GEMMs alone once, so a drift of the
    // machine's speed (this 2-core VM moves 5-12% between runs) reaches all of them alike;
    // the ratios are taken within a round, and their median and range over the rounds printed.
    struct Run {
        std::string name;
        emu::Experiment experiment;
        std::vector<double> ms;
        float final_loss = 0;
    };
    std::vector<Run> runs;
    emu::Experiment c = base;
    c.numerics.precision = emu::Precision::Fp32;
    runs.push_back({"fp32", c, {}});
    c.numerics.precision = emu::Precision::Bf16;
    runs.push_back({"bf16 (operands rounded)", c, {}});
    c.numerics.precision = emu::Precision::Fp8;
    for (const emu::Recipe& r : emu::recipes()) {  // each with its default element formats
        c.numerics.recipe = r.id;
        c.numerics.formats = r.formats;
        runs.push_back({"fp8 " + std::string(emu::fp8_recipe_name(r.id)) + " (emulated)", c, {}});
    }
    std::vector<double> gemms;
    for (int round = 0; round < reps; ++round) {
        for (Run& run : runs) {
            Clock::time_point warm = Clock::now();
            const emu::TrainerResult result = emu::train_mlp(run.experiment, [&](int step, float) {
                if (step + 1 == warmup) warm = Clock::now();
                return true;
            });
            run.ms.push_back(std::chrono::duration<double, std::milli>(Clock::now() - warm).count() /
                             double(steps - warmup));
            run.final_loss = result.loss.back();
        }
        gemms.push_back(gemms_alone_ms(base, steps - warmup, 1));
    }
    const auto median = [](std::vector<double> v) {
        std::sort(v.begin(), v.end());
        return v[v.size() / 2];
    };
    // "0.78x (0.75-0.80)": the median and range over the rounds of a / b, round by round.
    const auto ratio = [&](const std::vector<double>& a, const std::vector<double>& b) {
        std::vector<double> q(a.size());
        for (std::size_t i = 0; i < a.size(); ++i) q[i] = a[i] / b[i];
        char text[64];
        std::snprintf(text, sizeof text, "%.2fx (%.2f-%.2f)", median(q), *std::min_element(q.begin(), q.end()),
                      *std::max_element(q.begin(), q.end()));
        return std::string(text);
    };
    std::printf("%-28s %10s %10s %20s %20s %12s\n", "precision", "ms/step", "steps/s", "vs fp32", "vs GEMMs",
                "final loss");
    std::printf("%-28s %10.2f %10.1f %20s %20s %12s\n", "GEMMs alone (float32)", median(gemms), 1000.0 / median(gemms),
                "", "1.00x", "");
    for (const Run& r : runs)
        std::printf("%-28s %10.2f %10.1f %20s %20s %12.6f\n", r.name.c_str(), median(r.ms), 1000.0 / median(r.ms),
                    ratio(runs[0].ms, r.ms).c_str(), ratio(r.ms, gemms).c_str(), r.final_loss);
    std::printf(
        "Emulated FP8 shows accuracy, not speed: quantising every operand in software costs "
        "time that real FP8 tensor cores save.\n");
}

}  // namespace

void add_bench_command(CLI::App& app, CommandStatus& status) {
    CLI::App* bench = app.add_subcommand("bench", "Benchmarks (reported, never asserted)");
    bench->require_subcommand(1);
    struct Args {
        std::size_t elements = 64ull << 20;
        int reps = 5;
    };
    auto args = std::make_shared<Args>();
    CLI::App* emulator = bench->add_subcommand(
        "emulator", "Bulk E4M3 quantisation: elements/s, 1 and all threads, against CUDA's host loop");
    emulator->add_option("--elements", args->elements, "Number of float32 values")
        ->capture_default_str()
        ->check(integer_in({1 << 10, 1LL << 31}));
    emulator->add_option("--repeat", args->reps, "Runs per measurement (median)")
        ->capture_default_str()
        ->check(integer_in({1, 100}));
    emulator->callback([args, &status] {
        // Refused before allocating: the float32 values and two code arrays, 6 bytes a value
        // (12 GiB at the largest --elements), would swap a small machine.
        if (const std::string shortfall = emu::memory_shortfall(std::uint64_t(args->elements) * 6, "these values");
            !shortfall.empty())
            throw UsageError("--elements: " + shortfall + "; use fewer --elements");
        bench_emulator(args->elements, args->reps);
        status.exit_code = 0;
    });
    struct TrainerArgs {
        int steps = 100;
        int reps = 3;
        std::string cpu_level;
        TrainerSize size = TrainerSize::Lab;
    };
    auto trainer_args = std::make_shared<TrainerArgs>();
    CLI::App* trainer = bench->add_subcommand(
        "trainer",
        "CPU trainer ms per step in FP32, BF16 and every FP8 recipe (emulated), at the labs' size or the notebook's");
    trainer->add_option("--steps", trainer_args->steps, "Steps per run (the first ones warm up, untimed)")
        ->capture_default_str()
        ->check(integer_in({2, 100000}));
    trainer->add_option("--repeat", trainer_args->reps, "Rounds, each running every precision once (medians)")
        ->capture_default_str()
        ->check(integer_in({1, 100}));
    trainer
        ->add_option("--size", trainer_args->size,
                     "lab (the labs' default experiment) or notebook (768-3072-768, 32 tokens)")
        ->transform(CLI::CheckedTransformer(
            std::map<std::string, TrainerSize>{{"lab", TrainerSize::Lab}, {"notebook", TrainerSize::Notebook}}))
        ->default_str("lab");
    trainer->add_option("--cpu-level", trainer_args->cpu_level,
                        "The CPU path of the GEMM and the element loops: " + enum_choices<emu::CpuLevel>() +
                            " (default: the fastest this CPU runs; every path gives the same bits)");
    trainer->callback([trainer_args, &status] {
        if (!trainer_args->cpu_level.empty()) {
            const emu::CpuLevel level = parse_enum_or_throw<emu::CpuLevel>(trainer_args->cpu_level, "--cpu-level");
            try {
                emu::force_cpu_level(level);  // refuses a level above this CPU's
            } catch (const std::invalid_argument& e) {
                throw UsageError(std::string("--cpu-level: ") + e.what());
            }
        }
        bench_trainer(trainer_args->steps, trainer_args->size, trainer_args->reps);
        status.exit_code = 0;
    });
    add_bench_gemm_command(*bench);
    add_bench_gpu_command(*bench);
    add_bench_crossover_command(*bench);
}

}  // namespace fp8lab::cli
