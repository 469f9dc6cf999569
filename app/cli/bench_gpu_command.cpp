// `fp8lab bench gpu`: the whole MLP training step on the GPU, BF16 against FP8, per preset
// size, in one run: ms/step, speedup, TFLOP/s of model FLOPs, peak memory, final loss.
#include <CLI/CLI.hpp>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "app/cli/commands.hpp"
#include "emulator/json_writer.hpp"
#include "app/cli/usage_error.hpp"
#include "emulator/amax_trace.hpp"
#include "gpu/probe.hpp"
#include "gpu/tensor_ops.hpp"
#include "gpu/trainer.hpp"

namespace fp8lab::cli {
namespace {

struct BenchGpuArgs {
    std::vector<std::string> presets;
    int steps = 200;
    int warmup = 20;
    std::vector<int> shape;  // d, h, M of a custom size, run instead of the presets
    float learning_rate = gpu::GpuTrainConfig{}.learning_rate;
    std::uint64_t seed = gpu::GpuTrainConfig{}.seed;
    std::string recipe = "delayed";
    bool no_graph = false;
    bool json = false;
    std::string trace_out;
};

struct Row {
    gpu::GpuPreset preset;
    gpu::GpuTrainResult bf16, fp8;
};

gpu::GpuRecipe recipe_of(const std::string& name) {
    if (name == "current") return gpu::GpuRecipe::Current;
    return name == "blockwise" ? gpu::GpuRecipe::Blockwise : gpu::GpuRecipe::Delayed;
}

// What the FP8 runs are, for the table's heading.
std::string fp8_description(const std::string& recipe) {
    if (recipe == "blockwise")
        return "blockwise scaling (1 x 128 activations and gradients, 128 x 128 weights), E4M3 everywhere, "
               "no fast accumulation";
    return recipe + " scaling, E4M3 forward / E5M2 gradients, fast accumulation in the forward";
}

double mib(std::uint64_t bytes) { return double(bytes) / double(1u << 20); }

gpu::GpuTrainResult run_one(const gpu::GpuPreset& p, gpu::GpuPrecision precision, const BenchGpuArgs& a, bool quiet) {
    gpu::GpuTrainConfig c;
    c.input_dim = p.input_dim;
    c.hidden_dim = p.hidden_dim;
    c.tokens = p.tokens;
    c.precision = precision;
    c.recipe = recipe_of(a.recipe);
    c.fast_accumulation = c.recipe != gpu::GpuRecipe::Blockwise;  // cuBLASLt's block-scaled GEMMs have none
    c.learning_rate = a.learning_rate;
    c.seed = a.seed;
    c.init_seed = a.seed;
    c.steps = a.steps;
    c.warmup_steps = a.warmup;
    c.use_graph = !a.no_graph;
    const std::string what = p.name + " " + std::string(gpu::gpu_precision_name(precision));
    return gpu::train_mlp_on_gpu(c, [&](int done, const std::vector<float>& loss) {
        if (!quiet)
            std::fprintf(stderr, "\r%-12s step %d/%d, loss %.5f   ", what.c_str(), done, a.steps,
                         loss.empty() ? 0.0 : double(loss.back()));
        return true;
    });
}

void print_table(const std::string& device, const BenchGpuArgs& a, const std::vector<Row>& rows) {
    std::printf("%s: MLP d -> h -> d (GELU), MSE, AdamW; median ms/step of %d graph replays after %d warm-up steps "
                "(CUDA events); FP8 = %s\n",
                device.c_str(), a.steps - a.warmup, a.warmup, fp8_description(a.recipe).c_str());
    std::printf("%-7s %5s %6s %6s %9s %9s %8s %9s %9s %9s %9s %10s %10s\n", "preset", "d", "h", "M", "BF16 ms",
                "FP8 ms", "speedup", "BF16 TF/s", "FP8 TF/s", "BF16 MiB", "FP8 MiB", "BF16 loss", "FP8 loss");
    for (const Row& r : rows)
        std::printf("%-7s %5d %6d %6d %9.4f %9.4f %7.2fx %9.1f %9.1f %9.0f %9.0f %10.5f %10.5f\n", r.preset.name.c_str(),
                    r.preset.input_dim, r.preset.hidden_dim, r.preset.tokens, r.bf16.median_step_ms,
                    r.fp8.median_step_ms, r.bf16.median_step_ms / r.fp8.median_step_ms, r.bf16.model_tflops,
                    r.fp8.model_tflops, mib(r.bf16.peak_memory_bytes), mib(r.fp8.peak_memory_bytes),
                    r.bf16.final_loss(), r.fp8.final_loss());
    std::printf("TF/s: model FLOPs (6 x parameters x tokens) per second");
    // Both rates divide by the same time: their ratio is the share of the FLOPs run as GEMMs.
    if (!rows.empty() && rows.front().fp8.model_tflops > 0)
        std::printf("; the step runs %.1f%% of them as GEMMs (the first layer needs no input gradient)",
                    100.0 * rows.front().fp8.gemm_tflops / rows.front().fp8.model_tflops);
    std::printf("\n");
    std::printf("loss: mean of the last 10 steps; memory: device memory the run took (cudaMemGetInfo)\n");
}

void print_json(const std::string& device, const BenchGpuArgs& a, const std::vector<Row>& rows) {
    json::JsonWriter json;
    json.begin_object().key("device").value(device).key("steps").value(a.steps).key("warmup_steps").value(a.warmup)
        .key("recipe").value(a.recipe).key("graph").value(!a.no_graph).key("presets").begin_array();
    const auto result = [&](const gpu::GpuTrainResult& r) {
        json.begin_object().key("ms_per_step").value(r.median_step_ms).key("tokens_per_second").value(r.tokens_per_second)
            .key("model_tflops").value(r.model_tflops).key("gemm_tflops").value(r.gemm_tflops).key("peak_memory_bytes").value(std::int64_t(r.peak_memory_bytes))
            .key("final_loss").value(r.final_loss()).key("timed_steps").value(r.timed_steps).end_object();
    };
    for (const Row& r : rows) {
        json.begin_object().key("name").value(r.preset.name).key("d").value(r.preset.input_dim)
            .key("h").value(r.preset.hidden_dim).key("tokens").value(r.preset.tokens).key("bf16");
        result(r.bf16);
        json.key("fp8");
        result(r.fp8);
        json.key("speedup").value(r.bf16.median_step_ms / r.fp8.median_step_ms).end_object();
    }
    json.end_array().end_object();
    std::printf("%s\n", json.text().c_str());
}

void bench_gpu(const BenchGpuArgs& a) {
    const gpu::ProbeResult probe = gpu::probe();
    if (!probe.ready) throw UsageError("bench gpu needs an FP8-capable GPU: " + probe.reason);
    if (a.warmup >= a.steps) throw UsageError("--warmup must be smaller than --steps");
    if (recipe_of(a.recipe) == gpu::GpuRecipe::Blockwise)
        if (const std::string why = gpu::blockwise_unsupported_reason(); !why.empty())
            throw UsageError("--recipe blockwise cannot run here: " + why);
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
        Row row{p, run_one(p, gpu::GpuPrecision::Bf16, a, false), run_one(p, gpu::GpuPrecision::Fp8, a, false)};
        std::fprintf(stderr, "\n");
        rows.push_back(std::move(row));
    }
    if (!a.trace_out.empty()) {
        std::ofstream out(a.trace_out + ".tmp");
        emu::write_amax_trace(out, rows.back().fp8.trace);
        out.close();
        if (!out || std::rename((a.trace_out + ".tmp").c_str(), a.trace_out.c_str()) != 0)
            throw std::runtime_error("cannot write " + a.trace_out);
        std::fprintf(stderr, "amax trace of the %s FP8 run written to %s\n", rows.back().preset.name.c_str(),
                     a.trace_out.c_str());
    }
    const std::string device = gpu::describe(probe);
    if (a.json) print_json(device, a, rows);
    else print_table(device, a, rows);
}

}  // namespace

