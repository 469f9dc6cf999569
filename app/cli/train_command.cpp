// SPDX-License-Identifier: Apache-2.0
// `fp8lab train` (one experiment, CPU emulator or GPU) and `fp8lab trace replay`: runs and what-ifs on their traces.
#include <CLI/CLI.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <functional>
#include <memory>
#include <optional>
#include <sstream>
#include <string>

#include "emulator/base/quoted_input.hpp"
#include "app/files/atomic_file.hpp"
#include "app/options/command_options.hpp"
#include "app/cli/commands.hpp"
#include "app/options/number_text.hpp"
#include "app/cli/train_options.hpp"
#include "app/options/usage_error.hpp"
#include "emulator/scaling/amax_trace.hpp"
#include "emulator/base/available_memory.hpp"
#include "emulator/models/cpu_training.hpp"
#include "emulator/models/mlp/mlp_trainer.hpp"
#include "emulator/models/run_comparison.hpp"
#include "emulator/training/paired_comparison.hpp"
#include "emulator/scaling/tensor_numerics.hpp"
#include "emulator/io/user_files.hpp"
#include "gpu/trainer.hpp"
#include "labs/experiments/recipe_code.hpp"

namespace fp8lab::cli {
using files::write_file_atomically;
using options::check_output_option;
using options::hex_float;
using options::integer_in;
using options::UsageError;

namespace {

std::string trace_text(const emu::AmaxTrace& trace) {
    std::ostringstream out;
    emu::write_amax_trace(out, trace);
    return out.str();
}

void print_losses(const std::vector<float>& loss, const std::vector<float>& accuracy) {
    std::printf("step\tloss%s\n", accuracy.empty() ? "" : "\taccuracy");
    for (std::size_t i = 0; i < loss.size(); ++i) {
        if (i >= accuracy.size())
            std::printf("%zu\t%.9g\n", i, loss[i]);
        else
            std::printf("%zu\t%.9g\t%.4f\n", i, loss[i], accuracy[i]);
    }
}

// The text task's report on stderr: the corpus, the validation curve, the samples.
void print_text_report(const emu::TextReport& t) {
    std::fprintf(stderr, "corpus: %s\nparameters: %llu\nvalidation loss (bits per byte):", t.corpus.c_str(),
                 static_cast<unsigned long long>(t.parameters));
    for (const emu::ValidationPoint& v : t.validation)
        std::fprintf(stderr, " step %d %.4f;", v.step + 1, v.bits_per_byte);
    std::fprintf(stderr, "\nprompt:  %s\ngreedy:  %s\nsampled: %s\n", t.prompt.c_str(), t.greedy.c_str(),
                 t.sampled.c_str());
}

// The exit status of a run whose loss stopped being a number: distinct from a usage error
// (2) and a failure (1), so that scripts can tell a diverged run from a broken one.
constexpr int kDiverged = 3;

// The first step whose loss is Inf or NaN, or -1.
long first_non_finite(const std::vector<float>& loss) {
    for (std::size_t i = 0; i < loss.size(); ++i)
        if (!std::isfinite(loss[i])) return long(i);
    return -1;
}

int report_divergence(const std::vector<float>& loss) {
    const long step = first_non_finite(loss);
    if (step < 0) return 0;
    std::fprintf(stderr, "fp8lab train: the loss became %s at step %ld; training stopped there (exit status %d)\n",
                 std::isnan(loss[std::size_t(step)]) ? "NaN" : "infinite", step, kDiverged);
    return kDiverged;
}

// The experiment's other seeds, trained after the first (whose losses were printed): each
// one's final loss, then the spread of all, on stderr.
void report_seeds(const emu::Experiment& e, const std::vector<float>& first,
                  const std::function<std::vector<float>(const emu::Experiment&)>& train) {
    if (e.seeds < 2) return;
    std::vector<double> finals{emu::final_loss(first)};
    std::fprintf(stderr, "seed 1 of %d: final loss %.6g\n", e.seeds, finals[0]);
    for (int k = 1; k < e.seeds; ++k) {
        finals.push_back(emu::final_loss(train(emu::with_seed(e, k))));
        std::fprintf(stderr, "seed %d of %d: final loss %.6g\n", k + 1, e.seeds, finals.back());
    }
    const emu::SeedSpread s = emu::spread_of(finals);
    std::fprintf(stderr, "final loss over %d seeds: mean %.6g, least %.6g, largest %.6g\n", s.seeds, s.mean, s.least,
                 s.largest);
}

// The amax trace, each record with its cast's numerics where the run counted them.
void write_trace(const std::string& path, emu::AmaxTrace trace, const std::vector<emu::TensorNumerics>& numerics) {
    emu::attach_numerics(trace, numerics);
    write_file_atomically(path, trace_text(trace));
    std::fprintf(stderr, "amax trace: %s (%zu records%s)\n", path.c_str(), trace.records.size(),
                 !trace.records.empty() && numerics.empty() ? ", without the casts' numerics: not counted here" : "");
}

// The per-tensor numerics CSV (train --stats), written whole or not at all.
void write_stats(const std::string& path, const std::vector<emu::TensorNumerics>& numerics, const emu::Experiment& e) {
    std::ostringstream text;
    emu::write_tensor_numerics(text, numerics);
    write_file_atomically(path, text.str());
    std::fprintf(stderr, "tensor numerics: %s (%zu records%s)\n", path.c_str(), numerics.size(),
                 e.numerics.precision == emu::Precision::Fp8 ? "" : ": only FP8 casts are recorded");
}

int train_on_cpu(const emu::Experiment& e, const TrainArgs& args) {
    try {
        emu::check_cpu_supports(e);
    } catch (const std::invalid_argument& err) {
        throw UsageError(std::string("--backend cpu: ") + err.what());
    }
    // Refuse before allocating: a model that does not fit would swap the machine to a halt.
    if (const std::string shortfall = emu::memory_shortfall(emu::cpu_training_bytes(e, !args.trace.empty()),
                                                            "this model and batch on the CPU emulator");
        !shortfall.empty())
        throw UsageError(shortfall + ". Use smaller " + emu::cpu_model(e.model.kind).size_options);
    std::fprintf(stderr, "fp8lab train: %d steps on the CPU emulator: %s\n", e.steps, emu::describe(e).c_str());
    emu::TrainerResult r;
    try {
        r = emu::train_on_cpu(
            e,
            [&](int step, float loss) {
                if ((step + 1) % 50 == 0 || step + 1 == e.steps)
                    std::fprintf(stderr, "  step %d/%d  loss %.6g\n", step + 1, e.steps, loss);
                return std::isfinite(loss);  // a diverged run stops at the step that diverged
            },
            !args.trace.empty(), !args.stats.empty() || !args.trace.empty());  // a trace carries the numerics
    } catch (const std::runtime_error& err) {  // the corpus: missing or unreadable, named
        throw UsageError(err.what());
    }
    print_losses(r.loss, r.accuracy);
    if (r.text) print_text_report(*r.text);
    report_seeds(e, r.loss, [](const emu::Experiment& x) { return emu::train_on_cpu(x).loss; });
    if (e.numerics.precision == emu::Precision::Fp8)
        std::fprintf(stderr, "gradient elements flushed to zero: %.4f%% (zero in their GEMMs: %.4f%%)\n",
                     100 * r.flushed_fraction(), 100 * r.zero_gradient_fraction());
    std::fprintf(stderr, "weights moved %.4g of their starting size (||W_end - W_start|| / ||W_start||)\n",
                 r.weight_change);
    if (!r.skipped_steps.empty())
        std::fprintf(
            stderr, "%s\n",
            emu::describe_skipped_steps(r.skipped_steps.size(), r.loss.size(), e.numerics.loss_scaling).c_str());
    if (r.inference) {
        const emu::InferenceResult& i = *r.inference;
        std::fprintf(stderr, "%s, %d held-out rows: loss %.6g in float32, %.6g quantised; output error %.4g\n",
                     emu::describe_inference(e.inference).c_str(), i.evaluated_rows, i.reference_loss, i.quantized_loss,
                     i.output_error);
        if (e.task.kind == emu::TaskKind::GaussianClusters)
            std::fprintf(stderr, "accuracy %.2f%% in float32, %.2f%% quantised (%.2f%% same predictions)\n",
                         i.reference_accuracy, i.quantized_accuracy, i.agreement);
    }
    if (!args.trace.empty()) write_trace(args.trace, r.trace, r.numerics);
    if (!args.stats.empty()) write_stats(args.stats, r.numerics, e);
    return report_divergence(r.loss);
}

int train_on_gpu(const emu::Experiment& e, const TrainArgs& args) {
    gpu::GpuRun config{e};
    config.record_trace = !args.trace.empty();
    // A trace carries the numerics too, as on the CPU.
    config.record_numerics =
        !args.stats.empty() || (config.record_trace && e.numerics.precision == emu::Precision::Fp8);
    try {
        gpu::validate(config);
    } catch (const std::invalid_argument& err) {
        throw UsageError(std::string("--backend gpu: ") + err.what());
    }
    std::fprintf(stderr, "fp8lab train: %d steps on the GPU: %s\n", e.steps, emu::describe(e).c_str());
    const gpu::GpuTrainResult r = gpu::train_on_gpu(config, [&](int done, const std::vector<float>& loss) {
        if (!loss.empty()) std::fprintf(stderr, "  step %d/%d  loss %.6g\n", done, e.steps, loss.back());
        return first_non_finite(loss) < 0;  // a diverged run stops at the next report
    });
    // The GPU reports in chunks of steps: keep the losses up to the step that diverged.
    const long diverged = first_non_finite(r.loss);
    print_losses(diverged < 0 ? r.loss : std::vector<float>(r.loss.begin(), r.loss.begin() + diverged + 1), {});
    if (r.text) print_text_report(*r.text);
    report_seeds(e, r.loss, [&](const emu::Experiment& x) { return gpu::train_on_gpu(gpu::GpuRun{x}, {}).loss; });
    std::fprintf(stderr, "device: %s\nmedian step: %.4f ms over %d timed steps, peak memory %.1f MiB\n",
                 r.device.c_str(), r.median_step_ms, r.timed_steps, double(r.peak_memory_bytes) / (1 << 20));
    if (e.model.kind == emu::ModelKind::Transformer)
        std::fprintf(stderr, "attention: %s\n", std::string(gpu::attention_kernel_name(r.attention)).c_str());
    if (r.path == gpu::GpuPath::Emulated)
        std::fprintf(stderr, "speed: %s\n", std::string(gpu::emulated_speed_note()).c_str());
    if (!r.skipped_steps.empty())
        std::fprintf(
            stderr, "%s\n",
            emu::describe_skipped_steps(r.skipped_steps.size(), r.loss.size(), e.numerics.loss_scaling).c_str());
    if (!args.trace.empty()) write_trace(args.trace, r.trace, r.numerics);
    if (!args.stats.empty()) write_stats(args.stats, r.numerics, e);
    return report_divergence(r.loss);
}

// `--compare bf16,delayed,...`: every variant over the experiment's seeds, then the paired
// table (or JSON) on stdout; progress on stderr.
int compare_on_cpu(const emu::Experiment& e, const std::string& list, bool json) {
    std::vector<emu::RunVariant> variants;
    try {
        variants = emu::variants_from_list(e, list);
        for (const emu::RunVariant& v : variants) emu::check_cpu_supports(v.experiment);
    } catch (const std::invalid_argument& err) {
        throw UsageError(err.what());
    }
    std::uint64_t largest = 0;
    for (const emu::RunVariant& v : variants) largest = std::max(largest, emu::cpu_training_bytes(v.experiment));
    if (const std::string shortfall = emu::memory_shortfall(largest, "this model and batch on the CPU emulator");
        !shortfall.empty())
        throw UsageError(shortfall);
    std::fprintf(stderr, "fp8lab train --compare: %zu variants x %d seeds on the CPU emulator: %s\n", variants.size(),
                 e.seeds, emu::describe(e).c_str());
    const emu::RunComparison c = emu::compare_runs(variants, e.seeds, [](double fraction, const std::string& what) {
        std::fprintf(stderr, "[%3.0f%%] %s\n", 100 * fraction, what.c_str());
        return true;
    });
    std::fputs((json ? emu::comparison_json(c) : emu::comparison_table(c)).c_str(), stdout);
    return 0;
}

}  // namespace

void add_train_command(CLI::App& app, CommandStatus& status) {
    auto args = std::make_shared<TrainArgs>();
    CLI::App* cmd = app.add_subcommand("train",
                                       "Train the lab's MLP or the byte-level transformer (one experiment) on the CPU "
                                       "emulator or the GPU; prints the loss per step");
    add_train_options(*cmd, *args);
    cmd->add_option("--export-code", args->export_code,
                    "Print the experiment as " + enum_choices<labs::CodeTarget>() +
                        " code (Transformer Engine, torchao, Megatron-LM flags, a runnable PyTorch script) and "
                        "exit; what differs from fp8lab's run goes to stderr");
    cmd->add_option("--compare", args->compare,
                    "Train these variants on the same seeds (--seeds) and print each one's paired comparison with "
                    "the first: a comma-separated list of fp32, bf16 and FP8 recipes (" +
                        enum_choices<emu::Fp8Recipe>() + "), e.g. bf16,delayed,mx-rceil (CPU emulator)");
    cmd->add_flag("--json", args->json, "With --compare: the table as JSON, every seed's final loss included");
    cmd->callback([args, cmd, &status] {
        const emu::Experiment e = experiment_from_options(*args);
        if (args->backend != "cpu" && args->backend != "gpu")
            throw UsageError("--backend: " + emu::quoted_input(args->backend) + " is not cpu or gpu");
        // Found before the run, not after it: an output that cannot be written, or that is
        // the experiment being read. `--trace ''` names no file: an error, not "no trace".
        // The corpus too: a file of it, or a file inside its folder, is the text being read.
        const std::string corpus = e.task.kind == emu::TaskKind::Text ? e.task.corpus : std::string();
        check_output_option(*cmd, "--trace", args->trace, {args->experiment_file, corpus});
        check_output_option(*cmd, "--stats", args->stats, {args->experiment_file, corpus, args->trace});
        int code = 0;
        if (args->print_experiment) {
            std::fputs(emu::to_json(e).c_str(), stdout);
        } else if (cmd->count("--export-code") > 0) {
            const labs::RecipeCode code =
                labs::recipe_code(e, parse_enum_or_throw<labs::CodeTarget>(args->export_code, "--export-code"));
            std::fputs(code.code.c_str(), stdout);
            for (const std::string& d : code.differences) std::fprintf(stderr, "fp8lab: differs: %s\n", d.c_str());
        } else if (cmd->count("--compare") > 0) {
            if (args->backend != "cpu" || !args->trace.empty() || !args->stats.empty())
                throw UsageError(
                    "--compare trains on the CPU emulator and writes no trace or stats: drop --backend "
                    "gpu, --trace and --stats, or compare without them");
            code = compare_on_cpu(e, args->compare, args->json);
        } else if (args->backend == "gpu") {
            if (args->json) throw UsageError("--json goes with --compare");
            code = train_on_gpu(e, *args);
        } else {
            if (args->json) throw UsageError("--json goes with --compare");
            code = train_on_cpu(e, *args);
        }
        if (std::fflush(stdout) != 0 || std::ferror(stdout)) throw std::runtime_error("writing the output failed");
        status.exit_code = code;
    });
}

void add_trace_command(CLI::App& app, CommandStatus& status) {
    CLI::App* cmd = app.add_subcommand("trace", "amax traces recorded by a training run");
    cmd->require_subcommand(1);
    struct Args {
        std::string file, formats = "hybrid", algo = "max";
        int history = 1024, margin = 0;
    };
    auto args = std::make_shared<Args>();
    CLI::App* replay =
        cmd->add_subcommand("replay",
                            "Run a delayed-scaling configuration over a recorded trace: per step and tensor, "
                            "the scale it would use and what would overflow or flush to zero");
    replay->add_option("file", args->file, "Trace file (fp8lab amax trace v2 or v3)")->required();
    replay->add_option("--formats", args->formats, "hybrid or e4m3")->capture_default_str();
    replay->add_option("--history", args->history, "amax history length")
        ->capture_default_str()
        ->check(integer_in(emu::bounds::kHistory));
    replay->add_option("--algo", args->algo, "max or most_recent")->capture_default_str();
    replay->add_option("--margin", args->margin, "scale = (max * 2^-margin) / amax")
        ->capture_default_str()
        ->check(integer_in(emu::bounds::kMargin));
    replay->callback([args, &status] {
        const std::optional<emu::AmaxAlgorithm> algo = parse_enum<emu::AmaxAlgorithm>(args->algo);
        if (!algo)
            throw UsageError("--algo: " + emu::quoted_input(args->algo) + " is not " +
                             enum_choices<emu::AmaxAlgorithm>());
        const std::optional<emu::FormatRecipe> formats = parse_enum<emu::FormatRecipe>(args->formats);
        if (!formats)
            throw UsageError("--formats: " + emu::quoted_input(args->formats) + " is not " +
                             enum_choices<emu::FormatRecipe>());
        const emu::DelayedScalingConfig config{args->history, *algo, args->margin};
        try {
            emu::validate(config);
        } catch (const std::invalid_argument& e) {
            throw UsageError(std::string("replay: ") + e.what());
        }
        emu::AmaxTrace trace;
        try {
            std::istringstream in(emu::read_user_file("replay:", args->file));
            trace = emu::read_amax_trace(in, args->file);
        } catch (const std::exception& e) {  // invalid_argument: the file; runtime_error: its contents
            throw UsageError(e.what());
        }
        std::vector<emu::ReplayRow> rows;
        try {
            rows = emu::replay_delayed_scaling(trace, *formats, config);
        } catch (const std::invalid_argument& e) {  // a history that would not fit
            throw UsageError(e.what());
        }
        std::printf("step\ttensor\tamax\tscale\tamax_overflows\toverflowed_at_least\tflushed_at_least\n");
        std::size_t overflow_steps = 0;
        for (const auto& r : rows) {
            overflow_steps += r.amax_overflows;
            std::printf("%llu\t%s\t%s\t%s\t%d\t%lld\t%lld\n", static_cast<unsigned long long>(r.step), r.tensor.c_str(),
                        hex_float(r.amax).c_str(), hex_float(r.scale).c_str(), int(r.amax_overflows),
                        static_cast<long long>(r.overflowed_at_least), static_cast<long long>(r.flushed_at_least));
        }
        std::fprintf(stderr, "replay: %zu records, %zu with amax past the format's max\n", rows.size(), overflow_steps);
        status.exit_code = 0;
    });
}

}  // namespace fp8lab::cli
