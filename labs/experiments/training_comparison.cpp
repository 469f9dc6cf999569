// SPDX-License-Identifier: Apache-2.0
// BF16 against FP8 training with a step's settings, on the CPU emulator or the GPU.
#include "labs/experiments/training_comparison.hpp"

#include <algorithm>
#include <stdexcept>

#include "emulator/models/cpu_training.hpp"
#include "emulator/models/mlp/mlp_trainer.hpp"
#include "gpu/probe.hpp"
#include "gpu/tensor_ops.hpp"
#include "gpu/trainer.hpp"
#include "labs/experiments/numerics_heatmap.hpp"
#include "labs/experiments/seed_comparison.hpp"
#include "labs/framework/table.hpp"

namespace fp8lab::labs {
namespace {

// Each variant's loss curve per seed (the curves grow while the runs go on).
struct Curves {
    std::vector<std::vector<float>> bf16, fp8;
    std::vector<std::vector<emu::ValidationPoint>> bf16_validation, fp8_validation;  // the text task's
    std::string model;  // emu::model_name: what the titles say was trained
};

Figure loss_figure(const Curves& c, const std::string& fp8_label) {
    Figure f;
    f.id = "training-loss";
    f.title = "Training loss, BF16 against " + fp8_label + (c.model.empty() ? "" : ": " + c.model);
    f.x_axis.label = "step";
    f.y_axis.label = "loss";
    f.y_axis.scale = AxisScale::Log10;
    for (Series& s : curve_with_band("BF16", c.bf16, 0)) f.series.push_back(std::move(s));
    for (Series& s : curve_with_band(fp8_label, c.fp8, 5)) f.series.push_back(std::move(s));
    return f;
}

StepOutput output_of(const Curves& c, const std::string& fp8_label, const std::string& backend_note) {
    StepOutput out;
    out.figures.push_back(loss_figure(c, fp8_label));
    out.notes.push_back(backend_note);
    return out;
}

// What the quantised run is called in metric names: NVFP4 is not FP8.
std::string family_of(const emu::Experiment& e) {
    return e.numerics.precision == emu::Precision::Fp8 ? emu::recipe(e.numerics.recipe).family : "FP8";
}

// The text task's validation loss over the steps, each precision's mean over the seeds with
// the seeds' band: the curve a byte model is judged by (the training loss is on the batches
// it trained on).
Figure validation_figure(const std::vector<std::vector<emu::ValidationPoint>>& bf16,
                         const std::vector<std::vector<emu::ValidationPoint>>& quantised, const std::string& label) {
    Figure f;
    f.id = "validation";
    f.title = "Validation loss on held-out text, BF16 against " + label;
    f.x_axis.label = "step";
    f.y_axis.label = "bits per byte";
    const auto add = [&](const std::vector<std::vector<emu::ValidationPoint>>& runs, const std::string& name,
                         int colour) {
        if (runs.empty() || runs[0].empty()) return;
        std::vector<std::vector<float>> curves;
        for (const auto& run : runs) {
            curves.emplace_back();
            for (const emu::ValidationPoint& v : run) curves.back().push_back(float(v.bits_per_byte));
        }
        for (Series s : curve_with_band(name, curves, colour)) {
            for (double& x : s.x) x = double(runs[0].at(std::size_t(x)).step + 1);  // index -> the step after which
            f.series.push_back(std::move(s));
        }
    };
    add(bf16, "BF16", 0);
    add(quantised, label, 5);
    return f;
}

// Both runs' final losses, seed by seed, paired: the finding in words and as a figure.
struct Finals {
    std::vector<double> bf16, fp8;
    bool validation = false;  // validation loss in bits per byte (the text task), not training loss
    std::string measure() const { return validation ? "validation loss" : "final loss"; }
};

void add_final_losses(StepOutput& out, const Finals& finals, const std::string& family,
                      const std::string& quantised_label) {
    const SeedSpread bf16 = spread_of(finals.bf16), fp8 = spread_of(finals.fp8);
    const int seeds = bf16.seeds;
    const std::string of = seeds > 1 ? " (mean of " + std::to_string(seeds) + " seeds)" : "";
    const std::string unit = finals.validation ? "bits/byte" : "";
    const std::string measure = finals.measure();
    out.metrics.push_back({"BF16 " + measure + of, bf16.mean, unit});
    out.metrics.push_back({family + " " + measure + of, fp8.mean, unit});
    const PairedComparison c = compare_paired(finals.bf16, finals.fp8);
    out.metrics.push_back({family + " loss over BF16 loss" +
                               (seeds > 1 ? std::string(" (geometric mean of the seeds' ratios)") : std::string()),
                           c.mean_ratio, "x"});
    if (c.has_interval()) {
        out.metrics.push_back({family + " over BF16, 95% interval from", c.low, "x"});
        out.metrics.push_back({family + " over BF16, 95% interval to", c.high, "x"});
    }
    if (seeds > 1)
        out.notes.push_back("Each curve is the mean of " + std::to_string(seeds) +
                            " seeds, its band the least to the largest loss of the seeds at each step. Both runs "
                            "train on the same seeds (the same data and starting weights), so they are compared "
                            "seed by seed (docs/numerics.md, \"How fp8lab compares two runs\").");
    out.notes.push_back((finals.validation ? "Validation loss at the end, in bits per byte: BF16 "
                                           : "Final loss (the mean of a run's last 10 steps): BF16 ") +
                        spread_text(bf16) + ", " + family + " " + spread_text(fp8) + ". " + family +
                        " against BF16: " + paired_words(c, family, "BF16") + ".");
    if (c.has_interval()) out.figures.push_back(seed_ratio_figure("BF16", measure, {{quantised_label, c}}));
}

// The curve's label: the recipe, or the precision when it is not FP8.
std::string label_of(const emu::Experiment& e) {
    if (e.numerics.precision != emu::Precision::Fp8) return std::string(emu::precision_name(e.numerics.precision));
    const emu::Recipe& r = emu::recipe(e.numerics.recipe);
    return r.family == "FP8" ? "FP8 (" + std::string(emu::fp8_recipe_name(r.id)) + ")" : r.family;
}

std::string experiment_note(const emu::Experiment& e) { return "Experiment: " + emu::describe(e); }

// The quantised run's per-tensor numerics (its first seed's), as lab 11's per-tensor step
// draws them: which tensors lose elements to zero, and when.
void add_numerics_heatmap(StepOutput& out, const emu::Experiment& e, const std::vector<emu::TensorNumerics>& numerics,
                          const std::string& backend) {
    if (numerics.empty()) return;
    Figure f = flushed_heatmap("numerics", numerics, e.steps);
    f.title = "Elements flushed to zero per tensor and step, " + label_of(e) + " (seed 1, " + backend + ")";
    out.figures.push_back(std::move(f));
}

// Each trained model quantised for inference as the experiment says, on held-out data.
void add_inference_table(StepOutput& out, const emu::Experiment& e, const emu::TrainerResult (&results)[2]) {
    const bool classes = e.task.kind == emu::TaskKind::GaussianClusters;
    std::vector<Column> columns = {{"trained in"},
                                   {"loss, float32 inference", ColumnType::Number},
                                   {"loss, quantised inference", ColumnType::Number},
                                   {"output error vs float32", ColumnType::Number}};
    if (classes) {
        columns.push_back({"accuracy, float32", ColumnType::Number, "%"});
        columns.push_back({"accuracy, quantised", ColumnType::Number, "%"});
    }
    const emu::InferenceResult& first = *results[0].inference;
    Table t{"inference",
            "The trained models, " + emu::describe_inference(e.inference) + "; " +
                std::to_string(first.evaluated_rows) + " held-out rows",
            columns,
            {}};
    for (int run = 0; run < 2; ++run) {
        const emu::InferenceResult& r = *results[run].inference;
        // Cell by cell: GCC 12 misreads a braced list of variants holding a string as
        // destroying an uninitialised one (-Wmaybe-uninitialized).
        std::vector<Cell> row;
        row.emplace_back(std::string(run == 0 ? "BF16" : label_of(e)));
        row.emplace_back(r.reference_loss);
        row.emplace_back(r.quantized_loss);
        row.emplace_back(r.output_error);
        if (classes) {
            row.push_back(r.reference_accuracy);
            row.push_back(r.quantized_accuracy);
        }
        t.rows.push_back(std::move(row));
    }
    out.tables.push_back(std::move(t));
}

// The text task (the transformer): the corpus and what each model writes after the same
// prompt (the validation losses are the final losses, add_final_losses).
void add_text_report(StepOutput& out, const emu::Experiment& e, const emu::TextReport& bf16,
                     const emu::TextReport& quantised) {
    out.notes.push_back("Text: " + bf16.corpus + "; prompt: \"" + bf16.prompt + "\"");
    for (int run = 0; run < 2; ++run) {
        const emu::TextReport& t = run == 0 ? bf16 : quantised;
        const std::string name = run == 0 ? std::string("BF16") : family_of(e);
        out.notes.push_back(name + " writes (greedy): \"" + t.greedy + "\"");
        out.notes.push_back(name + " writes (sampled): \"" + t.sampled + "\"");
    }
}

// Both backends skip a step whose weight gradient is not finite; say how many, and why.
void add_skipped_steps_note(StepOutput& out, const emu::Experiment& e, std::size_t skipped, std::size_t steps) {
    if (e.numerics.loss_scaling || skipped)
        out.notes.push_back(family_of(e) + ": " + emu::describe_skipped_steps(skipped, steps, e.numerics.loss_scaling));
}

StepOutput run_on_cpu(const emu::Experiment& e, RunContext& context) {
    Curves c;
    c.model = emu::model_name(e);
    const std::string label = label_of(e);
    const std::string note =
        "Backend: CPU emulator (bit-exact FP8 arithmetic; its speed says nothing about "
        "FP8 hardware)";
    const int seeds = e.seeds;
    const double runs = 2.0 * seeds * e.steps;
    // results[run]: the first seed's, for the inference table; the flushed fraction and
    // the skipped steps over all seeds.
    emu::TrainerResult results[2];
    double flushed = 0;
    RunMeasures measures[2];
    Finals finals;
    std::size_t skipped = 0;
    for (int run = 0; run < 2; ++run) {
        std::vector<std::vector<float>>& curves = run == 0 ? c.bf16 : c.fp8;
        for (int k = 0; k < seeds; ++k) {
            const emu::Experiment x = emu::with_seed(run == 0 ? emu::with_precision(e, emu::Precision::Bf16) : e, k);
            curves.emplace_back();
            const double done_before = double(run * seeds + k) * e.steps;
            // The quantised run's first seed records every cast's numerics (for the heatmap).
            const bool numerics = run == 1 && k == 0 && e.numerics.precision == emu::Precision::Fp8;
            emu::TrainerResult r = emu::train_on_cpu(
                x,
                [&](int step, float loss) {
                    curves.back().push_back(loss);
                    if (step % 10 == 9 || step + 1 == e.steps) {
                        context.report_progress((done_before + step + 1) / runs,
                                                std::string(run == 0 ? "BF16" : label) +
                                                    (seeds > 1 ? ", seed " + std::to_string(k + 1) : std::string()) +
                                                    ", step " + std::to_string(step + 1));
                        context.publish(output_of(c, label, note));
                    }
                    return !context.cancel_requested();
                },
                false, numerics);
            if (r.cancelled) throw RunCancelled();
            (run == 0 ? finals.bf16 : finals.fp8).push_back(emu::compared_loss(r));
            finals.validation = r.text && !r.text->validation.empty();
            if (r.text) (run == 0 ? c.bf16_validation : c.fp8_validation).push_back(r.text->validation);
            measures[run].zero_gradients += r.zero_gradient_fraction() / seeds;
            measures[run].weight_change += r.weight_change / seeds;
            if (run == 1) {
                flushed += r.flushed_fraction() / seeds;
                skipped += r.skipped_steps.size();
            }
            if (k == 0) results[run] = std::move(r);
        }
    }
    StepOutput out = output_of(c, label, note);
    out.notes.push_back(experiment_note(e));
    add_final_losses(out, finals, family_of(e), label);
    if (const std::string lower =
            lower_than_bf16_note(family_of(e), compare_paired(finals.bf16, finals.fp8), &measures[0], &measures[1]);
        !lower.empty())
        out.notes.push_back(lower);
    out.metrics.push_back(
        {family_of(e) + " gradient elements flushed to zero" + (seeds > 1 ? " (mean of the seeds)" : std::string()),
         100 * flushed, "%"});
    add_skipped_steps_note(out, e, skipped, results[1].loss.size() * std::size_t(seeds));
    add_numerics_heatmap(out, e, results[1].numerics, "CPU");
    if (results[0].inference && results[1].inference) add_inference_table(out, e, results);
    if (results[0].text && results[1].text) {
        out.figures.insert(out.figures.begin() + 1, validation_figure(c.bf16_validation, c.fp8_validation, label));
        add_text_report(out, e, *results[0].text, *results[1].text);
    }
    return out;
}

StepOutput run_on_gpu(const emu::Experiment& e, RunContext& context) {
    const gpu::GpuRun configs[2] = {{emu::with_precision(e, emu::Precision::Bf16)}, {e}};
    for (const gpu::GpuRun& r : configs) gpu::validate(r);
    const gpu::ProbeResult p = gpu::probe();
    if (!p.ready) throw gpu::GpuUnavailable(p.reason);
    const bool numerics_on_gpu = e.numerics.precision == emu::Precision::Fp8;
    Curves c;
    c.model = emu::model_name(e);
    const std::string label = label_of(e);
    const int seeds = e.seeds;
    const std::string note = "Backend: GPU, " + gpu::describe(p) + "; ms/step is the median over the timed steps" +
                             (seeds > 1 ? " of the first seed's run" : "");
    gpu::GpuTrainResult results[2];  // the first seed's: its speed and memory
    Finals finals;
    std::size_t skipped = 0;
    for (int run = 0; run < 2; ++run) {
        std::vector<std::vector<float>>& curves = run == 0 ? c.bf16 : c.fp8;
        for (int k = 0; k < seeds; ++k) {
            gpu::GpuRun config{emu::with_seed(configs[run].experiment, k)};
            // The quantised run's first seed counts every cast's numerics where the GPU can.
            if (run == 1 && k == 0 && numerics_on_gpu) config.record_numerics = true;
            curves.emplace_back();
            const double done_before = double(run * seeds + k) * e.steps;
            gpu::GpuTrainResult r = gpu::train_on_gpu(config, [&](int done, const std::vector<float>& loss) {
                curves.back() = loss;
                context.report_progress((done_before + done) / (2.0 * seeds * e.steps),
                                        std::string(run == 0 ? "BF16" : label) +
                                            (seeds > 1 ? ", seed " + std::to_string(k + 1) : std::string()) +
                                            ", step " + std::to_string(done));
                context.publish(output_of(c, label, note));
                return !context.cancel_requested();
            });
            if (r.cancelled) throw RunCancelled();
            curves.back() = r.loss;
            (run == 0 ? finals.bf16 : finals.fp8).push_back(emu::compared_loss(r));
            finals.validation = r.text && !r.text->validation.empty();
            if (r.text) (run == 0 ? c.bf16_validation : c.fp8_validation).push_back(r.text->validation);
            if (run == 1) skipped += r.skipped_steps.size();
            if (k == 0) results[run] = std::move(r);
        }
    }
    StepOutput out = output_of(c, label, note);
    out.notes.push_back(experiment_note(e));
    add_final_losses(out, finals, family_of(e), label);
    if (const std::string lower =
            lower_than_bf16_note(family_of(e), compare_paired(finals.bf16, finals.fp8), nullptr, nullptr);
        !lower.empty())
        out.notes.push_back(lower);
    add_skipped_steps_note(out, e, skipped, results[1].loss.size() * std::size_t(seeds));
    add_numerics_heatmap(out, e, results[1].numerics, "GPU");
    const double mib = 1024.0 * 1024.0;
    for (int run = 0; run < 2; ++run)
        if (results[run].path == gpu::GpuPath::Emulated)
            out.notes.push_back((run == 0 ? std::string("BF16") : family_of(e)) + " speed " +
                                std::string(gpu::emulated_speed_note()));
    out.metrics.push_back({"BF16 ms per step", results[0].median_step_ms, "ms"});
    out.metrics.push_back(
        {family_of(e) + (results[1].path == gpu::GpuPath::Emulated ? " ms per step (emulated)" : " ms per step"),
         results[1].median_step_ms, "ms"});
    if (results[1].median_step_ms > 0)
        out.metrics.push_back(
            {family_of(e) + " speedup over BF16", results[0].median_step_ms / results[1].median_step_ms, "x"});
    out.metrics.push_back({"BF16 peak memory", double(results[0].peak_memory_bytes) / mib, "MiB"});
    out.metrics.push_back({family_of(e) + " peak memory", double(results[1].peak_memory_bytes) / mib, "MiB"});
    if (results[0].text && results[1].text) {
        out.figures.insert(out.figures.begin() + 1, validation_figure(c.bf16_validation, c.fp8_validation, label));
        add_text_report(out, e, *results[0].text, *results[1].text);
    }
    return out;
}

}  // namespace

void check_backend_supports(const emu::Experiment& e, Backend backend) {
    if (backend == Backend::Gpu) {
        gpu::validate(gpu::GpuRun{emu::with_precision(e, emu::Precision::Bf16)});
        gpu::validate(gpu::GpuRun{e});
    } else {
        emu::check_cpu_supports(e);
    }
}

StepOutput run_training_comparison(const emu::Experiment& e, RunContext& context) {
    check_backend_supports(e, context.backend());
    return context.backend() == Backend::Gpu ? run_on_gpu(e, context) : run_on_cpu(e, context);
}

}  // namespace fp8lab::labs
