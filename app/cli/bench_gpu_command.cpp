// SPDX-License-Identifier: Apache-2.0
// `fp8lab bench gpu`: the whole MLP training step on the GPU, BF16 against each FP8 recipe,
// per preset size, in one run: ms/step, speedup, TFLOP/s of model FLOPs, peak memory, final
// loss, and whether the recipe's speed is native or Hopper's emulation of it.
#include <CLI/CLI.hpp>

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <sstream>
#include <memory>
#include <string>
#include <vector>

#include "app/files/atomic_file.hpp"
#include "app/options/command_options.hpp"
#include "app/cli/commands.hpp"
#include "emulator/io/json_writer.hpp"
#include "app/options/usage_error.hpp"
#include "emulator/scaling/amax_trace.hpp"
#include "gpu/probe.hpp"
#include "gpu/tensor_ops.hpp"
#include "gpu/trainer.hpp"
#include "labs/framework/training_mapping.hpp"

namespace fp8lab::cli {
using files::write_file_atomically;
using options::check_output_option;
using options::integer_in;
using options::real_in;
using options::seed_value;
using options::UsageError;
namespace {

struct BenchGpuArgs {
    std::vector<std::string> presets;
    int steps = 200;
    int warmup = 20;
    std::vector<int> shape;  // d, h, M of a custom size, run instead of the presets
    float learning_rate = emu::Experiment{}.optimizer.learning_rate;
    // The labs' warm-up and cosine decay by default: at a constant rate the large preset's
    // BF16 run stalls at a loss FP8 delayed scaling passes (an artefact of the rate, not of
    // the formats; docs/gpu.md §2).
    std::string lr_schedule = std::string(enum_name(emu::LrScheduleKind::WarmupCosine));
    emu::LrScheduleKind schedule = emu::LrScheduleKind::WarmupCosine;
    std::uint64_t seed = emu::Experiment{}.task.seed;
    std::vector<std::string> recipes{"delayed"};
    bool no_graph = false;
    bool json = false;
    std::string trace_out;
};

struct RecipeRun {
    emu::Fp8Recipe recipe;
    gpu::GpuTrainResult result;
};
struct Row {
    gpu::GpuPreset preset;
    gpu::GpuTrainResult bf16;
    std::vector<RecipeRun> runs;
};

std::vector<emu::Fp8Recipe> chosen_recipes(const std::vector<std::string>& names) {
    std::vector<emu::Fp8Recipe> recipes;
    for (const std::string& name : names) {
        if (name == "all") {
            for (const EnumName<emu::Fp8Recipe>& e : enum_names<emu::Fp8Recipe>()) recipes.push_back(e.value);
            continue;
        }
        const emu::Fp8Recipe r = parse_enum_or_throw<emu::Fp8Recipe>(name, "--recipe");
        if (std::find(recipes.begin(), recipes.end(), r) == recipes.end()) recipes.push_back(r);
    }
    return recipes;
}

double mib(std::uint64_t bytes) { return double(bytes) / double(1u << 20); }

// The experiment of one run: the table's settings (gpu_bench_experiment: history 16, fast
// accumulation in the forward GEMMs, as Transformer Engine and torchao) with the recipe
// and its element formats. Fast accumulation is off where the GEMMs have none: cuBLASLt's
// 1 x 128 and 128 x 128 block-scaled FP8 GEMMs and the emulated path's BF16 GEMMs.
emu::Experiment experiment_of_run(const gpu::GpuPreset& p, emu::Precision precision, emu::Fp8Recipe recipe,
                                  const BenchGpuArgs& a) {
    emu::Experiment e = gpu::gpu_bench_experiment(p.input_dim, p.hidden_dim, p.tokens);
    emu::set_recipe(e, recipe);
    e.numerics.precision = precision;
    if (precision == emu::Precision::Fp8 && (gpu::block_scaled(recipe) || gpu::gpu_path(e) == gpu::GpuPath::Emulated))
        e.numerics.fast_accumulation = {};
    e.optimizer.learning_rate = a.learning_rate;
    if (a.schedule == emu::LrScheduleKind::WarmupCosine)
        e.optimizer.schedule = labs::lab_experiment().optimizer.schedule;
    e.task.seed = e.init_seed = a.seed;
    e.steps = a.steps;
    return e;
}

// What each recipe's runs are, for the table's notes, from the recipe value and the run's
// experiment: "E4M3 / E4M3 / E5M2, per tensor, float32 scales, fast accumulation in the forward".
std::string recipe_description(emu::Fp8Recipe id, const BenchGpuArgs& a) {
    const emu::Experiment e = experiment_of_run(gpu::gpu_presets().front(), emu::Precision::Fp8, id, a);
    const emu::Recipe r = emu::recipe_of(e.numerics);
    const auto upper = [](std::string_view name) {
        std::string u(name);
        for (char& ch : u) ch = char(std::toupper(static_cast<unsigned char>(ch)));
        return u;
    };
    std::string text = upper(r.formats.input->name) + " / " + upper(r.formats.weight->name) + " / " +
                       upper(r.formats.gradient->name) + ", " + r.blocks.input.text();
    if (!(r.blocks.weight == r.blocks.input)) text += " (weights " + r.blocks.weight.text() + ")";
    text += ", " + std::string(r.scale_type_text()) + " scales";
    if (r.rounding.gradient == emu::RoundingMode::Stochastic) text += ", stochastic gradients";
    if (r.hadamard_wgrad) text += ", Hadamard wgrad";
    text += e.numerics.fast_accumulation.forward ? ", fast accumulation in the forward" : ", no fast accumulation";
    return text;
}

gpu::GpuTrainResult run_one(const gpu::GpuPreset& p, emu::Precision precision, emu::Fp8Recipe recipe,
                            const BenchGpuArgs& a, bool quiet) {
    gpu::GpuRun run;
    run.experiment = experiment_of_run(p, precision, recipe, a);
    run.warmup_steps = a.warmup;
    run.use_graph = !a.no_graph;
    const std::string what =
        p.name + " " + (precision == emu::Precision::Bf16 ? std::string("bf16") : std::string(enum_name(recipe)));
    return gpu::train_mlp_on_gpu(run, [&](int done, const std::vector<float>& loss) {
        if (!quiet)
            std::fprintf(stderr, "\r%-12s step %d/%d, loss %.5f   ", what.c_str(), done, a.steps,
                         loss.empty() ? 0.0 : double(loss.back()));
        return true;
    });
}

void print_table(const std::string& device, const BenchGpuArgs& a, const std::vector<Row>& rows) {
    std::printf(
        "%s: MLP d -> h -> d (GELU), MSE, AdamW; median ms/step of %d graph replays after %d warm-up steps "
        "(CUDA events)\n",
        device.c_str(), a.steps - a.warmup, a.warmup);
    std::printf("%-7s %5s %6s %6s %-10s %-8s %9s %9s %8s %9s %9s %9s %9s %10s %10s\n", "preset", "d", "h", "M",
                "recipe", "speed", "BF16 ms", "FP8 ms", "speedup", "BF16 TF/s", "FP8 TF/s", "BF16 MiB", "FP8 MiB",
                "BF16 loss", "FP8 loss");
    bool any_emulated = false;
    for (const Row& r : rows)
        for (const RecipeRun& run : r.runs) {
            const gpu::GpuTrainResult& f = run.result;
            any_emulated = any_emulated || f.path == gpu::GpuPath::Emulated;
            std::printf("%-7s %5d %6d %6d %-10s %-8s %9.4f %9.4f %7.2fx %9.1f %9.1f %9.0f %9.0f %10.5f %10.5f\n",
                        r.preset.name.c_str(), r.preset.input_dim, r.preset.hidden_dim, r.preset.tokens,
                        std::string(enum_name(run.recipe)).c_str(), std::string(gpu::gpu_path_name(f.path)).c_str(),
                        r.bf16.median_step_ms, f.median_step_ms, r.bf16.median_step_ms / f.median_step_ms,
                        r.bf16.model_tflops, f.model_tflops, mib(r.bf16.peak_memory_bytes), mib(f.peak_memory_bytes),
                        r.bf16.final_loss(), f.final_loss());
        }
    for (const emu::Fp8Recipe recipe : chosen_recipes(a.recipes))
        std::printf("%-10s %s\n", std::string(enum_name(recipe)).c_str(), recipe_description(recipe, a).c_str());
    if (any_emulated) std::printf("speed %s\n", std::string(gpu::emulated_speed_note()).c_str());
    std::printf("TF/s: model FLOPs (6 x parameters x tokens) per second");
    // Both rates divide by the same time: their ratio is the share of the FLOPs run as GEMMs.
    if (!rows.empty() && rows.front().bf16.model_tflops > 0)
        std::printf("; the step runs %.1f%% of them as GEMMs (the first layer needs no input gradient)",
                    100.0 * rows.front().bf16.gemm_tflops / rows.front().bf16.model_tflops);
    std::printf("\n");
    std::printf("loss: mean of the last 10 steps; memory: device memory the run took (cudaMemGetInfo)\n");
    // Where the step is memory-bound (few tokens), its speed is the bytes it moves.
    bool header = false;
    for (const Row& r : rows)
        for (const RecipeRun& run : r.runs) {
            if (run.result.step_bytes <= 0 || r.bf16.step_bytes <= 0) continue;
            if (!header)
                std::printf(
                    "memory traffic: bytes the step's kernels read and write (each tensor once per kernel), "
                    "per step and per second of the median step\n");
            header = true;
            std::printf("%-7s BF16 %8.1f MB %7.0f GB/s   %-10s %8.1f MB %7.0f GB/s\n", r.preset.name.c_str(),
                        r.bf16.step_bytes / 1e6, r.bf16.memory_gbps, std::string(enum_name(run.recipe)).c_str(),
                        run.result.step_bytes / 1e6, run.result.memory_gbps);
        }
}

void print_json(const std::string& device, const BenchGpuArgs& a, const std::vector<Row>& rows) {
    json::JsonWriter json;
    json.begin_object()
        .key("device")
        .value(device)
        .key("steps")
        .value(a.steps)
        .key("warmup_steps")
        .value(a.warmup)
        .key("graph")
        .value(!a.no_graph)
        .key("presets")
        .begin_array();
    const auto result = [&](const gpu::GpuTrainResult& r) {
        json.key("ms_per_step")
            .value(r.median_step_ms)
            .key("tokens_per_second")
            .value(r.tokens_per_second)
            .key("model_tflops")
            .value(r.model_tflops)
            .key("gemm_tflops")
            .value(r.gemm_tflops)
            .key("step_bytes")
            .value(r.step_bytes)
            .key("memory_gbps")
            .value(r.memory_gbps)
            .key("peak_memory_bytes")
            .value(std::int64_t(r.peak_memory_bytes))
            .key("final_loss")
            .value(r.final_loss())
            .key("timed_steps")
            .value(r.timed_steps);
    };
    for (const Row& r : rows) {
        json.begin_object()
            .key("name")
            .value(r.preset.name)
            .key("d")
            .value(r.preset.input_dim)
            .key("h")
            .value(r.preset.hidden_dim)
            .key("tokens")
            .value(r.preset.tokens)
            .key("bf16")
            .begin_object();
        result(r.bf16);
        json.end_object().key("runs").begin_array();
        for (const RecipeRun& run : r.runs) {
            const bool emulated = run.result.path == gpu::GpuPath::Emulated;
            json.begin_object()
                .key("recipe")
                .value(std::string(enum_name(run.recipe)))
                .key("description")
                .value(recipe_description(run.recipe, a))
                .key("speed")
                .value(emulated ? "emulated" : "native");
            if (emulated) json.key("speed_note").value(std::string(gpu::emulated_speed_note()));
            result(run.result);
            json.key("speedup").value(r.bf16.median_step_ms / run.result.median_step_ms).end_object();
        }
        json.end_array().end_object();
    }
    json.end_array().end_object();
    std::printf("%s\n", json.text().c_str());
}

void bench_gpu(BenchGpuArgs a) {
    try {
        a.schedule = parse_enum_or_throw<emu::LrScheduleKind>(a.lr_schedule, "--lr-schedule");
    } catch (const std::invalid_argument& e) {
        throw UsageError(e.what());
    }
    const gpu::ProbeResult probe = gpu::probe();
    if (!probe.ready) throw UsageError("bench gpu needs an FP8-capable GPU: " + probe.reason);
    if (a.warmup >= a.steps) throw UsageError("--warmup must be smaller than --steps");
    const std::vector<emu::Fp8Recipe> recipes = chosen_recipes(a.recipes);
    for (const emu::Fp8Recipe r : recipes) {  // native block scales: Hopper's cuBLASLt only
        const emu::Experiment e = experiment_of_run(gpu::gpu_presets().front(), emu::Precision::Fp8, r, a);
        if (gpu::gpu_path(e) == gpu::GpuPath::Native && !emu::recipe(r).per_tensor())
            if (const std::string why = gpu::blockwise_unsupported_reason(); !why.empty())
                throw UsageError("--recipe " + std::string(enum_name(r)) + " cannot run here: " + why);
    }
    std::vector<gpu::GpuPreset> chosen;
    if (!a.shape.empty()) {
        if (a.shape.size() != 3) throw UsageError("--shape takes three numbers: d,h,M");
        chosen.push_back({"custom", a.shape[0], a.shape[1], a.shape[2]});
    }
    if (chosen.empty())
        for (const gpu::GpuPreset& p : gpu::gpu_presets())
            if (a.presets.empty() || std::find(a.presets.begin(), a.presets.end(), p.name) != a.presets.end())
                chosen.push_back(p);
    std::vector<Row> rows;
    for (const gpu::GpuPreset& p : chosen) {
        Row row{p, run_one(p, emu::Precision::Bf16, emu::Fp8Recipe::Delayed, a, false), {}};
        for (const emu::Fp8Recipe recipe : recipes)
            row.runs.push_back({recipe, run_one(p, emu::Precision::Fp8, recipe, a, false)});
        std::fprintf(stderr, "\n");
        rows.push_back(std::move(row));
    }
    if (!a.trace_out.empty()) {
        std::ostringstream text;
        emu::write_amax_trace(text, rows.back().runs.back().result.trace);
        write_file_atomically(a.trace_out, text.str());
        std::fprintf(stderr, "amax trace of the %s FP8 run written to %s\n", rows.back().preset.name.c_str(),
                     a.trace_out.c_str());
    }
    const std::string device = gpu::describe(probe);
    if (a.json)
        print_json(device, a, rows);
    else
        print_table(device, a, rows);
}

}  // namespace

void add_bench_gpu_command(CLI::App& bench) {
    auto a = std::make_shared<BenchGpuArgs>();
    CLI::App* cmd = bench.add_subcommand("gpu", "GPU: the whole MLP training step, BF16 vs FP8, per preset size");
    std::vector<std::string> names;
    for (const gpu::GpuPreset& p : gpu::gpu_presets()) names.push_back(p.name);
    cmd->add_option("--preset", a->presets, "Presets to run (default: all)")->check(CLI::IsMember(names));
    cmd->add_option("--shape", a->shape, "A custom size d,h,M instead of the presets")
        ->delimiter(',')
        ->excludes("--preset")
        ->check(integer_in(emu::bounds::kWidth));
    cmd->add_option("--lr", a->learning_rate, "AdamW learning rate")
        ->capture_default_str()
        ->check(real_in({1e-7, 1.0}));
    cmd->add_option("--lr-schedule", a->lr_schedule,
                    "Learning rate per step: " + enum_choices<emu::LrScheduleKind>() +
                        " (warmup-cosine: the labs' warm-up and cosine decay)")
        ->capture_default_str();
    cmd->add_option("--seed", a->seed, "Seed of the data and the initial weights")
        ->capture_default_str()
        ->check(seed_value());
    cmd->add_option("--steps", a->steps, "Steps per run, warm-up included")
        ->capture_default_str()
        ->check(integer_in({2, 100000}));
    cmd->add_option("--warmup", a->warmup, "Untimed steps before the timed ones")
        ->capture_default_str()
        ->check(integer_in({1, 100000}));
    std::vector<std::string> recipe_names{"all"};
    for (const EnumName<emu::Fp8Recipe>& e : enum_names<emu::Fp8Recipe>()) recipe_names.emplace_back(e.name);
    cmd->add_option("--recipe", a->recipes,
                    "FP8 recipes to run beside BF16, or all; MX and NVFP4 run emulated on Hopper (exact numerics, "
                    "BF16 GEMMs), and their speed says so")
        ->capture_default_str()
        ->check(CLI::IsMember(recipe_names))
        ->delimiter(',');
    cmd->add_flag("--no-graph", a->no_graph, "Launch kernel by kernel instead of replaying a CUDA graph");
    cmd->add_option("--trace-out", a->trace_out, "Write the amax trace of the last FP8 run to this file");
    cmd->add_flag("--json", a->json, "Print JSON");
    cmd->callback([a, cmd] {
        check_output_option(*cmd, "--trace-out", a->trace_out);  // found before the measurement, not after it
        bench_gpu(*a);
    });
}

}  // namespace fp8lab::cli
