// SPDX-License-Identifier: Apache-2.0
// Lab 5, loss scaling: gradients that underflow in FP16 and E5M2 without a scale, the
// window a single loss scale opens, and a dynamic loss scaler's scale over a run with
// overflow events and skipped steps (PyTorch GradScaler's rules).
#include <cmath>

#include "emulator/formats/convert.hpp"
#include "emulator/scaling/loss_scaler.hpp"
#include "labs/logic/lab_logic.hpp"
#include "labs/experiments/quantization_census.hpp"
#include "labs/experiments/sample_tensors.hpp"

namespace fp8lab::labs {
namespace {

// How many doublings a loss scale of 1e-8 needs before FP16 keeps it.
int smallest_saving_power() {
    int k = 0;
    while (emu::round_to_format(emu::fp16(), std::ldexp(1e-8, k)) == 0) ++k;
    return k;
}

StepLogic underflow() {
    StepLogic s;
    s.id = "underflow";
    s.titles = {{"figure window"}, {"table at-scale", {"power"}}};
    s.parameters = {integer("decades", 1, 14, 8), integer("scale_log2", 0, 40, 16)};
    s.no_training_reason = "A fixed loss scale on sampled gradients; the dynamic step trains with a loss scaler.";
    s.run = [](const Parameters& p, RunContext& ctx) {
        const std::vector<float> g =
            sample_tensor(TensorKind::Gradients, 1 << 14, ctx.seed(), int(p.integer("decades")));
        const int chosen = int(p.integer("scale_log2"));
        StepOutput out;
        Figure fig;
        fig.id = "window";
        fig.x_axis = {"loss scale S", AxisScale::Log2};
        fig.y_axis = {"% of gradient elements", AxisScale::Linear, 0.0, 100.0};
        Table t{"at-scale", {}, {}, {}};
        t.title_values = {{"power", std::to_string(chosen)}};
        t.columns = {{"format"},
                     {"flushed to zero", ColumnType::Number, "%"},
                     {"overflowed", ColumnType::Number, "%"},
                     {"subnormal", ColumnType::Number, "%"}};
        int colour = 0;
        for (const emu::Format* f : {&emu::fp16(), &emu::e5m2(), &emu::bf16()}) {
            Series lost = line(std::string(f->display_name) + " flushed", {}, {}, colour);
            Series over = line(std::string(f->display_name) + " overflowed", {}, {}, colour++);
            over.dashed = true;
            for (int k = 0; k <= 40; ++k) {
                const QuantizationCensus c = census(*f, g, std::ldexp(1.0f, k));
                lost.x.push_back(std::ldexp(1.0, k));
                lost.y.push_back(100 * c.flushed);
                over.x.push_back(std::ldexp(1.0, k));
                over.y.push_back(100 * c.overflow);
            }
            fig.series.push_back(std::move(lost));
            fig.series.push_back(std::move(over));
            const QuantizationCensus c = census(*f, g, std::ldexp(1.0f, chosen));
            t.rows.push_back({std::string(f->display_name), 100 * c.flushed, 100 * c.overflow, 100 * c.subnormal});
        }
        out.figures.push_back(std::move(fig));
        out.tables.push_back(std::move(t));
        return out;
    };
    const int k = smallest_saving_power();
    s.exercise = numeric_exercise(std::ldexp(1.0, k), {{"half", std::ldexp(1.0, k - 1)},
                                                       {"double", std::ldexp(1.0, k + 1)},
                                                       {"gradscaler-start", 65536},
                                                       {"no-scale", 1}});
    return s;
}

constexpr int kGradientSteps = 600;

// Gradient amax per step: a slow decay with noise, and overflow-sized spikes at 150-151 and 400.
std::vector<double> gradient_amax() {
    std::vector<double> a(kGradientSteps);
    for (int t = 0; t < kGradientSteps; ++t) {
        a[std::size_t(t)] =
            2e-3 * std::pow(10.0, -t / double(kGradientSteps)) * (1 + 0.3 * std::sin(t * 0.9) * std::sin(t * 0.13));
        if (t == 150 || t == 151 || t == 400) a[std::size_t(t)] *= 3000;
    }
    return a;
}

StepLogic dynamic_scaler() {
    StepLogic s;
    s.id = "dynamic";
    s.titles = {{"figure scaler"}, {"table skips"}};
    s.parameters = {integer("growth_interval", 10, 2000, 50), integer("initial_log2", 0, 24, 16),
                    toggle("train_with_loss_scaling", true)};
    s.training_parameters = {"growth_interval", "initial_log2", "train_with_loss_scaling"};
    s.training_mapping =
        "With the toggle on, training runs FP8 without per-tensor scaling (scale 1) and with "
        "dynamic loss scaling from this step's initial scale and growth interval, as FP16 "
        "training did; off leaves delayed per-tensor scaling and no loss scaler.";
    s.training = [](const Parameters& p, emu::Experiment& e) {
        const bool on = p.toggle("train_with_loss_scaling");
        e.numerics.loss_scaling = on;
        e.numerics.scaling = !on;
        e.numerics.loss_scaler.growth_interval = int(p.integer("growth_interval"));
        e.numerics.loss_scaler.initial_scale = std::ldexp(1.0f, int(p.integer("initial_log2")));
    };
    s.run = [](const Parameters& p, RunContext&) {
        emu::LossScalerConfig config;
        config.growth_interval = int(p.integer("growth_interval"));
        config.initial_scale = std::ldexp(1.0f, int(p.integer("initial_log2")));
        emu::DynamicLossScaler scaler(config);
        const std::vector<double> amax = gradient_amax();
        const emu::Format& f = emu::fp16();
        std::vector<double> x, fits, kept;
        Series skipped = scatter("skipped step (overflow)", {}, {}, 5);
        for (int t = 0; t < kGradientSteps; ++t) {
            const float scale = scaler.scale();
            x.push_back(t);
            fits.push_back(f.max_finite / scale);
            kept.push_back(f.min_subnormal / 2 / scale);
            const bool overflow = !std::isfinite(emu::round_to_format(
                f, amax[std::size_t(t)] * scale, {emu::RoundingMode::NearestEven, emu::Saturation::None}));
            if (!scaler.update(overflow)) {
                skipped.x.push_back(t);
                skipped.y.push_back(amax[std::size_t(t)]);
            }
        }
        StepOutput out;
        Figure fig;
        fig.id = "scaler";
        fig.x_axis = {"step", AxisScale::Linear};
        fig.y_axis = {"gradient magnitude (unscaled)", AxisScale::Log10};
        fig.y_axis.max = 1e4;  // room above the spikes for the legend
        fig.series.push_back(line("gradient amax", x, amax, 0));
        fig.series.push_back(Series{SeriesKind::Stairs, "largest gradient FP16 holds at this scale", 1, x, fits});
        fig.series.push_back(Series{SeriesKind::Stairs, "smallest gradient FP16 keeps", 2, x, kept});
        if (!skipped.x.empty()) fig.series.push_back(skipped);
        out.figures.push_back(std::move(fig));
        const emu::LossScalerState st = scaler.state();
        out.metrics.push_back({"skipped steps", double(st.skipped_steps.size()), ""});
        out.metrics.push_back({"final scale (log2)", std::log2(double(st.scale)), ""});
        Table t{"skips", {}, {}, {}};
        t.columns = {
            {"step", ColumnType::Integer}, {"scale used", ColumnType::Number}, {"scale after", ColumnType::Number}};
        for (std::size_t step : st.skipped_steps)
            t.rows.push_back({std::int64_t(step), double(st.scale_per_step[step]),
                              double(step + 1 < st.scale_per_step.size() ? st.scale_per_step[step + 1] : st.scale)});
        out.tables.push_back(std::move(t));
        return out;
    };
    emu::DynamicLossScaler scaler;  // GradScaler's defaults
    for (int i = 0; i < 3; ++i) scaler.update(true);
    s.exercise = numeric_exercise(
        scaler.scale(), {{"unchanged", 65536}, {"halved-once", 32768}, {"halved-twice", 16384}, {"grown", 131072}});
    return s;
}

}  // namespace

LabLogic loss_scaling_lab() { return {"loss-scaling", {underflow(), dynamic_scaler()}}; }

}  // namespace fp8lab::labs
