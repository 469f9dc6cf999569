// BF16 against FP8 training with a step's settings, on the CPU emulator or the GPU.
#include "labs/training_comparison.hpp"

#include <algorithm>
#include <stdexcept>

#include "gpu/probe.hpp"
#include "gpu/tensor_ops.hpp"
#include "gpu/trainer.hpp"
#include "labs/table.hpp"

namespace fp8lab::labs {
namespace {

struct Curves {
    std::vector<float> bf16, fp8;
};

Figure loss_figure(const Curves& c, const std::string& fp8_label) {
    Figure f;
    f.id = "training-loss";
    f.title = "Training loss, BF16 against " + fp8_label;
    f.x_axis.label = "step";
    f.y_axis.label = "loss";
    f.y_axis.scale = AxisScale::Log10;
    f.series.push_back(line("BF16", step_numbers(c.bf16.size()), {c.bf16.begin(), c.bf16.end()}, 0));
    f.series.push_back(line(fp8_label, step_numbers(c.fp8.size()), {c.fp8.begin(), c.fp8.end()}, 5));
    return f;
}

StepOutput output_of(const Curves& c, const std::string& fp8_label, const std::string& backend_note) {
    StepOutput out;
    out.figures.push_back(loss_figure(c, fp8_label));
    out.notes.push_back(backend_note);
    return out;
}

void add_final_losses(StepOutput& out, const Curves& c) {
    const double bf16 = emu::final_loss(c.bf16), fp8 = emu::final_loss(c.fp8);
    out.metrics.push_back({"BF16 final loss (mean of last 10 steps)", bf16, ""});
    out.metrics.push_back({"FP8 final loss (mean of last 10 steps)", fp8, ""});
    if (bf16 > 0) out.metrics.push_back({"FP8 loss over BF16 loss", fp8 / bf16, "x"});
}

StepOutput run_on_cpu(const TrainingSettings& s, RunContext& context) {
    Curves c;
    const std::string label = "FP8 (" + std::string(emu::fp8_recipe_name(s.fp8.recipe)) + ")";
    const std::string note = "Backend: CPU emulator (bit-exact FP8 arithmetic; its speed says nothing about "
                             "FP8 hardware)";
    emu::TrainerResult results[2];
    for (int run = 0; run < 2; ++run) {
        const emu::Precision precision = run == 0 ? emu::Precision::Bf16 : emu::Precision::Fp8;
        std::vector<float>& curve = run == 0 ? c.bf16 : c.fp8;
        results[run] = emu::train_mlp(cpu_training_config(s, precision), [&](int step, float loss) {
            curve.push_back(loss);
            if (step % 10 == 9 || step + 1 == s.steps) {
                context.report_progress((run * s.steps + step + 1) / (2.0 * s.steps),
                                        std::string(run == 0 ? "BF16" : "FP8") + " step " + std::to_string(step + 1));
                context.publish(output_of(c, label, note));
            }
            return !context.cancel_requested();
        });
        if (results[run].cancelled) throw RunCancelled();
    }
    StepOutput out = output_of(c, label, note);
    add_final_losses(out, c);
    out.metrics.push_back({"FP8 gradient elements flushed to zero", 100 * results[1].flushed_fraction(), "%"});
    if (s.loss_scaling)
        out.metrics.push_back({"FP8 steps skipped by the loss scaler", double(results[1].skipped_steps.size()), ""});
    return out;
}

gpu::GpuTrainConfig gpu_config(const TrainingSettings& s, gpu::GpuPrecision precision) {
    gpu::GpuTrainConfig g;  // the tiny preset: the size of a course notebook's MLP
    g.precision = precision;
    g.recipe = s.fp8.recipe == emu::Fp8Recipe::Current     ? gpu::GpuRecipe::Current
               : s.fp8.recipe == emu::Fp8Recipe::Blockwise ? gpu::GpuRecipe::Blockwise
                                                           : gpu::GpuRecipe::Delayed;
    g.fast_accumulation = g.recipe != gpu::GpuRecipe::Blockwise;  // cuBLASLt's block-scaled GEMMs have none
    g.formats = s.fp8.formats;
    g.delayed = s.fp8.delayed;
    g.steps = s.steps;
    return g;
}

StepOutput run_on_gpu(const TrainingSettings& s, RunContext& context) {
    check_gpu_supports(s);
    const gpu::ProbeResult p = gpu::probe();
    if (!p.ready) throw gpu::GpuUnavailable(p.reason);
    Curves c;
    const std::string label = "FP8 (" + std::string(emu::fp8_recipe_name(s.fp8.recipe)) + ")";
    const std::string note = "Backend: GPU, " + gpu::describe(p) + "; ms/step is the median over the timed steps";
    gpu::GpuTrainResult results[2];
    for (int run = 0; run < 2; ++run) {
        const gpu::GpuPrecision precision = run == 0 ? gpu::GpuPrecision::Bf16 : gpu::GpuPrecision::Fp8;
        std::vector<float>& curve = run == 0 ? c.bf16 : c.fp8;
        results[run] = gpu::train_mlp_on_gpu(gpu_config(s, precision), [&](int done, const std::vector<float>& loss) {
            curve = loss;
            context.report_progress((run * s.steps + done) / (2.0 * s.steps),
                                    std::string(run == 0 ? "BF16" : "FP8") + " step " + std::to_string(done));
            context.publish(output_of(c, label, note));
            return !context.cancel_requested();
        });
        if (results[run].cancelled) throw RunCancelled();
        curve = results[run].loss;
    }
    StepOutput out = output_of(c, label, note);
    add_final_losses(out, c);
    const double mib = 1024.0 * 1024.0;
    out.metrics.push_back({"BF16 ms per step", results[0].median_step_ms, "ms"});
    out.metrics.push_back({"FP8 ms per step", results[1].median_step_ms, "ms"});
    if (results[1].median_step_ms > 0)
        out.metrics.push_back({"FP8 speedup over BF16", results[0].median_step_ms / results[1].median_step_ms, "x"});
    out.metrics.push_back({"BF16 peak memory", double(results[0].peak_memory_bytes) / mib, "MiB"});
    out.metrics.push_back({"FP8 peak memory", double(results[1].peak_memory_bytes) / mib, "MiB"});
    return out;
}

}  // namespace

std::string describe(const TrainingSettings& s) {
    std::string text = "FP8 " + std::string(emu::fp8_recipe_name(s.fp8.recipe));
    if (s.fp8.scaling_disabled) text += " without scaling (scale 1)";
    if (s.fp8.recipe == emu::Fp8Recipe::Blockwise) text += ", E4M3 everywhere (1 x 128 and 128 x 128 blocks)";
    else text += s.fp8.formats == emu::FormatRecipe::Hybrid ? ", hybrid (E5M2 gradients)" : ", E4M3 everywhere";
    if (s.fp8.recipe == emu::Fp8Recipe::Delayed)
        text += ", history " + std::to_string(s.fp8.delayed.history_length) + ", " +
                (s.fp8.delayed.algorithm == emu::AmaxAlgorithm::Max ? "max" : "most_recent") + ", margin " +
                std::to_string(s.fp8.delayed.margin);
    if (s.first_last_in_bf16) text += ", first/last layer BF16";
    if (s.loss_scaling) text += ", dynamic loss scaling";
    return text + ", " + std::to_string(s.steps) + " steps";
}

emu::TrainerConfig cpu_training_config(const TrainingSettings& s, emu::Precision precision) {
    emu::TrainerConfig c;
    c.precision = precision;
    c.fp8 = s.fp8;
    c.first_last_in_bf16 = s.first_last_in_bf16;
    c.loss_scaling = s.loss_scaling;
    c.steps = s.steps;
    c.record_trace = false;
    return c;
}

void check_gpu_supports(const TrainingSettings& s) {
    std::string refused;
    if (s.fp8.recipe != emu::Fp8Recipe::Delayed && s.fp8.recipe != emu::Fp8Recipe::Current &&
        s.fp8.recipe != emu::Fp8Recipe::Blockwise)
        refused += " recipe '" + std::string(emu::fp8_recipe_name(s.fp8.recipe)) +
                   "' (the GPU step runs delayed, current and blockwise scaling);";
    if (s.fp8.scaling_disabled) refused += " scaling off (the GPU step always scales);";
    if (s.first_last_in_bf16) refused += " first/last layer in BF16;";
    if (s.loss_scaling) refused += " dynamic loss scaling;";
    if (!refused.empty())
        throw std::invalid_argument("the GPU backend cannot run these settings:" + refused.substr(0, refused.size() - 1) +
                                    ". Run them on the CPU emulator.");
}

StepOutput run_training_comparison(const TrainingSettings& s, RunContext& context) {
    if (s.steps < 1) throw std::invalid_argument("training steps must be at least 1");
    return context.backend() == Backend::Gpu ? run_on_gpu(s, context) : run_on_cpu(s, context);
}

}  // namespace fp8lab::labs
