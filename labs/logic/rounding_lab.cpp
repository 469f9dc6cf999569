// SPDX-License-Identifier: Apache-2.0
// Lab 3, rounding and saturation: the rounding modes side by side, the bias of summing
// small updates and stochastic rounding removing it, saturation against overflow, and
// converting from float64 in one rounding instead of two.
#include <cmath>
#include <limits>

#include "emulator/formats/convert.hpp"
#include "emulator/formats/value_grid.hpp"
#include "labs/experiments/format_text.hpp"
#include "labs/logic/lab_logic.hpp"

namespace fp8lab::labs {
namespace {

using emu::ConvertOptions;
using emu::Format;
using emu::RoundingMode;
using emu::Saturation;

double rounded(const Format& f, double x, RoundingMode mode, Saturation saturation = Saturation::Finite,
               std::uint64_t seed = 0, std::uint64_t index = 0) {
    ConvertOptions o;
    o.rounding = mode;
    o.saturation = saturation;
    o.seed = seed;
    return emu::round_to_format(f, x, o, index);
}

constexpr RoundingMode kDeterministicModes[] = {RoundingMode::NearestEven, RoundingMode::NearestAway,
                                                RoundingMode::TowardZero, RoundingMode::Up, RoundingMode::Down};

StepLogic modes() {
    StepLogic s;
    s.id = "modes";
    s.titles = {{"table x-in-every-mode"}, {"figure staircases", {"format"}}};
    s.parameters = {choice("format", element_format_names(), "e4m3"), real("x", -400.0, 400.0, 1.0625, false)};
    s.no_training_reason =
        "This step rounds one value every way; a training cast rounds to nearest-even or "
        "stochastically (the stochastic-rounding step maps that).";
    s.run = [](const Parameters& p, RunContext&) {
        const Format& f = emu::format_by_name(p.choice("format"));
        const double x = p.real("x");
        StepOutput out;
        // The staircases over two gaps of [1, 2): every mode maps an interval to one value.
        const double gap = emu::ulp(f, 1.0);
        Figure fig;
        fig.id = "staircases";
        fig.title_values = {{"format", std::string(f.display_name)}};
        fig.x_axis = {"x", AxisScale::Linear, 1.0 - gap / 2, 1.0 + 2.5 * gap};
        fig.y_axis = {"converted value", AxisScale::Linear};
        int colour = 0;
        for (RoundingMode mode : kDeterministicModes) {
            Series st = line(std::string(emu::rounding_mode_name(mode)), {}, {}, colour++);
            const int samples = 400;
            for (int i = 0; i <= samples; ++i) {
                const double v = 1.0 - gap / 2 + 3.0 * gap * i / samples;
                st.x.push_back(v);
                st.y.push_back(rounded(f, v, mode));
            }
            if (mode != RoundingMode::NearestEven) st.dashed = true;
            fig.series.push_back(std::move(st));
        }
        fig.annotations.push_back({1.0 + gap / 2, 1.0 + gap / 2, "a tie"});
        out.figures.push_back(std::move(fig));

        Table t{"x-in-every-mode", {}, {}, {}};
        t.columns = {
            {"mode"}, {"result", ColumnType::Number}, {"error", ColumnType::Number}, {"code", ColumnType::Code}};
        for (RoundingMode mode : kDeterministicModes) {
            ConvertOptions o;
            o.rounding = mode;
            const std::uint32_t code = emu::encode(f, x, o);
            const double value = emu::decode(f, code);
            t.rows.push_back({std::string(emu::rounding_mode_name(mode)), value, value - x, std::int64_t(code)});
        }
        out.tables.push_back(std::move(t));
        // At the exercise's tie in its format every mode's result gives the answer away.
        if (&f == &emu::e4m3() && x == 1.0 + emu::ulp(f, 1.0) / 2)
            out.gives_answer.table_columns = {
                {"x-in-every-mode", "result"}, {"x-in-every-mode", "error"}, {"x-in-every-mode", "code"}};
        return out;
    };
    const Format& f = emu::e4m3();
    const double tie = 1.0 + emu::ulp(f, 1.0) / 2;
    const double even = rounded(f, tie, RoundingMode::NearestEven);
    s.exercise =
        numeric_exercise(even, {{"ties-away", rounded(f, tie, RoundingMode::NearestAway)}, {"unrounded", tie}});
    return s;
}

// The running sum w <- round(w + delta), from `start`, in format f.
std::vector<double> running_sum(const Format& f, double start, double delta, int steps, RoundingMode mode,
                                std::uint64_t seed) {
    std::vector<double> w{start};
    for (int i = 0; i < steps; ++i) w.push_back(rounded(f, w.back() + delta, mode, Saturation::Finite, seed, i));
    return w;
}

StepLogic stochastic() {
    StepLogic s;
    s.id = "stochastic";
    s.titles = {{"table final-values"}, {"figure running-sum", {"delta", "steps", "format"}}};
    s.parameters = {
        choice("format", format_choice_names({&emu::bf16(), &emu::fp16(), &emu::e4m3(), &emu::e5m2()}), "bf16"),
        real("delta", 1e-5, 0.5, 1e-3, true), integer("steps", 10, 20000, 1000),
        choice("training_rounding", enum_choice_names({emu::RoundingMode::NearestEven, emu::RoundingMode::Stochastic}),
               "stochastic")};
    s.training_parameters = {"training_rounding"};
    s.training_mapping =
        "Training rounding is the rounding of the gradients' casts (nearest-even or stochastic, "
        "with the emulator's counter-based random bits).";
    s.training = [](const Parameters& p, emu::Experiment& e) {
        e.numerics.rounding.gradient =
            parse_enum_or_throw<emu::RoundingMode>(p.choice("training_rounding"), "training_rounding");
    };
    s.run = [](const Parameters& p, RunContext& context) {
        const Format& f = emu::format_by_name(p.choice("format"));
        const double delta = p.real("delta");
        const int steps = int(p.integer("steps"));
        StepOutput out;
        Figure fig;
        fig.id = "running-sum";
        fig.title_values = {
            {"delta", number_text(delta)}, {"steps", std::to_string(steps)}, {"format", std::string(f.display_name)}};
        fig.x_axis = {"step", AxisScale::Linear};
        fig.y_axis = {"value", AxisScale::Linear};
        std::vector<double> x(std::size_t(steps) + 1), exact(x.size());
        for (std::size_t i = 0; i < x.size(); ++i) {
            x[i] = double(i);
            exact[i] = 1.0 + delta * double(i);
        }
        fig.series.push_back(line("exact", x, exact, 7));
        fig.series.back().dashed = true;
        Table t{"final-values", {}, {}, {}};
        t.columns = {
            {"rounding"}, {"final value", ColumnType::Number}, {"relative to the exact sum", ColumnType::Number}};
        t.rows.push_back({std::string("exact"), exact.back(), 0.0});
        const std::vector<double> nearest = running_sum(f, 1.0, delta, steps, RoundingMode::NearestEven, 0);
        fig.series.push_back(line("nearest-even", x, nearest, 0));
        t.rows.push_back({std::string("nearest-even"), nearest.back(), nearest.back() / exact.back() - 1});
        context.report_progress(0.25, "stochastic rounding");
        double mean = 0;
        const int seeds = 3;
        for (int seed = 1; seed <= seeds; ++seed) {
            const std::vector<double> sr = running_sum(f, 1.0, delta, steps, RoundingMode::Stochastic, seed);
            fig.series.push_back(line("stochastic, seed " + std::to_string(seed), x, sr, 1 + seed));
            t.rows.push_back({"stochastic, seed " + std::to_string(seed), sr.back(), sr.back() / exact.back() - 1});
            mean += sr.back() / seeds;
        }
        out.figures.push_back(std::move(fig));
        out.tables.push_back(std::move(t));
        out.metrics.push_back({"gap of " + std::string(f.display_name) + " at 1", emu::ulp(f, 1.0), ""});
        out.metrics.push_back({"mean of the stochastic runs, relative to exact", mean / exact.back() - 1, ""});
        // The exercise's sum (BF16, 1000 additions of 0.001): the table's end values are its answer.
        if (&f == &emu::bf16() && delta == 1e-3 && steps == 1000)
            out.gives_answer.table_columns = {{"final-values", "final value"},
                                              {"final-values", "relative to the exact sum"}};
        return out;
    };
    const double lost = running_sum(emu::bf16(), 1.0, 1e-3, 1000, RoundingMode::NearestEven, 0).back();
    s.exercise = numeric_exercise(lost, {{"exact-sum", 2.0}, {"next-value", 1.0 + emu::ulp(emu::bf16(), 1.0)}});
    return s;
}

StepLogic saturation() {
    StepLogic s;
    s.id = "saturation";
    s.titles = {{"table near-max"}, {"figure past-max", {"format"}}};
    s.parameters = {choice("format", format_choice_names({&emu::e4m3(), &emu::e5m2()}), "e4m3"),
                    choice("training_saturation", enum_choice_names<emu::Saturation>(), "finite")};
    s.training_parameters = {"format", "training_saturation"};
    s.training_mapping =
        "The format is every training cast's element format; saturation none lets an overflow "
        "become Inf (E5M2) or NaN (E4M3) in training, finite clips it to the largest value.";
    s.training = [](const Parameters& p, emu::Experiment& e) {
        emu::set_all_formats(e, emu::format_by_name(p.choice("format")));
        e.numerics.saturation =
            parse_enum_or_throw<emu::Saturation>(p.choice("training_saturation"), "training_saturation");
    };
    s.run = [](const Parameters& p, RunContext&) {
        const Format& f = emu::format_by_name(p.choice("format"));
        const double max = f.max_finite;
        StepOutput out;
        // The smallest overflowing input under nearest-even: bisect between max and 2 max.
        double lo = max, hi = 2 * max;
        for (int i = 0; i < 200; ++i) {
            const double mid = (lo + hi) / 2;
            if (std::isfinite(rounded(f, mid, RoundingMode::NearestEven, Saturation::None)))
                lo = mid;
            else
                hi = mid;
        }
        Figure fig;
        fig.id = "past-max";
        fig.title_values = {{"format", std::string(f.display_name)}};
        fig.x_axis = {"x", AxisScale::Linear, 0.5 * max, 1.5 * max};
        fig.y_axis = {"converted value", AxisScale::Linear, 0.0, 1.2 * max};
        Series sat = line("saturating (satfinite)", {}, {}, 0), none = line("not saturating", {}, {}, 1);
        none.dashed = true;
        for (int i = 0; i <= 600; ++i) {
            const double x = 0.5 * max + max * i / 600.0;
            sat.x.push_back(x);
            sat.y.push_back(rounded(f, x, RoundingMode::NearestEven, Saturation::Finite));
            const double n = rounded(f, x, RoundingMode::NearestEven, Saturation::None);
            if (std::isfinite(n)) {
                none.x.push_back(x);
                none.y.push_back(n);
            }
        }
        fig.series = {sat, none};
        const bool has_inf = std::isinf(rounded(f, 2 * max, RoundingMode::NearestEven, Saturation::None));
        fig.annotations.push_back({hi, 0.25 * max, has_inf ? "past here: Inf" : "past here: NaN"});
        out.figures.push_back(std::move(fig));

        Table t{"near-max", {}, {}, {}};
        t.columns = {{"x (shortest float64)"}, {"saturating", ColumnType::Number}, {"not saturating"}};
        for (double x : {0.9 * max, max, lo, hi, 1.1 * max, 2 * max, std::numeric_limits<double>::infinity()}) {
            const double n = rounded(f, x, RoundingMode::NearestEven, Saturation::None);
            t.rows.push_back({shortest_text(x), rounded(f, x, RoundingMode::NearestEven, Saturation::Finite),
                              std::isnan(n) ? std::string("NaN") : shortest_text(n)});
        }
        out.tables.push_back(std::move(t));
        // The first tie past max: max plus half the top binade's gap. Nearest-even sends it to
        // the even neighbour, which is max itself in E4M3 (max's code is even) but the next
        // binade, past max, in E5M2: the two formats differ exactly at this input.
        const double midpoint = max + std::ldexp(0.5, f.max_exponent - f.mantissa_bits);
        out.metrics.push_back({"midpoint between max and the next step up", midpoint, ""});
        out.metrics.push_back({"the midpoint rounds to (not saturating)",
                               rounded(f, midpoint, RoundingMode::NearestEven, Saturation::None), ""});
        // What the saturating cast makes of values past max is the exercise's answer.
        out.gives_answer.table_columns = {{"near-max", "saturating"}};
        return out;
    };
    const double saturated = rounded(emu::e4m3(), 500.0, RoundingMode::NearestEven, Saturation::Finite);
    s.exercise = numeric_exercise(saturated,
                                  {{"power-of-two", 512.0},
                                   {"nan-code", 480.0},
                                   {"fnuz", emu::e4m3fnuz().max_finite},
                                   {"nan", rounded(emu::e4m3(), 500.0, RoundingMode::NearestEven, Saturation::None)}});
    return s;
}

StepLogic double_rounding() {
    StepLogic s;
    s.id = "double-rounding";
    s.titles = {{"table examples"}, {"figure just-above-the-tie", {"tie"}}};
    s.parameters = {choice("format", element_format_names(), "e4m3")};
    s.no_training_reason =
        "Double rounding is about float64 inputs; a training cast converts each float32 value "
        "once.";
    s.run = [](const Parameters& p, RunContext&) {
        const Format& f = emu::format_by_name(p.choice("format"));
        const double mid = 1.0 + emu::ulp(f, 1.0) / 2;  // the tie between 1 and the next value
        const double half_f32_ulp = std::ldexp(1.0, -24);
        StepOutput out;
        Figure fig;
        fig.id = "just-above-the-tie";
        fig.title_values = {{"tie", number_text(mid)}};
        fig.x_axis = {"x - tie (float64)", AxisScale::SymLog, -4 * half_f32_ulp, 4 * half_f32_ulp};
        fig.x_axis.linear_threshold = half_f32_ulp / 8;
        fig.y_axis = {"converted value", AxisScale::Linear};
        Series direct = line("float64 -> " + std::string(f.display_name) + " (one rounding)", {}, {}, 0);
        Series twice = line("float64 -> float32 -> " + std::string(f.display_name), {}, {}, 1);
        twice.dashed = true;
        for (int i = -400; i <= 400; ++i) {
            const double offset = 4 * half_f32_ulp * i / 400.0;
            const double x = mid + offset;
            direct.x.push_back(offset);
            direct.y.push_back(rounded(f, x, RoundingMode::NearestEven));
            twice.x.push_back(offset);
            twice.y.push_back(emu::round_to_format(f, double(float(x))));
        }
        fig.series = {direct, twice};
        out.figures.push_back(std::move(fig));

        Table t{"examples", {}, {}, {}};
        t.columns = {{"x (float64)"},
                     {"float32(x)"},
                     {"one rounding", ColumnType::Number},
                     {"two roundings", ColumnType::Number}};
        const auto above_tie = [&](double v) {
            return v == mid ? std::string("the tie") : "tie + 2^" + std::to_string(std::ilogb(v - mid));
        };
        for (int k : {30, 26, 25, 24, 23}) {
            const double x = mid + std::ldexp(1.0, -k);
            t.rows.push_back({above_tie(x), above_tie(double(float(x))), rounded(f, x, RoundingMode::NearestEven),
                              emu::round_to_format(f, double(float(x)))});
        }
        out.tables.push_back(std::move(t));
        out.metrics.push_back({"width of the window where the two disagree (float64 above the tie)", half_f32_ulp, ""});
        // The first row is the exercise's x, and the others show where it lands.
        out.gives_answer.table_columns = {{"examples", "one rounding"}, {"examples", "two roundings"}};
        return out;
    };
    const Format& f = emu::e4m3();
    const double x = 1.0 + emu::ulp(f, 1.0) / 2 + std::ldexp(1.0, -30);
    s.exercise =
        numeric_exercise(rounded(f, x, RoundingMode::NearestEven),
                         {{"through-float32", emu::round_to_format(f, double(float(x)))}, {"unrounded", 1.0625}});
    return s;
}

}  // namespace

LabLogic rounding_lab() { return {"rounding", {modes(), stochastic(), saturation(), double_rounding()}}; }

}  // namespace fp8lab::labs
