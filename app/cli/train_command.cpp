// `fp8lab train` (CPU emulator) and `fp8lab trace replay`: runs and what-ifs on their traces.
#include <CLI/CLI.hpp>

#include <cstdio>
#include <fstream>
#include <memory>
#include <string>

#include "app/cli/commands.hpp"
#include "app/cli/number_text.hpp"
#include "app/cli/train_options.hpp"
#include "app/cli/usage_error.hpp"
#include "emulator/amax_trace.hpp"
#include "emulator/mlp_trainer.hpp"

namespace fp8lab::cli {

void add_train_command(CLI::App& app, CommandStatus& status) {
    auto args = std::make_shared<TrainArgs>();
    CLI::App* cmd = app.add_subcommand(
        "train", "Train the lab's MLP on the CPU emulator; prints the loss per step");
    add_train_options(*cmd, *args);
    cmd->callback([args, &status] {
        const emu::TrainerConfig config = trainer_config(*args);
        std::ofstream trace_file;
        if (!args->trace.empty()) {
            trace_file.open(args->trace);
            if (!trace_file) throw UsageError("--trace: cannot write '" + args->trace + "'");
        }
        std::fprintf(stderr, "fp8lab train: %d steps on the CPU emulator\n", config.steps);
        const emu::TrainerResult r = emu::train_mlp(config, [&](int step, float loss) {
            if ((step + 1) % 50 == 0 || step + 1 == config.steps)
                std::fprintf(stderr, "  step %d/%d  loss %.6g\n", step + 1, config.steps, loss);
            return true;
        });
        std::printf("step\tloss%s\n", r.accuracy.empty() ? "" : "\taccuracy");
        for (std::size_t i = 0; i < r.loss.size(); ++i) {
            if (r.accuracy.empty()) std::printf("%zu\t%.9g\n", i, r.loss[i]);
            else std::printf("%zu\t%.9g\t%.4f\n", i, r.loss[i], r.accuracy[i]);
        }
        if (config.precision == emu::Precision::Fp8)
            std::fprintf(stderr, "gradient elements flushed to zero: %.4f%%\n", 100 * r.flushed_fraction());
        if (!r.skipped_steps.empty())
            std::fprintf(stderr, "steps skipped by the loss scaler: %zu\n", r.skipped_steps.size());
        if (trace_file.is_open()) {
            emu::write_amax_trace(trace_file, r.trace);
            if (!trace_file) throw std::runtime_error("writing " + args->trace + " failed");
            std::fprintf(stderr, "amax trace: %s (%zu records)\n", args->trace.c_str(), r.trace.records.size());
        }
        status.exit_code = 0;
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
    CLI::App* replay = cmd->add_subcommand(
        "replay", "Run a delayed-scaling configuration over a recorded trace: per step and tensor, "
                  "the scale it would use and what would overflow or flush to zero");
    replay->add_option("file", args->file, "Trace file (fp8lab amax trace v1)")->required();
    replay->add_option("--formats", args->formats, "hybrid or e4m3")->capture_default_str();
    replay->add_option("--history", args->history, "amax history length")->capture_default_str();
    replay->add_option("--algo", args->algo, "max or most_recent")->capture_default_str();
    replay->add_option("--margin", args->margin, "margin")->capture_default_str();
    replay->callback([args, &status] {
        emu::DelayedScalingConfig config{args->history, emu::AmaxAlgorithm::Max, args->margin};
        if (args->algo == "most_recent") config.algorithm = emu::AmaxAlgorithm::MostRecent;
        else if (args->algo != "max") throw UsageError("--algo: '" + args->algo + "' is not max or most_recent");
        if (args->formats != "hybrid" && args->formats != "e4m3")
            throw UsageError("--formats: '" + args->formats + "' is not hybrid or e4m3");
        try {
            emu::validate(config);
        } catch (const std::invalid_argument& e) {
            throw UsageError(std::string("replay: ") + e.what());
        }
        std::ifstream in(args->file);
        if (!in) throw UsageError("replay: cannot read '" + args->file + "'");
        emu::AmaxTrace trace;
        try {
            trace = emu::read_amax_trace(in, args->file);
        } catch (const std::runtime_error& e) {
            throw UsageError(e.what());
        }
        const auto rows = emu::replay_delayed_scaling(
            trace, args->formats == "hybrid" ? emu::FormatRecipe::Hybrid : emu::FormatRecipe::E4M3, config);
        std::printf("step\ttensor\tamax\tscale\tamax_overflows\toverflowed_at_least\tflushed_at_least\n");
        std::size_t overflow_steps = 0;
        for (const auto& r : rows) {
            overflow_steps += r.amax_overflows;
            std::printf("%llu\t%s\t%s\t%s\t%d\t%lld\t%lld\n", static_cast<unsigned long long>(r.step),
                        r.tensor.c_str(), hex_float(r.amax).c_str(), hex_float(r.scale).c_str(),
                        int(r.amax_overflows), static_cast<long long>(r.overflowed_at_least),
                        static_cast<long long>(r.flushed_at_least));
        }
        std::fprintf(stderr, "replay: %zu records, %zu with amax past the format's max\n", rows.size(),
                     overflow_steps);
        status.exit_code = 0;
    });
}

}  // namespace fp8lab::cli
