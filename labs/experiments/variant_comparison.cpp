// SPDX-License-Identifier: Apache-2.0
// Variants compared over the same seeds (variant_comparison.hpp).
#include "labs/experiments/variant_comparison.hpp"

#include <algorithm>

#include "emulator/models/cpu_training.hpp"
#include "labs/experiments/seed_comparison.hpp"
#include "labs/framework/table.hpp"

namespace fp8lab::labs {

StepOutput compare_variants(const std::vector<TrainingVariant>& variants, RunContext& ctx, CastCounts counts,
                            std::optional<std::size_t> reference) {
    StepOutput out;
    Figure fig;
    fig.id = "variants";
    fig.x_axis = {"step", AxisScale::Linear};
    fig.y_axis = {"loss", AxisScale::Log10};
    Table t{"final", {}, {}, {}};
    const bool text = variants.front().config.task.kind == emu::TaskKind::Text;
    t.columns = {{"run"},
                 {text ? "validation loss" : "final loss", ColumnType::Number, text ? "bits/byte" : ""},
                 {"over BF16", ColumnType::Number, "x"}};
    if (counts == CastCounts::Gradients)
        t.columns.insert(t.columns.end(), {{"gradient elements zero in the GEMMs", ColumnType::Number, "%"},
                                           {"flushed by their own cast", ColumnType::Number, "%"}});
    else
        t.columns.insert(t.columns.end(), {{"activations flushed to zero", ColumnType::Number, "%"},
                                           {"activations in subnormals", ColumnType::Number, "%"}});
    t.columns.insert(t.columns.end(), {{"against BF16, paired over the seeds"}});
    if (reference) t.columns.push_back({"against " + variants.at(*reference).name});
    Figure ratio;
    ratio.id = "ratio-to-bf16";
    ratio.x_axis = {"step", AxisScale::Linear};
    ratio.y_axis = {"loss / BF16 loss", AxisScale::Log10};
    std::vector<double> bf16_loss, bf16_finals, reference_finals;
    RunMeasures bf16_measures;
    struct Finding {
        std::size_t row, column;
        PairedComparison comparison;
    };
    std::vector<Finding> findings;
    std::vector<ComparedRun> compared;
    int colour = 0;
    const int seeds = variants.front().config.seeds;
    for (std::size_t i = 0; i < variants.size(); ++i) {
        const TrainingVariant& var = variants[i];
        std::vector<double> mean, finals;
        double flushed = 0, subnormal = 0;
        RunMeasures measures;
        for (int k = 0; k < seeds; ++k) {
            const emu::TrainerResult r =
                emu::train_on_cpu(emu::with_seed(var.config, k), [&](int, float) { return !ctx.cancel_requested(); });
            if (r.cancelled) throw RunCancelled();
            mean.resize(std::max(mean.size(), r.loss.size()), 0.0);
            for (std::size_t j = 0; j < r.loss.size(); ++j) mean[j] += r.loss[j] / double(seeds);
            finals.push_back(emu::compared_loss(r));
            flushed += (counts == CastCounts::Gradients ? r.flushed_fraction() : r.input_flushed_fraction()) / seeds;
            subnormal += r.input_subnormal_fraction() / seeds;
            measures.zero_gradients += r.zero_gradient_fraction() / seeds;
            measures.weight_change += r.weight_change / seeds;
            ctx.report_progress(
                double(i * std::size_t(seeds) + std::size_t(k) + 1) / double(variants.size() * std::size_t(seeds)),
                var.name);
        }
        const std::string name = var.name;
        Series l = line(name, step_numbers(mean.size()), mean, colour++);
        if (i == 0) {
            l.line_width = 2;
            bf16_loss = mean;
        } else {
            Series q = line(name, {}, {}, colour - 1);
            for (std::size_t k = 0; k < mean.size() && k < bf16_loss.size(); ++k) {
                q.x.push_back(double(k));
                q.y.push_back(mean[k] / bf16_loss[k]);
            }
            ratio.series.push_back(std::move(q));
        }
        fig.series.push_back(std::move(l));
        const SeedSpread spread = spread_of(finals);
        if (i == 0) {
            bf16_finals = finals;
            bf16_measures = measures;
        }
        const PairedComparison against_bf16 = compare_paired(bf16_finals, finals);
        if (i > 0) {
            compared.push_back({name, against_bf16});
            if (const std::string lower = lower_than_bf16_note(name, against_bf16, &bf16_measures, &measures);
                !lower.empty())
                out.notes.push_back(lower);
        }
        std::vector<Cell> row;
        row.emplace_back(name);
        row.emplace_back(spread.mean);
        row.emplace_back(against_bf16.mean_ratio);
        if (counts == CastCounts::Gradients) row.emplace_back(100 * measures.zero_gradients);
        row.emplace_back(100 * flushed);
        if (counts == CastCounts::Activations) row.emplace_back(100 * subnormal);
        // The findings' cells are worded once every run is in: the table's rows share decimals.
        row.emplace_back(std::string("-"));
        if (i > 0) findings.push_back({t.rows.size(), row.size() - 1, against_bf16});
        if (reference) {
            if (i == *reference) reference_finals = finals;
            row.emplace_back(std::string("-"));
            if (i > *reference)
                findings.push_back({t.rows.size(), row.size() - 1, compare_paired(reference_finals, finals)});
        }
        t.rows.push_back(std::move(row));
        StepOutput partial;
        partial.figures.push_back(fig);
        ctx.publish(std::move(partial));
    }
    int decimals = 1;
    for (const Finding& f : findings) decimals = std::max(decimals, percent_decimals(f.comparison));
    for (const Finding& f : findings) t.rows[f.row][f.column] = paired_words(f.comparison, "", "", decimals);
    if (seeds > 1)
        out.notes.push_back("Every curve and final loss is the mean of " + std::to_string(seeds) +
                            " seeds (each seed its own data and initial weights, the same for every run); the table "
                            "compares each run with BF16 seed by seed: the geometric mean of the ratios of their "
                            "final losses, with its 95% interval (docs/numerics.md, \"How fp8lab compares two "
                            "runs\").");
    out.figures.push_back(std::move(fig));
    out.figures.push_back(std::move(ratio));
    out.figures.push_back(seed_ratio_figure("BF16", "final loss", compared));
    out.tables.push_back(std::move(t));
    out.notes.push_back("Backend: CPU emulator (bit-exact FP8 arithmetic).");
    return out;
}

}  // namespace fp8lab::labs
