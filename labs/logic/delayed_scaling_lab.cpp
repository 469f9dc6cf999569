// SPDX-License-Identifier: Apache-2.0
// Lab 6, delayed scaling: the amax history and the scale it gives per step for a tensor
// that drifts and spikes; history length, max against most_recent, margin; overflow
// when a spike arrives before the history has seen it; replaying the amax trace that a
// real FP8 training run recorded on a GPU (assets/) under other settings; data-parallel
// ranks that scale a shared tensor without the all-reduce of amax.
#include <algorithm>
#include <cmath>
#include <fstream>
#include <map>
#include <set>

#include "emulator/scaling/amax_trace.hpp"
#include "emulator/formats/bulk.hpp"
#include "emulator/scaling/current_scaling.hpp"
#include "emulator/formats/convert.hpp"
#include "emulator/scaling/delayed_scaling.hpp"
#include "labs/framework/asset_files.hpp"
#include "labs/experiments/recorded_csv.hpp"
#include "labs/logic/lab_logic.hpp"
#include "labs/experiments/sample_tensors.hpp"

namespace fp8lab::labs {
namespace {

constexpr int kTraceSteps = 200;
constexpr int kSpikeStep = 60, kJumpStep = 140;
constexpr const char* kTrace = "h100-small-delayed.amax.csv";

// A tensor whose amax drifts up by a decade over the run, with noise, one spike of
// `spike` times for the single step kSpikeStep, and a level shift of `spike` times from kJumpStep on.
std::vector<float> drifting_amax(double spike) {
    std::vector<float> a(kTraceSteps);
    for (int t = 0; t < kTraceSteps; ++t) {
        double v = 0.5 * std::pow(10.0, t / double(kTraceSteps)) * (1 + 0.08 * std::sin(t * 1.7) * std::cos(t * 0.31));
        if (t == kSpikeStep) v *= spike;
        if (t >= kJumpStep) v *= spike;
        a[std::size_t(t)] = float(v);
    }
    return a;
}

emu::DelayedScalingConfig delayed_config(const Parameters& p) {
    emu::DelayedScalingConfig c;
    c.history_length = int(p.integer("history"));
    c.algorithm = parse_enum_or_throw<emu::AmaxAlgorithm>(p.choice("algorithm"), "algorithm");
    c.margin = int(p.integer("margin"));
    return c;
}

std::vector<ParameterSpec> delayed_parameters() {
    return {integer("history", 1, 1024, 16), choice("algorithm", enum_choice_names<emu::AmaxAlgorithm>(), "max"),
            integer("margin", 0, 4, 0)};
}

void map_delayed(const Parameters& p, emu::Experiment& e) {
    emu::set_recipe(e, emu::Fp8Recipe::Delayed);
    e.numerics.delayed = delayed_config(p);
}

const char* kMapping =
    "History length, amax algorithm and margin feed the training panel's delayed scaling "
    "(every tensor, hybrid formats).";

// Replays one amax sequence: the scale each step uses, the largest amax it can hold.
struct Replay {
    std::vector<float> scale, bound;
    std::vector<int> overflow_steps;  // amax * scale past max
    std::vector<int> clipped_steps;   // of those, the ones whose amax rounds past max (the rest round back to it)
    double worst = 0;                 // the largest amax / bound: how far past the scale's reach
};
Replay replay(const std::vector<float>& amax, const emu::Format& f, const emu::DelayedScalingConfig& c) {
    emu::DelayedScaling ds(f, c);
    Replay r;
    for (std::size_t t = 0; t < amax.size(); ++t) {
        const float s = ds.scale().scale;
        r.scale.push_back(s);
        r.bound.push_back(float(f.max_finite / s));
        if (double(amax[t]) * s > f.max_finite) {
            r.overflow_steps.push_back(int(t));
            // Nearest-even sends values up to the midpoint past max back to max (464 in
            // E4M3): only an amax that rounds past it loses its largest values.
            const emu::ConvertOptions unsaturated{emu::RoundingMode::NearestEven, emu::Saturation::None};
            if (!std::isfinite(emu::round_to_format(f, double(amax[t] * s), unsaturated)))
                r.clipped_steps.push_back(int(t));
        }
        r.worst = std::max(r.worst, double(amax[t]) * s / f.max_finite);
        ds.record_amax(amax[t]);
        ds.update();
    }
    return r;
}

Figure amax_figure(std::string id, TitleValues title_values, const std::vector<float>& amax, const Replay& r) {
    Figure fig;
    fig.id = std::move(id);
    fig.title_values = std::move(title_values);
    fig.x_axis = {"step", AxisScale::Linear};
    fig.y_axis = {"magnitude", AxisScale::Log10};
    // Framed around the amaxes: step 0's scale of 1 would otherwise stretch the axis
    // over many empty decades (its bound runs off the top).
    float lo = INFINITY, hi = 0;
    for (float a : amax)
        if (a > 0) {
            lo = std::min(lo, a);
            hi = std::max(hi, a);
        }
    if (hi > 0) {
        fig.y_axis.min = lo / 2.0;
        fig.y_axis.max = hi * 4.0;
    }
    const std::vector<double> x = step_numbers(amax.size());
    fig.series.push_back(line("amax of the step", x, {amax.begin(), amax.end()}, 0));
    Series bound{
        SeriesKind::Stairs, "largest amax the scale holds (max / scale)", 1, x, {r.bound.begin(), r.bound.end()}};
    fig.series.push_back(std::move(bound));
    Series clipped = scatter("clipped: amax rounds past the format's max", {}, {}, 5);
    Series absorbed = scatter("past the bound, absorbed by rounding", {}, {}, 3);
    for (int t : r.overflow_steps) {
        Series& into = std::binary_search(r.clipped_steps.begin(), r.clipped_steps.end(), t) ? clipped : absorbed;
        into.x.push_back(t);
        into.y.push_back(amax[std::size_t(t)]);
    }
    if (!clipped.x.empty()) fig.series.push_back(std::move(clipped));
    if (!absorbed.x.empty()) fig.series.push_back(std::move(absorbed));
    return fig;
}

StepLogic history_window() {
    StepLogic s;
    s.id = "history";
    s.titles = {{"figure headroom"}, {"table settings", {"format"}}, {"figure amax-and-bound", {"spike", "jump"}}};
    s.parameters = delayed_parameters();
    s.parameters.push_back(choice("format", format_choice_names({&emu::e4m3(), &emu::e5m2()}), "e4m3"));
    s.parameters.push_back(real("spike", 1.0, 64.0, 8.0, true));
    s.training_parameters = {"history", "algorithm", "margin"};
    s.training_mapping = kMapping;
    s.training = map_delayed;
    s.run = [](const Parameters& p, RunContext&) {
        const emu::Format& f = emu::format_by_name(p.choice("format"));
        const emu::DelayedScalingConfig c = delayed_config(p);
        emu::validate(c);
        const std::vector<float> amax = drifting_amax(p.real("spike"));
        const Replay r = replay(amax, f, c);
        StepOutput out;
        out.figures.push_back(amax_figure(
            "amax-and-bound", {{"spike", std::to_string(kSpikeStep)}, {"jump", std::to_string(kJumpStep)}}, amax, r));
        Figure headroom;
        headroom.id = "headroom";
        headroom.x_axis = {"step", AxisScale::Linear};
        headroom.y_axis = {"log2(bound / amax)", AxisScale::Linear};
        Series h = line("headroom", step_numbers(amax.size()), {}, 2);
        for (std::size_t t = 0; t < amax.size(); ++t) h.y.push_back(std::log2(double(r.bound[t]) / amax[t]));
        headroom.series.push_back(std::move(h));
        headroom.series.push_back(line("no headroom", {0, double(kTraceSteps - 1)}, {0, 0}, 7));
        headroom.series.back().dashed = true;
        out.figures.push_back(std::move(headroom));

        // The same tensor under other settings, to compare at a glance.
        Table t{"settings", {}, {}, {}};
        t.title_values = {{"format", std::string(f.name)}};
        t.columns = {{"history"},
                     {"algorithm"},
                     {"margin", ColumnType::Integer},
                     {"steps past the bound", ColumnType::Integer},
                     {"of them clipped", ColumnType::Integer},
                     {"first clipped at step"},
                     {"worst amax / bound", ColumnType::Number}};
        for (int margin : {0, 1})
            for (int history : {1, 16, 128})
                for (auto algo : {emu::AmaxAlgorithm::Max, emu::AmaxAlgorithm::MostRecent}) {
                    if (history == 1 && algo == emu::AmaxAlgorithm::MostRecent) continue;  // max over one is the same
                    const Replay other = replay(amax, f, {history, algo, margin});
                    t.rows.push_back({std::to_string(history), std::string(emu::amax_algorithm_name(algo)),
                                      std::int64_t(margin), std::int64_t(other.overflow_steps.size()),
                                      std::int64_t(other.clipped_steps.size()),
                                      other.clipped_steps.empty() ? std::string("none")
                                                                  : std::to_string(other.clipped_steps.front()),
                                      other.worst});
                }
        out.tables.push_back(std::move(t));
        out.metrics.push_back({"steps past the bound with these settings", double(r.overflow_steps.size()), ""});
        out.metrics.push_back({"of them clipped (the rest round back to max)", double(r.clipped_steps.size()), ""});
        return out;
    };
    // How many steps one spike keeps the scale down, from the emulator itself.
    std::vector<float> flat(kTraceSteps, 1.0f);
    flat[kSpikeStep] = 8.0f;
    const Replay with = replay(flat, emu::e4m3(), {16, emu::AmaxAlgorithm::Max, 0});
    const Replay without = replay(std::vector<float>(kTraceSteps, 1.0f), emu::e4m3(), {16, emu::AmaxAlgorithm::Max, 0});
    int lowered = 0;
    for (int t = 0; t < kTraceSteps; ++t) lowered += with.scale[std::size_t(t)] != without.scale[std::size_t(t)];
    s.exercise = numeric_exercise(
        lowered, {{"one-fewer", double(lowered - 1)}, {"one-more", double(lowered + 1)}, {"most-recent", 1}});
    s.exercise->values = {{"spike_step", std::to_string(kSpikeStep)}};
    return s;
}

emu::AmaxTrace load_gpu_trace() {
    const std::string path = asset_path(kTrace);
    std::ifstream in(path);
    if (!in) throw std::runtime_error("cannot read " + path);
    return emu::read_amax_trace(in, path);
}

StepLogic trace_replay() {
    StepLogic s;
    s.id = "trace-replay";
    s.titles = {{"table per-tensor"}, {"figure replayed", {"tensor", "device"}}};
    s.parameters = delayed_parameters();
    s.parameters.push_back(choice("formats", enum_choice_names<emu::FormatRecipe>(), "hybrid"));
    s.parameters.push_back(
        choice("tensor", {"fc1.input", "fc1.weight", "fc1.grad_output", "fc2.input", "fc2.weight", "fc2.grad_output"},
               "fc2.grad_output"));
    s.training_parameters = {"history", "algorithm", "margin", "formats"};
    s.training_mapping =
        "History length, amax algorithm, margin and formats (hybrid: E5M2 gradients; e4m3: every "
        "tensor) feed the experiment's delayed scaling.";
    s.training = [](const Parameters& p, emu::Experiment& e) {
        map_delayed(p, e);
        const emu::FormatRecipe formats = parse_enum_or_throw<emu::FormatRecipe>(p.choice("formats"), "formats");
        e.numerics.formats.gradient = &emu::format_for(formats, emu::TensorRole::GradOutput);
    };
    s.run = [](const Parameters& p, RunContext&) {
        const emu::AmaxTrace trace = load_gpu_trace();
        const emu::DelayedScalingConfig c = delayed_config(p);
        emu::validate(c);
        const emu::FormatRecipe formats = parse_enum_or_throw<emu::FormatRecipe>(p.choice("formats"), "formats");
        const std::vector<emu::ReplayRow> rows = emu::replay_delayed_scaling(trace, formats, c);
        const std::string& tensor = p.choice("tensor");
        std::vector<float> amax;
        Replay chosen;
        struct Overflows {
            std::int64_t past = 0, clipped = 0, first = -1;
        };
        std::map<std::string, Overflows> per_tensor;
        std::set<std::uint64_t> steps_with_overflow, steps_clipped;
        for (const emu::ReplayRow& r : rows) {
            Overflows& o = per_tensor[r.tensor];
            if (r.amax_overflows) {
                ++o.past;
                if (o.first < 0) o.first = std::int64_t(r.step);
                steps_with_overflow.insert(r.step);
            }
            if (r.amax_clips) {
                ++o.clipped;
                steps_clipped.insert(r.step);
            }
            if (r.tensor != tensor) continue;
            const emu::Format& f = emu::format_for(formats, emu::role_of_tensor(r.tensor));
            if (r.amax_overflows) chosen.overflow_steps.push_back(int(amax.size()));
            amax.push_back(r.amax);
            chosen.bound.push_back(float(f.max_finite / r.scale));
        }
        StepOutput out;
        out.figures.push_back(amax_figure(
            "replayed", {{"tensor", tensor}, {"device", header_value(trace.header, "device")}}, amax, chosen));
        Table t{"per-tensor", {}, {}, {}};
        t.columns = {{"tensor"},
                     {"format"},
                     {"steps with amax past the bound", ColumnType::Integer},
                     {"of them clipped (past the rounding back to max)", ColumnType::Integer},
                     {"first past at step"}};
        for (const auto& [name, v] : per_tensor)
            t.rows.push_back({name, std::string(emu::format_for(formats, emu::role_of_tensor(name)).name), v.past,
                              v.clipped, v.first < 0 ? std::string("none") : std::to_string(v.first)});
        out.tables.push_back(std::move(t));
        out.metrics.push_back({"steps in the trace", double(rows.empty() ? 0 : rows.back().step + 1), ""});
        out.metrics.push_back({"steps where some tensor passed its bound", double(steps_with_overflow.size()), ""});
        out.metrics.push_back({"steps where some tensor's amax was clipped", double(steps_clipped.size()), ""});
        // The exercise asks for the clipped steps of the run's own settings.
        if (c.history_length == 16 && c.algorithm == emu::AmaxAlgorithm::Max && c.margin == 0 &&
            formats == emu::FormatRecipe::Hybrid) {
            out.gives_answer.metrics = {"steps where some tensor's amax was clipped"};
            out.gives_answer.table_columns = {{"per-tensor", "of them clipped (past the rounding back to max)"}};
        }
        out.notes.push_back("Recorded by " + header_value(trace.header, "source") + " on " +
                            header_value(trace.header, "device") +
                            "; the run's configuration: " + header_value(trace.header, "configuration"));
        return out;
    };
    // The exercise's answer is the replay of the run's own settings.
    std::int64_t answer = -1, past_bound = -1;
    try {
        const std::vector<emu::ReplayRow> rows =
            emu::replay_delayed_scaling(load_gpu_trace(), emu::FormatRecipe::Hybrid, {16, emu::AmaxAlgorithm::Max, 0});
        std::set<std::uint64_t> clipped, past;
        for (const emu::ReplayRow& r : rows) {
            if (r.amax_clips) clipped.insert(r.step);
            if (r.amax_overflows) past.insert(r.step);
        }
        answer = std::int64_t(clipped.size());
        past_bound = std::int64_t(past.size());
    } catch (const std::exception&) {
        // Without the asset the step itself reports the missing file when it runs.
    }
    s.exercise = numeric_exercise(double(answer), {{"none", 0}, {"past-bound", double(past_bound)}});
    return s;
}

}  // namespace

// Ranks each scale their own shard of one tensor (sequence parallelism, FSDP). Gathered as one FP8
// tensor it has one scale_inv: without an all-reduce of amax, every shard but the one
// whose scale_inv is attached reads back off by the ratio of the scales.
StepLogic amax_across_ranks() {
    StepLogic s;
    s.id = "amax-across-ranks";
    s.titles = {{"figure rank-errors"}, {"table ranks", {"format"}}};
    s.parameters = {integer("ranks", 2, 64, 8),
                    choice("format", format_choice_names({&emu::e4m3(), &emu::e5m2()}), "e4m3")};
    s.no_training_reason = "The training experiment runs on one device; this step simulates the ranks on the CPU.";
    s.run = [](const Parameters& p, RunContext& ctx) {
        const int ranks = int(p.integer("ranks"));
        const emu::Format& f = emu::format_by_name(p.choice("format"));
        constexpr std::size_t kShard = 4096;
        std::vector<std::vector<float>> shards;
        float global_amax = 0;
        for (int r = 0; r < ranks; ++r) {
            shards.push_back(sample_tensor(TensorKind::Activations, kShard, ctx.seed() + std::uint64_t(r)));
            global_amax = std::max(global_amax, emu::amax(shards.back()));
        }
        const emu::ScalePair shared = emu::current_scale(global_amax, f);
        const emu::ScalePair first = emu::current_scale(emu::amax(shards[0]), f);
        // The shard as the gathered tensor reads it: codes made with `scale`, read with `scale_inv`.
        auto relative_error = [&](const std::vector<float>& x, float scale, float scale_inv) {
            std::vector<std::uint8_t> codes(x.size());
            std::vector<float> back(x.size());
            emu::quantize_span(f, x, scale, codes);
            emu::dequantize_span(f, codes, scale_inv, back);
            double error = 0, norm = 0;
            for (std::size_t i = 0; i < x.size(); ++i) {
                error += (double(back[i]) - x[i]) * (double(back[i]) - x[i]);
                norm += double(x[i]) * x[i];
            }
            return std::sqrt(error / norm);
        };
        Table t{"ranks", {}, {}, {}};
        t.title_values = {{"format", std::string(f.display_name)}};
        t.columns = {{"rank", ColumnType::Integer},
                     {"amax", ColumnType::Number},
                     {"its own scale", ColumnType::Number},
                     {"error, own scale, read with rank 0's scale_inv", ColumnType::Number, "%"},
                     {"error, all-reduced amax", ColumnType::Number, "%"}};
        Figure fig;
        fig.id = "rank-errors";
        fig.x_axis = {"rank", AxisScale::Linear};
        fig.y_axis = {"relative RMS error", AxisScale::Log10};
        Series without{SeriesKind::Bars, "own scales, rank 0's scale_inv", 0},
            with{SeriesKind::Bars, "all-reduced amax", 1};
        without.bar_width = with.bar_width = 0.4;
        double worst_without = 0, worst_with = 0;
        for (int r = 0; r < ranks; ++r) {
            const float amax = emu::amax(shards[std::size_t(r)]);
            const emu::ScalePair own = emu::current_scale(amax, f);
            const double e_without = relative_error(shards[std::size_t(r)], own.scale, first.scale_inv);
            const double e_with = relative_error(shards[std::size_t(r)], shared.scale, shared.scale_inv);
            t.rows.push_back({std::int64_t(r), double(amax), double(own.scale), 100 * e_without, 100 * e_with});
            without.x.push_back(r - 0.2);
            without.y.push_back(e_without);
            with.x.push_back(r + 0.2);
            with.y.push_back(e_with);
            worst_without = std::max(worst_without, e_without);
            worst_with = std::max(worst_with, e_with);
        }
        fig.series = {without, with};
        StepOutput out;
        out.tables.push_back(std::move(t));
        out.figures.push_back(std::move(fig));
        out.metrics.push_back({"worst shard's error without the all-reduce", 100 * worst_without, "%"});
        out.metrics.push_back({"worst shard's error with the all-reduce", 100 * worst_with, "%"});
        return out;
    };
    const emu::ScalePair r0 = emu::current_scale(200.0f, emu::e4m3()), r1 = emu::current_scale(400.0f, emu::e4m3());
    s.exercise = numeric_exercise(double(r1.scale) * r0.scale_inv,
                                  {{"inverse", double(r0.scale) * r1.scale_inv}, {"no-error", 1.0}}, 1e-6);
    return s;
}

LabLogic delayed_scaling_lab() { return {"delayed-scaling", {history_window(), trace_replay(), amax_across_ranks()}}; }

}  // namespace fp8lab::labs
