// SPDX-License-Identifier: Apache-2.0
// Lab 4, why scale: realistic tensors against each format's range, the fractions that
// overflow, flush to zero or land in subnormals before and after per-tensor scaling, and
// E4M3 against E5M2 for gradients that span many decades.
#include <algorithm>
#include <cmath>

#include "emulator/formats/bulk.hpp"
#include "emulator/formats/convert.hpp"
#include "emulator/scaling/block_recipes.hpp"
#include "emulator/scaling/current_scaling.hpp"
#include "labs/logic/lab_logic.hpp"
#include "labs/experiments/quantization_census.hpp"
#include "labs/experiments/sample_tensors.hpp"

namespace fp8lab::labs {
namespace {

constexpr std::size_t kElements = 1 << 16;

// Percent of elements per half-binade of |x * scale|; zeros are left out (log axis).
Series magnitude_histogram(const std::vector<float>& x, float scale, std::string name, int colour, SeriesKind kind) {
    int lo = 1 << 20, hi = -(1 << 20);
    for (float v : x)
        if (v != 0) {
            const int k = int(std::floor(2 * std::log2(std::fabs(double(v) * scale))));
            lo = std::min(lo, k);
            hi = std::max(hi, k);
        }
    Series s;
    s.kind = kind;
    s.name = std::move(name);
    s.colour = colour;
    if (lo > hi) return s;
    std::vector<double> counts(std::size_t(hi - lo + 1));
    for (float v : x)
        if (v != 0) counts[std::size_t(int(std::floor(2 * std::log2(std::fabs(double(v) * scale)))) - lo)] += 1;
    for (int k = lo; k <= hi + 1; ++k) s.x.push_back(std::exp2(k / 2.0));
    for (double c : counts) s.y.push_back(100 * c / double(x.size()));
    if (kind == SeriesKind::Stairs) s.y.push_back(s.y.back());  // the last step ends at the last edge
    return s;
}

// The format's landmarks as vertical lines: smallest subnormal, smallest normal, largest.
void add_format_range(Figure& fig, const emu::Format& f) {
    Series sub{SeriesKind::VerticalLines, "smallest subnormal of " + std::string(f.name), 3, {f.min_subnormal}};
    Series normal{SeriesKind::VerticalLines, "smallest normal", 2, {f.min_normal}};
    Series max{SeriesKind::VerticalLines, "largest value", 5, {f.max_finite}};
    for (Series* s : {&sub, &normal, &max}) s->dashed = true;
    if (f.has_subnormals) fig.series.push_back(sub);
    fig.series.push_back(normal);
    fig.series.push_back(max);
}

Figure histogram_figure(std::string id, TitleValues title_values) {
    Figure fig;
    fig.id = std::move(id);
    fig.title_values = std::move(title_values);
    fig.x_axis = {"|x| (after the scale)", AxisScale::Log2};
    fig.y_axis = {"% of elements per half binade", AxisScale::Linear};
    return fig;
}

std::vector<Column> census_columns() {
    return {{"tensor"},
            {"scale", ColumnType::Number},
            {"overflow", ColumnType::Number, "%"},
            {"flushed to zero", ColumnType::Number, "%"},
            {"subnormal", ColumnType::Number, "%"},
            {"normal", ColumnType::Number, "%"},
            {"RMS relative error", ColumnType::Number}};
}

std::vector<Cell> census_row(std::string label, float scale, const QuantizationCensus& c) {
    return {std::move(label),  double(scale),  100 * c.overflow,    100 * c.flushed,
            100 * c.subnormal, 100 * c.normal, c.rms_relative_error};
}

const std::vector<std::string> kFp8 = format_choice_names({&emu::e4m3(), &emu::e5m2()});

StepLogic against_the_grid() {
    StepLogic s;
    s.id = "against-the-grid";
    s.titles = {{"table census"}, {"figure magnitudes", {"tensor", "format"}}};
    s.parameters = {choice("tensor", {"weights", "activations", "gradients"}, "weights"),
                    choice("format", element_format_names(), "e4m3")};
    s.training_parameters = {"tensor", "format"};
    s.training_mapping =
        "The format is the training cast of the chosen tensor's role (weights: the weights, "
        "activations: the layer inputs, gradients: the output gradients), with delayed scaling.";
    s.training = tensor_role_in_format;
    s.run = [](const Parameters& p, RunContext& ctx) {
        const emu::Format& f = emu::format_by_name(p.choice("format"));
        const TensorKind kind = tensor_kind(p.choice("tensor"));
        const std::vector<float> x = sample_tensor(kind, kElements, ctx.seed());
        StepOutput out;
        Figure fig = histogram_figure(
            "magnitudes", {{"tensor", tensor_description(kind, 8)}, {"format", std::string(f.display_name)}});
        fig.series.push_back(magnitude_histogram(x, 1, "elements", 0, SeriesKind::Histogram));
        add_format_range(fig, f);
        out.figures.push_back(std::move(fig));
        Table t{"census", {}, census_columns(), {}};
        t.rows.push_back(census_row(tensor_description(kind, 8), 1, census(f, x, 1)));
        out.tables.push_back(std::move(t));
        out.metrics.push_back({"amax of the tensor", double(emu::amax(x)), ""});
        out.metrics.push_back({"largest value of " + std::string(f.name), f.max_finite, ""});
        out.metrics.push_back({"smallest non-zero value of " + std::string(f.name),
                               f.has_subnormals ? f.min_subnormal : f.min_normal, ""});
        return out;
    };
    const double answer = emu::round_to_format(emu::e4m3(), 0.0009);
    s.exercise = numeric_exercise(answer, {{"smallest-subnormal", emu::e4m3().min_subnormal}, {"unrounded", 0.0009}});
    return s;
}

StepLogic per_tensor_scaling() {
    StepLogic s;
    s.id = "per-tensor-scaling";
    s.titles = {{"figure before-after", {"tensor", "scale"}}, {"table census", {"format"}}};
    s.parameters = {choice("tensor", {"weights", "activations", "gradients"}, "gradients"),
                    choice("format", kFp8, "e4m3"), toggle("scale", true)};
    s.training_parameters = {"tensor", "format", "scale"};
    s.training_mapping =
        "The format is the training cast of the chosen tensor's role (weights: the weights, "
        "activations: the layer inputs, gradients: the output gradients); scale off trains "
        "with scale 1 for every tensor, on with delayed scaling.";
    s.training = [](const Parameters& p, emu::Experiment& e) {
        e.numerics.scaling = p.toggle("scale");
        tensor_role_in_format(p, e);
    };
    s.run = [](const Parameters& p, RunContext& ctx) {
        const emu::Format& f = emu::format_by_name(p.choice("format"));
        const TensorKind kind = tensor_kind(p.choice("tensor"));
        const std::vector<float> x = sample_tensor(kind, kElements, ctx.seed());
        const float amax = emu::amax(x);
        const float scale = p.toggle("scale") ? emu::current_scale(amax, f).scale : 1.0f;
        const float normalise = amax > 0 ? 1.0f / amax : 1.0f;
        StepOutput out;
        Figure fig =
            histogram_figure("before-after", {{"tensor", tensor_description(kind, 8)}, {"scale", number_text(scale)}});
        fig.series.push_back(magnitude_histogram(x, 1, "unscaled", 0, SeriesKind::Stairs));
        if (scale != 1)
            fig.series.push_back(magnitude_histogram(x, scale, "scaled (max / amax)", 1, SeriesKind::Stairs));
        add_format_range(fig, f);
        out.figures.push_back(std::move(fig));
        Table t{"census", {}, census_columns(), {}};
        t.title_values = {{"format", std::string(f.display_name)}};
        t.rows.push_back(census_row("unscaled", 1, census(f, x, 1)));
        t.rows.push_back(census_row("normalised to amax = 1 (a common shortcut)", normalise, census(f, x, normalise)));
        t.rows.push_back(census_row("amax onto the format's max (current scaling)", emu::current_scale(amax, f).scale,
                                    census(f, x, emu::current_scale(amax, f).scale)));
        out.tables.push_back(std::move(t));
        out.metrics.push_back({"amax", double(amax), ""});
        out.metrics.push_back({"scale used in the figure", double(scale), ""});
        return out;
    };
    const double answer = emu::current_scale(300.0f, emu::e4m3()).scale;
    s.exercise = numeric_exercise(answer,
                                  {{"inverse", 300.0 / emu::e4m3().max_finite},
                                   {"e5m2", emu::e5m2().max_finite / 300.0},
                                   {"fnuz", emu::e4m3fnuz().max_finite / 300.0},
                                   {"normalised", 1.0 / 300.0}},
                                  1e-6);
    return s;
}

// Which number is stored, and which way it is applied: the scale multiplies before the
// cast, its inverse turns codes back into values. Each convention's read-back computed.
StepLogic scale_or_scale_inv() {
    StepLogic s;
    s.id = "scale-or-scale-inv";
    s.titles = {{"table conventions", {"amax"}}};
    s.parameters = {real("amax", 1e-3, 1e4, 3000.0, true),
                    choice("format", format_choice_names({&emu::e4m3(), &emu::e5m2()}), "e4m3")};
    s.no_training_reason = "This step reads stored scales; every training recipe applies them the right way round.";
    s.run = [](const Parameters& p, RunContext&) {
        const float amax = float(p.real("amax"));
        const emu::Format& f = emu::format_by_name(p.choice("format"));
        StepOutput out;
        const emu::ScalePair pair = emu::current_scale(amax, f);
        const double value = emu::decode(f, emu::encode(f, amax * pair.scale));  // the amax element, in scaled units
        // MX: the block's E8M0 scale X is stored and multiplies the element.
        std::vector<float> block(32, amax / 8);
        block[0] = amax;
        const emu::QuantizedTensor mx = emu::quantize_mx(block, 1, 32, f, emu::MxScaleRule::OcpFloor);
        const double mx_element = emu::decode(f, mx.codes[0]);
        const double mx_x = mx.block_scale_inv[0];
        // NVFP4: E2M1 elements, an E4M3 block scale and the tensor's factor S_enc = 6 * 448 / amax.
        std::vector<float> nv(16, amax / 8);
        nv[0] = amax;
        const emu::QuantizedTensor q = emu::quantize_nvfp4(nv, 1, 16);
        const double nv_back = q.dequantize()[0];
        const double s_enc = 1.0 / double(q.tensor_scale_inv);
        Table t{"conventions", {}, {}, {}};
        t.title_values = {{"amax", number_text(amax)}};
        t.columns = {{"convention"},
                     {"number stored"},
                     {"read back as"},
                     {"value", ColumnType::Number},
                     {"over the true value", ColumnType::Number, "x"}};
        auto row = [&](std::string who, std::string stored, std::string rule, double v) {
            t.rows.push_back({std::move(who), std::move(stored), std::move(rule), v, v / amax});
        };
        row("per tensor, as Transformer Engine stores it", "scale_inv = " + number_text(pair.scale_inv),
            "value(code) x scale_inv", value * pair.scale_inv);
        row("the same number taken for the scale", "scale_inv = " + number_text(pair.scale_inv),
            "value(code) / scale_inv", value / pair.scale_inv);
        row("OCP MX, one E8M0 X per 32", "X = " + number_text(mx_x), "element x X", mx_element * mx_x);
        row("the same X taken for a multiplier before the cast", "X = " + number_text(mx_x), "element / X",
            mx_element / mx_x);
        row("NVFP4, the tensor's factor kept as 1 / S_enc", "1/S_enc = " + number_text(1.0 / s_enc),
            "element x block scale x (1/S_enc)", nv_back);
        row("NVFP4, S_enc read as if it were 1 / S_enc", "S_enc = " + number_text(s_enc),
            "element x block scale x S_enc", nv_back * s_enc * s_enc);
        out.tables.push_back(std::move(t));
        // Each convention's reading: the right one is the exercise's answer.
        out.gives_answer.table_columns = {{"conventions", "value"}, {"conventions", "over the true value"}};
        out.metrics.push_back({"scale (multiplies before the cast)", pair.scale, ""});
        out.metrics.push_back({"scale_inv (multiplies the value read back)", pair.scale_inv, ""});
        out.metrics.push_back(
            {"factor off when scale_inv is taken for the scale", 1.0 / (double(pair.scale_inv) * pair.scale_inv), "x"});
        return out;
    };
    const emu::ScalePair pair = emu::current_scale(300.0f, emu::e4m3());
    const double stored = emu::decode(emu::e4m3(), 0x7E);
    s.exercise = numeric_exercise(
        stored * pair.scale_inv,
        {{"divided", stored / pair.scale_inv}, {"scaled-units", stored}, {"scale-again", stored * pair.scale}}, 1e-6);
    s.exercise->values = {{"stored", number_text(stored)}, {"scale_inv", number_text(pair.scale_inv)}};
    return s;
}

StepLogic gradients() {
    StepLogic s;
    s.id = "gradients";
    s.titles = {{"figure flushed-by-width"}, {"figure error-by-width"}, {"table census", {"decades"}}};
    s.parameters = {integer("decades", 1, 14, 8), choice("training_format", kFp8, "e5m2")};
    s.training_parameters = {"training_format"};
    s.training_mapping =
        "The gradient format is the training cast of the output gradients (inputs and weights "
        "stay E4M3), with delayed scaling.";
    s.training = [](const Parameters& p, emu::Experiment& e) {
        e.numerics.formats.gradient = &emu::format_by_name(p.choice("training_format"));
    };
    s.run = [](const Parameters& p, RunContext& ctx) {
        const int chosen = int(p.integer("decades"));
        StepOutput out;
        Figure lost;
        lost.id = "flushed-by-width";
        lost.x_axis = {"decades spanned by the gradient magnitudes", AxisScale::Linear};
        lost.y_axis = {"flushed to zero (%)", AxisScale::Linear};
        Figure error = lost;
        error.id = "error-by-width";
        error.y_axis = {"RMS relative error", AxisScale::Log10};
        Table t{"census", {}, census_columns(), {}};
        t.title_values = {{"decades", std::to_string(chosen)}};
        int colour = 0;
        for (const emu::Format* f : {&emu::e4m3(), &emu::e5m2()}) {
            Series flushed = line(std::string(f->display_name), {}, {}, colour);
            Series rms = line(std::string(f->display_name), {}, {}, colour++);
            for (int d = 1; d <= 14; ++d) {
                if (ctx.cancel_requested()) throw RunCancelled();
                const std::vector<float> g = sample_tensor(TensorKind::Gradients, kElements / 4, ctx.seed(), d);
                const float scale = emu::current_scale(emu::amax(g), *f).scale;
                const QuantizationCensus c = census(*f, g, scale);
                flushed.x.push_back(d);
                flushed.y.push_back(100 * c.flushed);
                rms.x.push_back(d);
                rms.y.push_back(c.rms_relative_error);
            }
            lost.series.push_back(std::move(flushed));
            error.series.push_back(std::move(rms));
            const std::vector<float> g = sample_tensor(TensorKind::Gradients, kElements, ctx.seed(), chosen);
            const float scale = emu::current_scale(emu::amax(g), *f).scale;
            t.rows.push_back(census_row(std::string(f->display_name), scale, census(*f, g, scale)));
        }
        out.figures.push_back(std::move(lost));
        out.figures.push_back(std::move(error));
        out.tables.push_back(std::move(t));
        out.metrics.push_back({"E4M3 range: largest / smallest subnormal, in decades",
                               std::log10(emu::e4m3().max_finite / emu::e4m3().min_subnormal), ""});
        out.metrics.push_back({"E5M2 range: largest / smallest subnormal, in decades",
                               std::log10(emu::e5m2().max_finite / emu::e5m2().min_subnormal), ""});
        return out;
    };
    // The answer comes from the same census the step draws.
    const std::vector<float> g = sample_tensor(TensorKind::Gradients, kElements, 1, 8);
    const double e4m3 = census(emu::e4m3(), g, emu::current_scale(emu::amax(g), emu::e4m3()).scale).flushed;
    const double e5m2 = census(emu::e5m2(), g, emu::current_scale(emu::amax(g), emu::e5m2()).scale).flushed;
    const std::size_t answer = e5m2 < e4m3 ? 1 : e4m3 < e5m2 ? 0 : 2;
    s.exercise = choice_exercise({"e4m3", "e5m2", "same"}, answer);
    return s;
}

}  // namespace

LabLogic why_scale_lab() {
    return {"why-scale", {against_the_grid(), per_tensor_scaling(), scale_or_scale_inv(), gradients()}};
}

}  // namespace fp8lab::labs
