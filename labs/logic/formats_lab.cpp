// SPDX-License-Identifier: Apache-2.0
// Lab 1, FP8 formats: bits to value, special values, OCP E4M3 against the IEEE-style layout and FNUZ.
#include <algorithm>
#include <cctype>
#include <cmath>

#include "emulator/formats/convert.hpp"
#include "emulator/formats/value_grid.hpp"
#include "labs/experiments/format_text.hpp"
#include "labs/logic/lab_logic.hpp"

namespace fp8lab::labs {
namespace {

using emu::Format;

Table bits_table(const Format& source, std::uint32_t code) {
    Table t{"fields", {}, {}, {}};
    t.columns = {{"format"},   {"code", ColumnType::Code},    {"sign"},   {"exponent"},
                 {"mantissa"}, {"value", ColumnType::Number}, {"formula"}};
    const double value = emu::decode(source, code);
    for (const Format* f : {&source, &emu::fp16(), &emu::bf16(), &emu::fp32()}) {
        if (f != &source && f->name == source.name) continue;
        // The others hold the source's value exactly: FP8 values fit in FP16, BF16 and FP32.
        const std::uint32_t c = f == &source ? code : emu::encode(*f, value);
        const CodeFields fields = code_fields(*f, c);
        t.rows.push_back({std::string(f->display_name), std::int64_t(c), fields.sign_bits, fields.exponent_bits,
                          fields.mantissa_bits, emu::decode(*f, c), value_formula(*f, c)});
    }
    return t;
}

Figure value_of_every_code(std::uint32_t selected, const Format& selected_format) {
    Figure fig;
    fig.id = "value-by-code";
    fig.x_axis = {"code", AxisScale::Linear, 0.0, 255.0};
    fig.y_axis = {"value", AxisScale::SymLog};
    fig.y_axis.linear_threshold = 0.01;
    int colour = 0;
    for (const Format* f : {&emu::e4m3(), &emu::e5m2()}) {
        Series s = scatter(std::string(f->display_name), {}, {}, colour++);
        for (std::uint32_t c = 0; c < 256; ++c) {
            const double v = emu::decode(*f, c);
            if (!std::isfinite(v)) continue;  // NaN and Inf have no place on a value axis
            s.x.push_back(c);
            s.y.push_back(v);
        }
        fig.series.push_back(std::move(s));
    }
    const double v = emu::decode(selected_format, selected);
    if (std::isfinite(v))
        fig.annotations.push_back(
            {double(selected), v, "code " + cell_text({"", ColumnType::Code}, std::int64_t(selected))});
    return fig;
}

// The code the exercise decodes by hand, and the step's starting code.
constexpr std::uint32_t kExerciseCode = 0x5A;

StepLogic bits_to_value() {
    StepLogic s;
    s.id = "bits-to-value";
    s.titles = {{"table fields"}, {"figure value-by-code"}};
    s.parameters = {choice("format", format_choice_names({&emu::e4m3(), &emu::e5m2()}), "e4m3"),
                    integer("code", 0, 255, kExerciseCode)};
    s.training_parameters = {"format"};
    s.training_mapping =
        "The format is every training cast's element format (inputs, weights and gradients), "
        "with delayed scaling.";
    s.training = every_cast_in_format;
    s.run = [](const Parameters& p, RunContext&) {
        const Format& f = emu::format_by_name(p.choice("format"));
        const auto code = std::uint32_t(p.integer("code"));
        StepOutput out;
        out.tables.push_back(bits_table(f, code));
        out.figures.push_back(value_of_every_code(code, f));
        out.metrics.push_back({"value", emu::decode(f, code), ""});
        if (code == kExerciseCode && &f == &emu::e4m3()) {
            out.gives_answer.metrics = {"value"};
            out.gives_answer.table_columns = {{"fields", "value"}, {"fields", "formula"}};
        }
        return out;
    };
    // 0x5A in E4M3 is 0.1011.010: 2^(11-7) x 1.25 = 20.
    const Format& f = emu::e4m3();
    const double right = emu::decode(f, kExerciseCode);
    s.exercise = numeric_exercise(right, {{"bias-too-large", std::ldexp(1.25, 11 - (f.bias + 1))},
                                          {"bias-too-small", std::ldexp(1.25, 11 - (f.bias - 1))},
                                          {"no-leading-one", std::ldexp(0.25, 11 - f.bias)},
                                          {"no-exponent", std::ldexp(1.0 + 2.0 / 8.0, 0)}});
    return s;
}

std::string overflow_result(const Format& f) {
    emu::ConvertOptions o;
    o.saturation = emu::Saturation::None;
    const double v = emu::decode(f, emu::encode(f, 1e300, o));
    return std::isnan(v) ? "NaN" : std::isinf(v) ? "Inf" : number_text(v);
}

StepLogic special_values() {
    StepLogic s;
    s.id = "special-values";
    s.titles = {{"figure codes-on-specials"}, {"table specials"}};
    s.no_training_reason = "This step lists codes; it has no setting a training run could take.";
    s.run = [](const Parameters&, RunContext&) {
        StepOutput out;
        Table t{"specials", {}, {}, {}};
        t.columns = {{"format"},
                     {"zeros", ColumnType::Integer},
                     {"infinity codes", ColumnType::Integer},
                     {"NaN codes", ColumnType::Integer},
                     {"largest finite", ColumnType::Number},
                     {"overflow, saturating"},
                     {"overflow, not saturating"}};
        Figure fig;
        fig.id = "codes-on-specials";
        fig.y_axis = {"codes spent on NaN and Inf", AxisScale::Linear, 0.0};
        fig.y_axis.label = "% of all codes";
        Series nan_bars, inf_bars;
        nan_bars.kind = inf_bars.kind = SeriesKind::Bars;
        nan_bars.name = "NaN";
        inf_bars.name = "Inf";
        nan_bars.colour = 0;
        inf_bars.colour = 1;
        nan_bars.bar_width = inf_bars.bar_width = 0.4;
        for (const Format* f : {&emu::e4m3(), &emu::e4m3_ieee(), &emu::e5m2(), &emu::fp16(), &emu::bf16()}) {
            std::int64_t zeros = 0, infs = 0, nans = 0;
            for (std::uint32_t c = 0; c < f->code_count(); ++c) {
                const double v = emu::decode(*f, c);
                zeros += v == 0;
                infs += std::isinf(v);
                nans += std::isnan(v);
            }
            emu::ConvertOptions sat;
            t.rows.push_back({std::string(f->display_name), zeros, infs, nans, f->max_finite,
                              number_text(emu::round_to_format(*f, 1e300, sat)), overflow_result(*f)});
            const double i = double(fig.x_axis.categories.size());
            std::string short_name(f->name);
            std::transform(short_name.begin(), short_name.end(), short_name.begin(), ::toupper);
            fig.x_axis.categories.push_back(short_name);
            nan_bars.x.push_back(i - 0.2);
            nan_bars.y.push_back(100.0 * double(nans) / double(f->code_count()));
            inf_bars.x.push_back(i + 0.2);
            inf_bars.y.push_back(100.0 * double(infs) / double(f->code_count()));
        }
        fig.series = {nan_bars, inf_bars};
        out.tables.push_back(std::move(t));
        out.gives_answer.table_columns = {{"specials", "overflow, not saturating"}};  // E4M3's is the exercise's
        out.figures.push_back(std::move(fig));
        return out;
    };
    s.exercise = choice_exercise({"inf", "nan", "max", "wraps"}, 1);
    return s;
}

Table top_binade(const Format& f) {
    Table t{"top-" + std::string(f.name), {}, {}, {}};
    t.title_key = "top-binade";
    t.title_values = {{"format", std::string(f.display_name)}};
    t.columns = {{"code", ColumnType::Code}, {"exponent"}, {"mantissa"}, {"value", ColumnType::Number}};
    for (std::uint32_t c = 0x70; c <= 0x7F; ++c) {
        const CodeFields fields = code_fields(f, c);
        t.rows.push_back({std::int64_t(c), fields.exponent_bits, fields.mantissa_bits, emu::decode(f, c)});
    }
    return t;
}

StepLogic ocp_versus_ieee() {
    StepLogic s;
    s.id = "ocp-vs-ieee";
    s.titles = {{"figure top-values"}, {"table top-binade", {"format"}}};
    s.no_training_reason = "This step compares three layouts of E4M3; training casts use the OCP encodings.";
    s.run = [](const Parameters&, RunContext&) {
        StepOutput out;
        const Format* layouts[] = {&emu::e4m3(), &emu::e4m3_ieee(), &emu::e4m3fnuz()};
        for (const Format* f : layouts) out.tables.push_back(top_binade(*f));
        Figure fig;
        fig.id = "top-values";
        fig.x_axis = {"value", AxisScale::Linear, 60.0, 470.0};
        fig.y_axis = {"", AxisScale::Linear, -0.6, 2.6};
        // One row per layout: where they share values the dots line up, and the OCP row
        // goes on where the other two stop.
        for (const Format* f : layouts) {
            const double row = double(fig.y_axis.categories.size());
            Series v;
            v.kind = SeriesKind::Scatter;
            v.name = std::string(f->display_name);
            v.colour = int(row);
            for (const emu::RepresentableValue& r : emu::representable_values(*f))
                if (r.value >= 64) {
                    v.x.push_back(r.value);
                    v.y.push_back(row);
                }
            fig.series.push_back(std::move(v));
            fig.annotations.push_back({f->max_finite, row + 0.3, "max " + number_text(f->max_finite)});
            out.metrics.push_back({std::string(f->display_name) + " max", f->max_finite, ""});
            std::string short_name(f->name);
            std::transform(short_name.begin(), short_name.end(), short_name.begin(), ::toupper);
            fig.y_axis.categories.push_back(short_name);
        }
        out.figures.push_back(std::move(fig));
        out.gives_answer.metrics = {std::string(emu::e4m3().display_name) + " max"};
        out.gives_answer.table_columns = {{"top-" + std::string(emu::e4m3().name), "value"}};
        out.gives_answer.figure_annotations = {"top-values"};
        return out;
    };
    const Format& ocp = emu::e4m3();
    const Format& ieee = emu::e4m3_ieee();
    s.exercise = numeric_exercise(ocp.max_finite, {{"ieee-layout", ieee.max_finite},
                                                   {"nan-code", std::ldexp(1.875, 15 - ocp.bias)},
                                                   {"fnuz-bias", std::ldexp(1.75, 15 - (ocp.bias + 1))},
                                                   {"infinity", INFINITY}});
    return s;
}

StepLogic range_and_precision() {
    StepLogic s;
    s.id = "range-and-precision";
    s.titles = {{"figure dynamic-range"}, {"table range"}};
    s.no_training_reason = "This step tabulates every format; it has no setting a training run could take.";
    s.run = [](const Parameters&, RunContext&) {
        StepOutput out;
        Table t{"range", {}, {}, {}};
        t.columns = {{"format"},
                     {"bits", ColumnType::Integer},
                     {"exponent bits", ColumnType::Integer},
                     {"mantissa bits", ColumnType::Integer},
                     {"bias", ColumnType::Integer},
                     {"max", ColumnType::Number},
                     {"min normal", ColumnType::Number},
                     {"min subnormal", ColumnType::Number},
                     {"epsilon", ColumnType::Number},
                     {"decimal digits", ColumnType::Number},
                     {"binades", ColumnType::Number}};
        Figure fig;
        fig.id = "dynamic-range";
        fig.x_axis = {"magnitude", AxisScale::Log2};
        fig.y_axis = {"", AxisScale::Linear, -0.5};
        fig.legend = false;
        const std::vector<const Format*> formats = {&emu::e4m3(), &emu::e5m2(), &emu::fp16(), &emu::bf16(),
                                                    &emu::fp32()};
        fig.y_axis.max = double(formats.size()) - 0.5;
        for (std::size_t i = 0; i < formats.size(); ++i) {
            const Format& f = *formats[i];
            const double epsilon = std::ldexp(1.0, -f.mantissa_bits);
            t.rows.push_back({std::string(f.display_name), std::int64_t(f.total_bits), std::int64_t(f.exponent_bits),
                              std::int64_t(f.mantissa_bits), std::int64_t(f.bias), f.max_finite, f.min_normal,
                              f.min_subnormal, epsilon, (f.mantissa_bits + 1) * std::log10(2.0),
                              std::log2(f.max_finite / f.min_subnormal)});
            const double y = double(i);
            Series sub = line("", {f.min_subnormal, f.min_normal}, {y, y}, int(i));
            sub.dashed = true;
            sub.line_width = 3;
            Series normal = line(std::string(f.display_name), {f.min_normal, f.max_finite}, {y, y}, int(i));
            normal.line_width = 3;
            fig.series.push_back(std::move(sub));
            fig.series.push_back(std::move(normal));
            fig.y_axis.categories.push_back(std::string(f.display_name));
        }
        out.tables.push_back(std::move(t));
        out.figures.push_back(std::move(fig));
        return out;
    };
    const double ratio = emu::e5m2().max_finite / emu::e4m3().max_finite;
    s.exercise = numeric_exercise(ratio, {{"doubling", 2},
                                          {"two-to-the-sixteen", 65536.0 / emu::e4m3().max_finite},
                                          {"fnuz", emu::e5m2().max_finite / emu::e4m3fnuz().max_finite}});
    return s;
}

}  // namespace

LabLogic formats_lab() {
    return {"formats", {bits_to_value(), special_values(), ocp_versus_ieee(), range_and_precision()}};
}

}  // namespace fp8lab::labs
