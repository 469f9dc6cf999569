// SPDX-License-Identifier: Apache-2.0
// Lab 2, representable values: the number line per binade, error by magnitude, and the
// fixed-grid "simulation" of FP8 next to the real thing.
#include <algorithm>
#include <cmath>

#include "emulator/formats/convert.hpp"
#include "emulator/formats/value_grid.hpp"
#include "labs/experiments/format_text.hpp"
#include "labs/logic/lab_logic.hpp"

namespace fp8lab::labs {
namespace {

using emu::Format;

const std::vector<std::string> kSmallFormats = element_format_names();

StepLogic number_line() {
    StepLogic s;
    s.id = "number-line";
    s.titles = {{"figure binades"}, {"table binades"}, {"figure positive-values", {"format"}}};
    s.parameters = {choice("format", kSmallFormats, "e4m3")};
    s.training_parameters = {"format"};
    s.training_mapping =
        "The format is every training cast's element format (inputs, weights and gradients), "
        "with delayed scaling.";
    s.training = every_cast_in_format;
    s.run = [](const Parameters& p, RunContext&) {
        const Format& f = emu::format_by_name(p.choice("format"));
        std::vector<emu::RepresentableValue> values = emu::representable_values(f);
        std::erase_if(values, [](const emu::RepresentableValue& v) { return v.value <= 0; });
        StepOutput out;

        Figure all;
        all.id = "positive-values";
        all.title_values = {{"format", std::string(f.display_name)}};
        all.x_axis = {"value", AxisScale::Log2};
        all.y_axis = {"", AxisScale::Linear, 0.0, 1.0};
        all.y_axis.show_ticks = false;
        Series lines;
        lines.kind = SeriesKind::VerticalLines;
        lines.name = std::string(f.display_name);
        for (const auto& v : values) lines.x.push_back(v.value);
        all.series.push_back(std::move(lines));
        all.annotations.push_back({f.min_normal, 0.5, "smallest normal"});
        out.figures.push_back(std::move(all));

        // One row per binade [2^e, 2^(e+1)); subnormals share the row of the lowest one.
        Figure rows;
        rows.id = "binades";
        rows.x_axis = {"value / 2^e (position inside its binade)", AxisScale::Linear, 0.0, 2.0};
        rows.y_axis = {"binade exponent e", AxisScale::Linear};
        Table t{"binades", {}, {}, {}};
        t.columns = {{"binade"}, {"values", ColumnType::Integer}, {"gap between neighbours", ColumnType::Number}};
        Series normal = scatter("normal", {}, {}, 0), subnormal = scatter("subnormal", {}, {}, 1);
        for (int e = f.min_exponent; e <= f.max_exponent; ++e) {
            std::int64_t count = 0;
            for (const auto& v : values) {
                const bool in_binade = v.value >= std::ldexp(1.0, e) && v.value < std::ldexp(1.0, e + 1);
                if (!in_binade) continue;
                normal.x.push_back(std::ldexp(v.value, -e));
                normal.y.push_back(e);
                ++count;
            }
            t.rows.push_back({"[2^" + std::to_string(e) + ", 2^" + std::to_string(e + 1) + ")", count,
                              emu::ulp(f, std::ldexp(1.0, e))});
        }
        std::int64_t sub_count = 0;
        for (const auto& v : values) {
            if (v.value >= f.min_normal) break;
            subnormal.x.push_back(std::ldexp(v.value, -f.min_exponent));
            subnormal.y.push_back(f.min_exponent - 1);
            ++sub_count;
        }
        if (sub_count)
            t.rows.insert(t.rows.begin(), std::vector<Cell>{"subnormal, below 2^" + std::to_string(f.min_exponent),
                                                            sub_count, f.min_subnormal});
        rows.series = {normal, subnormal};
        out.figures.push_back(std::move(rows));
        out.tables.push_back(std::move(t));
        out.metrics.push_back({"positive values", double(values.size()), ""});
        // The count of every binade is the exercise's (the dots of the figure can be counted).
        if (&f == &emu::e4m3()) out.gives_answer.table_columns = {{"binades", "values"}};
        return out;
    };
    s.exercise = numeric_exercise(std::ldexp(1.0, emu::e4m3().mantissa_bits),
                                  {{"without-one", std::ldexp(1.0, emu::e4m3().mantissa_bits) - 1},
                                   {"exponent-bits", std::ldexp(1.0, emu::e4m3().exponent_bits)}});
    return s;
}

// The worst relative error of round-to-nearest at every magnitude: for each pair of
// neighbours the worst case is their midpoint, off by half the gap. Below half the
// smallest value everything rounds to zero: relative error 1. Exact, not sampled.
Series error_envelope(std::string name, const std::vector<double>& positive_values, int colour) {
    Series s = line(std::move(name), {}, {}, colour);
    s.x.push_back(positive_values.front() / 4);
    s.y.push_back(1.0);
    s.x.push_back(positive_values.front() / 2);
    s.y.push_back(1.0);
    for (std::size_t i = 0; i + 1 < positive_values.size(); ++i) {
        const double lo = positive_values[i], hi = positive_values[i + 1];
        const double mid = (lo + hi) / 2;
        s.x.push_back(mid);
        s.y.push_back((hi - lo) / 2 / mid);
    }
    return s;
}

std::vector<double> positive_values(const Format& f) {
    std::vector<double> v;
    for (const emu::RepresentableValue& r : emu::representable_values(f))
        if (r.value > 0) v.push_back(r.value);
    return v;
}

// Largest midpoint error over the neighbours inside [lo, hi).
double worst_between(const std::vector<double>& values, double lo, double hi) {
    double worst = 0;
    for (std::size_t i = 0; i + 1 < values.size(); ++i) {
        const double mid = (values[i] + values[i + 1]) / 2;
        if (values[i] >= lo && values[i + 1] <= hi) worst = std::max(worst, (values[i + 1] - values[i]) / 2 / mid);
    }
    return worst;
}

StepLogic error_by_magnitude() {
    StepLogic s;
    s.id = "error-by-magnitude";
    s.titles = {{"figure relative-error"}, {"table worst-error"}};
    std::vector<std::string> choices = {"all"};
    choices.insert(choices.end(), kSmallFormats.begin(), kSmallFormats.end());
    s.parameters = {choice("format", choices, "all")};
    s.training_parameters = {"format"};
    s.training_mapping =
        "One format (not all) is every training cast's element format (inputs, weights and gradients), "
        "with delayed scaling.";
    s.training = every_cast_in_format;
    s.run = [](const Parameters& p, RunContext& context) {
        std::vector<const Format*> formats;
        for (const std::string& name : kSmallFormats)
            if (p.choice("format") == "all" || p.choice("format") == name)
                formats.push_back(&emu::format_by_name(name));
        StepOutput out;
        Figure fig;
        fig.id = "relative-error";
        fig.x_axis = {"|x|", AxisScale::Log2};
        fig.y_axis = {"relative error |q(x) - x| / |x|", AxisScale::Log10};
        Table t{"worst-error", {}, {}, {}};
        t.columns = {{"format"},
                     {"normal range", ColumnType::Number},
                     {"bound 2^-(m+1)", ColumnType::Number},
                     {"subnormal range", ColumnType::Number}};
        int colour = 0;
        for (const Format* f : formats) {
            context.report_progress(double(colour) / double(formats.size()), std::string(f->display_name));
            const std::vector<double> values = positive_values(*f);
            fig.series.push_back(error_envelope(std::string(f->display_name), values, colour));
            const double bound = std::ldexp(1.0, -(f->mantissa_bits + 1));
            t.rows.push_back({std::string(f->display_name), worst_between(values, f->min_normal, f->max_finite), bound,
                              worst_between(values, 0, f->min_normal)});
            if (formats.size() == 1) {
                Series b = line("bound 2^-(m+1)", {f->min_normal, f->max_finite}, {bound, bound}, 7);
                b.dashed = true;
                fig.series.push_back(std::move(b));
                fig.annotations.push_back({f->min_normal, bound * 2, "smallest normal"});
            }
            ++colour;
        }
        out.figures.push_back(std::move(fig));
        out.tables.push_back(std::move(t));
        return out;
    };
    const double gap = emu::ulp(emu::e4m3(), 16.0);
    s.exercise = numeric_exercise(gap, {{"fixed-grid", 0.125}, {"binade-below", gap / 2}, {"binade-above", gap * 2}});
    return s;
}

StepLogic fixed_grid() {
    StepLogic s;
    s.id = "fixed-grid";
    s.titles = {{"figure fixed-grid-error"}, {"table examples"}};
    s.parameters = {integer("grid", 2, 64, 8)};
    s.no_training_reason = "A fixed-point grid is not a format a training cast can use; this step only contrasts it.";
    s.run = [](const Parameters& p, RunContext&) {
        const Format& f = emu::e4m3();
        const double step = 1.0 / double(p.integer("grid"));
        auto grid_round = [&](double x) {
            return std::clamp(std::nearbyint(x / step) * step, -f.max_finite, f.max_finite);
        };
        StepOutput out;
        Figure fig;
        fig.id = "fixed-grid-error";
        fig.x_axis = {"|x|", AxisScale::Log2};
        fig.y_axis = {"worst relative error", AxisScale::Log10};
        fig.series.push_back(error_envelope(std::string(f.display_name), positive_values(f), 0));
        std::vector<double> grid_values;
        for (std::int64_t k = 1; double(k) * step <= f.max_finite; ++k) grid_values.push_back(double(k) * step);
        Series grid = error_envelope("fixed grid of 1/" + std::to_string(p.integer("grid")), grid_values, 5);
        grid.dashed = true;
        fig.series.push_back(std::move(grid));
        out.figures.push_back(std::move(fig));
        // How much of E4M3's range each keeps: sampled evenly in log2 across it.
        const std::vector<double> x = log_spaced(f.min_subnormal / 2, f.max_finite, 4096);
        std::int64_t flushed = 0;
        for (double v : x) flushed += grid_round(v) == 0;

        Table t{"examples", {}, {}, {}};
        t.columns = {{"x", ColumnType::Number},
                     {"fixed grid", ColumnType::Number},
                     {"E4M3", ColumnType::Number},
                     {"E4M3 relative error", ColumnType::Number}};
        // Not 0.3: what E4M3 makes of it is the exercise. 0.0005 is below half E4M3's least
        // subnormal: flushed to zero, relative error 1.
        for (double v : {0.0005, 0.001, 0.01, 0.05, 0.7, 3.3, 100.3, 300.0, 1000.0})
            t.rows.push_back({v, grid_round(v), emu::round_to_format(f, v), emu::rounding_error(f, v).rel_error});
        out.tables.push_back(std::move(t));
        std::int64_t e4m3_flushed = 0;
        for (double v : x) e4m3_flushed += emu::round_to_format(f, v) == 0;
        out.metrics.push_back({"of E4M3's range (log-uniform) the grid flushes to zero",
                               100.0 * double(flushed) / double(x.size()), "%"});
        out.metrics.push_back(
            {"of the same samples E4M3 flushes to zero", 100.0 * double(e4m3_flushed) / double(x.size()), "%"});
        return out;
    };
    const double right = emu::round_to_format(emu::e4m3(), 0.3);
    s.exercise = numeric_exercise(right, {{"grid-down", 0.25}, {"grid-up", 0.375}, {"exact", 0.3}});
    return s;
}

}  // namespace

LabLogic values_lab() { return {"values", {number_line(), error_by_magnitude(), fixed_grid()}}; }

}  // namespace fp8lab::labs