void add_bench_gpu_command(CLI::App& bench) {
    auto a = std::make_shared<BenchGpuArgs>();
    CLI::App* cmd = bench.add_subcommand("gpu", "GPU: the whole MLP training step, BF16 vs FP8, per preset size");
    std::vector<std::string> names;
    for (const gpu::GpuPreset& p : gpu::gpu_presets()) names.push_back(p.name);
    cmd->add_option("--preset", a->presets, "Presets to run (default: all)")->check(CLI::IsMember(names));
    cmd->add_option("--shape", a->shape, "A custom size d,h,M instead of the presets")->delimiter(',')
        ->excludes("--preset");
    cmd->add_option("--lr", a->learning_rate, "AdamW learning rate")->capture_default_str()
        ->check(CLI::Range(1e-7, 1.0));
    cmd->add_option("--seed", a->seed, "Seed of the data and the initial weights")->capture_default_str();
    cmd->add_option("--steps", a->steps, "Steps per run, warm-up included")->capture_default_str()
        ->check(CLI::Range(2, 100000));
    cmd->add_option("--warmup", a->warmup, "Untimed steps before the timed ones")->capture_default_str()
        ->check(CLI::Range(1, 100000));
    cmd->add_option("--recipe", a->recipe, "FP8 scaling recipe")->capture_default_str()
        ->check(CLI::IsMember({"delayed", "current", "blockwise"}));
    cmd->add_flag("--no-graph", a->no_graph, "Launch kernel by kernel instead of replaying a CUDA graph");
    cmd->add_option("--trace-out", a->trace_out, "Write the amax trace of the last FP8 run to this file");
    cmd->add_flag("--json", a->json, "Print JSON");
    cmd->callback([a] { bench_gpu(*a); });
}

}  // namespace fp8lab::cli
