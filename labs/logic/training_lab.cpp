// SPDX-License-Identifier: Apache-2.0
// Lab 8, training an MLP in BF16 and FP8: loss curves side by side on the CPU emulator or
// the GPU, what breaks (no scaling, E4M3 gradients, a one-step history) and what helps
// (first and last layer in BF16), and the measured crossover where FP8 starts to pay off.
#include <algorithm>
#include <optional>
#include <cmath>
#include <fstream>

#include "emulator/models/mlp/mlp_trainer.hpp"
#include "labs/framework/asset_files.hpp"
#include "labs/experiments/crossover.hpp"
#include "labs/experiments/nvfp4_options.hpp"
#include "labs/experiments/recipe_code.hpp"
#include "labs/experiments/seed_comparison.hpp"
#include "labs/experiments/variant_comparison.hpp"
#include "labs/logic/lab_logic.hpp"
#include "labs/experiments/training_comparison.hpp"

namespace fp8lab::labs {
namespace {

constexpr const char* kCrossoverAsset = "h100-crossover.csv";

void map_loss_curves(const Parameters& p, emu::Experiment& e) {
    emu::set_recipe(e, parse_enum_or_throw<emu::Fp8Recipe>(p.choice("recipe"), "recipe"));
    const emu::FormatRecipe formats = parse_enum_or_throw<emu::FormatRecipe>(p.choice("formats"), "formats");
    if (!emu::recipe(e.numerics.recipe).formats_fixed)
        e.numerics.formats.gradient = &emu::format_for(formats, emu::TensorRole::GradOutput);
    e.numerics.delayed.history_length = int(p.integer("history"));
    e.steps = int(p.integer("steps"));
    e.task.batches = int(p.integer("batches"));
    e.optimizer.learning_rate = float(p.real("lr"));
}

emu::Experiment experiment_of(const Parameters& p) {
    emu::Experiment e = lab_experiment();
    map_loss_curves(p, e);
    return e;
}

StepLogic loss_curves() {
    StepLogic s;
    s.id = "loss-curves";
    s.backends = {Backend::Cpu, Backend::Gpu};
    s.parameters = {choice("recipe", enum_choice_names<emu::Fp8Recipe>(), "delayed"),
                    choice("formats", enum_choice_names<emu::FormatRecipe>(), "hybrid"),
                    integer("history", 1, 1024, 16), integer("steps", 20, 1000, 300),
                    // Sixteen batches: the task, not memorisation, sets the loss (one batch,
                    // learnt by heart, shows the formats' rounding floor instead).
                    integer("batches", 1, 64, 16), real("lr", 1e-4, 1e-2, 3e-3, true)};
    s.training_parameters = {"recipe", "formats", "history", "steps", "batches", "lr"};
    s.training_mapping =
        "Recipe, formats (hybrid: E5M2 gradients), history length, steps, distinct batches and "
        "learning rate are the experiment's.";
    s.training = map_loss_curves;
    s.run = [](const Parameters& p, RunContext& ctx) {
        emu::Experiment e = experiment_of(p);
        e.task.seed = e.init_seed = ctx.seed();  // the step's seed reaches the runs
        return run_training_comparison(e, ctx);
    };
    // The paired reading of the run the step shows: its runs share their seeds, so a gap
    // smaller than the seeds' spread is still a finding when every seed shows it.
    s.exercise = choice_exercise({"spread", "too-few", "paired", "rounding"}, 2);
    return s;
}

// A step's experiment: the labs' defaults, the step's mapping of its parameters, and the
// step's seed (which reaches every run of its comparison).
emu::Experiment step_base(const Parameters& p, RunContext& ctx, void (*map)(const Parameters&, emu::Experiment&)) {
    emu::Experiment e = lab_experiment();
    e.task.seed = e.init_seed = ctx.seed();
    map(p, e);
    return e;
}

// The what-breaks step's model: three linear layers, so that "first and last layer in
// BF16" leaves one in FP8; narrower, so that its seven runs take about as long as six of
// the default model. The step's runs and the training panel both start from it.
void map_what_breaks(const Parameters& p, emu::Experiment& e) {
    e.steps = int(p.integer("steps"));
    e.numerics.delayed.history_length = 16;
    e.model.hidden_layers = 2;
    e.model.hidden = 128;
}

StepLogic what_breaks() {
    StepLogic s;
    s.id = "what-breaks";
    s.titles = {{"figure variants"}, {"table final"}, {"figure ratio-to-bf16"}, {"figure seed-ratios"}};
    s.parameters = {integer("steps", 20, 400, 100)};
    s.training_parameters = {"steps"};
    s.training_mapping =
        "Steps is the experiment's, on the step's three-layer model; the panel trains BF16 against "
        "the recipe (delayed, hybrid, history 16).";
    s.training = map_what_breaks;
    s.run = [](const Parameters& p, RunContext& ctx) {
        const emu::Experiment base = step_base(p, ctx, map_what_breaks);
        std::vector<TrainingVariant> variants;
        variants.push_back({"BF16", emu::with_precision(base, emu::Precision::Bf16)});
        variants.push_back({"FP8, delayed, hybrid (the recipe)", base});
        emu::Experiment v = base;
        v.numerics.scaling = false;
        variants.push_back({"FP8 without scaling", v});
        v = base;
        v.numerics.formats.gradient = &emu::e4m3();
        variants.push_back({"FP8 with E4M3 gradients", v});
        v.numerics.scaling = false;  // the one that breaks: E4M3 cannot reach small gradients unscaled
        variants.push_back({"FP8, E4M3 gradients, no scaling", v});
        v = base;
        v.numerics.delayed = {1, emu::AmaxAlgorithm::MostRecent, 0};
        variants.push_back({"FP8, history of one step", v});
        v = base;
        v.numerics.edge_layers_bf16 = true;
        variants.push_back({"FP8, first and last layer BF16", v});

        return compare_variants(variants, ctx);
    };
    s.exercise = choice_exercise({"underflow", "overflow", "coarser", "nan"}, 0);
    return s;
}

// The outlier task: one row in 32 holds massive values in two channels. BF16 against the
// per-tensor recipes and the block recipes, all from the same seeds; the table counts the
// activations that the casts flush to zero or leave in subnormals.
void map_outliers(const Parameters& p, emu::Experiment& e) {
    e.task.kind = emu::TaskKind::OutlierFeatures;
    e.task.outlier_scale = float(p.real("outlier-scale"));
    e.task.batches = 64;  // enough distinct data that the task, not memorisation, sets the loss
    e.tokens = 64;        // half the labs' rows: the finding holds (on every seed) at half the time
    e.steps = int(p.integer("steps"));
}

StepLogic outliers() {
    StepLogic s;
    s.id = "outliers";
    s.titles = {{"figure variants"}, {"table final"}, {"figure ratio-to-bf16"}, {"figure seed-ratios"}};
    s.parameters = {real("outlier-scale", 1e2, 1e6, 1e5, true), integer("steps", 50, 600, 200)};
    s.training_parameters = {"outlier-scale", "steps"};
    s.training_mapping =
        "The outlier task with this outlier scale, and the steps, are the experiment's; the panel trains BF16 "
        "against its recipe (delayed by default). The GPU trainer does not run this task yet.";
    s.training = map_outliers;
    s.run = [](const Parameters& p, RunContext& ctx) {
        const emu::Experiment base = step_base(p, ctx, map_outliers);
        std::vector<TrainingVariant> variants;
        variants.push_back({"BF16", emu::with_precision(base, emu::Precision::Bf16)});
        const std::pair<emu::Fp8Recipe, const char*> recipes[] = {
            {emu::Fp8Recipe::Delayed, "FP8, delayed (per tensor)"},
            {emu::Fp8Recipe::Current, "FP8, current (per tensor)"},
            {emu::Fp8Recipe::MxRceil, "MXFP8 (blocks of 32)"},
            {emu::Fp8Recipe::Blockwise, "FP8 blockwise (blocks of 128)"}};
        for (const auto& [recipe, name] : recipes) {
            emu::Experiment v = base;
            emu::set_recipe(v, recipe);
            variants.push_back({name, v});
        }
        return compare_variants(variants, ctx, CastCounts::Activations);
    };
    s.exercise = choice_exercise({"confined", "more-bits", "power-of-two", "overflow"}, 0);
    return s;
}

// NVFP4 training as Transformer Engine's NVFP4BlockScaling runs it, then with each of its
// options taken away: the step's runs and the training panel start from the same model.
void map_nvfp4_training(const Parameters& p, emu::Experiment& e) {
    map_what_breaks(p, e);
    emu::set_recipe(e, emu::Fp8Recipe::Nvfp4);
    e.numerics.nvfp4 = {p.toggle("weight_tiles"), p.toggle("stochastic_gradients"), p.toggle("hadamard_wgrad")};
    e.numerics.edge_layers_bf16 = p.toggle("edge_layers_bf16");
}

StepLogic nvfp4_training() {
    StepLogic s;
    s.id = "nvfp4-training";
    s.text_values = nvfp4_options_text_values();
    s.titles = {{"figure nvfp4-variants"},
                {"table options"},
                {"table final"},
                {"figure ratio-to-bf16"},
                {"figure seed-ratios"}};
    s.parameters = {integer("steps", 20, 1000, 400), toggle("weight_tiles", true), toggle("stochastic_gradients", true),
                    toggle("hadamard_wgrad", true), toggle("edge_layers_bf16", false)};
    s.training_parameters = {"steps", "weight_tiles", "stochastic_gradients", "hadamard_wgrad", "edge_layers_bf16"};
    s.training_mapping =
        "NVFP4 with the options as toggled, on the step's three-layer model. The step shows the full "
        "recipe, each option taken away, and the toggled combination when it is none of those.";
    s.training = map_nvfp4_training;
    s.run = [](const Parameters& p, RunContext& ctx) {
        Parameters full = p;
        for (const char* option : {"weight_tiles", "stochastic_gradients", "hadamard_wgrad"}) full.set(option, true);
        full.set("edge_layers_bf16", false);
        emu::Experiment recipe = lab_experiment();
        recipe.task.seed = recipe.init_seed = ctx.seed();
        map_nvfp4_training(full, recipe);
        std::vector<TrainingVariant> variants;
        variants.push_back({"BF16", emu::with_precision(recipe, emu::Precision::Bf16)});
        variants.push_back({"NVFP4, every option (TE's recipe)", recipe});
        emu::Experiment v = recipe;
        v.numerics.nvfp4.stochastic_gradients = false;
        variants.push_back({"NVFP4, gradients rounded to nearest", v});
        v = recipe;
        v.numerics.nvfp4.hadamard_wgrad = false;
        variants.push_back({"NVFP4, no Hadamard transform", v});
        v = recipe;
        v.numerics.nvfp4.weight_tiles = false;
        variants.push_back({"NVFP4, 1x16 weight blocks", v});
        v = recipe;
        v.numerics.edge_layers_bf16 = true;
        variants.push_back({"NVFP4, first and last layer BF16", v});
        // The toggles' own combination, where it is not one of the runs above.
        emu::Experiment yours = recipe;
        map_nvfp4_training(p, yours);
        const auto same = [&](const emu::Experiment& e) {
            return e.numerics.nvfp4.weight_tiles == yours.numerics.nvfp4.weight_tiles &&
                   e.numerics.nvfp4.stochastic_gradients == yours.numerics.nvfp4.stochastic_gradients &&
                   e.numerics.nvfp4.hadamard_wgrad == yours.numerics.nvfp4.hadamard_wgrad &&
                   e.numerics.edge_layers_bf16 == yours.numerics.edge_layers_bf16;
        };
        if (std::none_of(variants.begin() + 1, variants.end(),
                         [&](const TrainingVariant& x) { return same(x.config); }))
            variants.push_back({"NVFP4 as toggled", yours});
        StepOutput out = compare_variants(variants, ctx, CastCounts::Gradients, 1);
        out.figures.front().id = "nvfp4-variants";
        // Where each option acts, measured without training: first, before the loss table.
        Table options{"options", {}, {}, {}};
        options.columns = {{"option"},
                           {"measured on"},
                           {"without the option", ColumnType::Number, "%"},
                           {"with it", ColumnType::Number, "%"}};
        for (const Nvfp4OptionEffect& e : measure_nvfp4_options())
            options.rows.push_back({e.option, e.measure, e.without, e.with});
        out.tables.insert(out.tables.begin(), std::move(options));
        return out;
    };
    s.exercise = choice_exercise({"unbiased", "smaller-error", "cannot-round", "faster"}, 0);
    return s;
}

CrossoverSweep recorded_sweep() {
    const std::string path = asset_path(kCrossoverAsset);
    std::ifstream in(path);
    if (!in) throw std::runtime_error("cannot read " + path);
    return read_crossover_csv(in, path);
}

// The smallest measured tokens per step from which FP8 is faster than BF16 for model
// width d (every larger count measured faster too); 0 when it never is.
int crossover_tokens(const CrossoverSweep& sweep, int d) {
    int from = 0;
    for (const CrossoverPoint& p : sweep.points) {
        if (p.d != d) continue;
        if (p.bf16_ms <= p.fp8_ms)
            from = 0;
        else if (from == 0)
            from = p.tokens;
    }
    return from;
}

// The widths a sweep measured, in order.
std::vector<int> widths_of(const CrossoverSweep& sweep) {
    std::vector<int> widths;
    for (const CrossoverPoint& p : sweep.points)
        if (std::find(widths.begin(), widths.end(), p.d) == widths.end()) widths.push_back(p.d);
    return widths;
}

StepLogic crossover() {
    StepLogic s;
    s.id = "crossover";
    s.titles = {{"figure speedup"}, {"figure memory"}, {"table sweep"}};
    s.exercise_from_recording = true;
    s.backends = {Backend::Cpu, Backend::Gpu};
    s.no_training_reason =
        "This step shows speeds measured on a GPU across model sizes; it has no numeric setting "
        "of its own (the loss-curves step trains).";
    s.run = [](const Parameters&, RunContext& ctx) {
        const bool live = ctx.backend() == Backend::Gpu;
        const CrossoverSweep sweep =
            live ? measure_crossover(40,
                                     [&](int done, int total) {
                                         ctx.report_progress(double(done) / total, "run " + std::to_string(done) +
                                                                                       " of " + std::to_string(total));
                                         return !ctx.cancel_requested();
                                     })
                 : recorded_sweep();
        StepOutput out;
        Figure speed;
        speed.id = "speedup";
        speed.x_axis = {"tokens per step", AxisScale::Log2};
        speed.y_axis = {"BF16 time / FP8 time", AxisScale::Linear};
        Figure memory = speed;
        memory.id = "memory";
        memory.y_axis = {"FP8 memory / BF16 memory", AxisScale::Linear};
        Table t{"sweep", {}, {}, {}};
        t.columns = {{"d", ColumnType::Integer},           {"h", ColumnType::Integer},
                     {"tokens", ColumnType::Integer},      {"GFLOP per step", ColumnType::Number},
                     {"BF16", ColumnType::Number, "ms"},   {"FP8", ColumnType::Number, "ms"},
                     {"speedup", ColumnType::Number, "x"}, {"BF16", ColumnType::Number, "MiB"},
                     {"FP8", ColumnType::Number, "MiB"}};
        int colour = 0;
        double lo = 1e30, hi = 0;
        for (int d : widths_of(sweep)) {
            int h = 0;
            Series sp = line("", {}, {}, colour);
            Series mem = line("", {}, {}, colour++);
            for (const CrossoverPoint& p : sweep.points) {
                if (p.d != d) continue;
                h = p.h;
                sp.x.push_back(p.tokens);
                sp.y.push_back(p.bf16_ms / p.fp8_ms);
                mem.x.push_back(p.tokens);
                mem.y.push_back(p.fp8_mib / p.bf16_mib);
                lo = std::min(lo, double(p.tokens));
                hi = std::max(hi, double(p.tokens));
                t.rows.push_back({std::int64_t(p.d), std::int64_t(p.h), std::int64_t(p.tokens), p.model_gflops,
                                  p.bf16_ms, p.fp8_ms, p.bf16_ms / p.fp8_ms, p.bf16_mib, p.fp8_mib});
            }
            sp.name = mem.name = "width " + std::to_string(d) + " (hidden " + std::to_string(h) + ")";
            speed.series.push_back(std::move(sp));
            memory.series.push_back(std::move(mem));
            if (!crossover_tokens(sweep, d))
                out.notes.push_back("Width " + std::to_string(d) + ": FP8 was not faster at any measured size.");
        }
        for (Figure* f : {&speed, &memory}) {
            f->series.push_back(line("break-even", {lo, hi}, {1, 1}, 7));
            f->series.back().dashed = true;
        }
        out.figures.push_back(std::move(speed));
        out.figures.push_back(std::move(memory));
        out.tables.push_back(std::move(t));
        out.notes.push_back(measurement_note(live, sweep.header, kCrossoverAsset));
        return out;
    };
    // The exercise reads the recording: without it the step's run says why, and there is
    // nothing to check an answer against.
    try {
        const CrossoverSweep sweep = recorded_sweep();
        const std::vector<int> widths = widths_of(sweep);
        const int d = widths.back(), from = crossover_tokens(sweep, d);
        int before = 0;  // the measured count just below the crossover
        for (const CrossoverPoint& p : sweep.points)
            if (p.d == d && p.tokens < from) before = std::max(before, p.tokens);
        std::vector<std::pair<std::string, double>> mistakes;
        if (before) mistakes.push_back({"still-slower", double(before)});
        for (int other : widths)  // every other width's crossover: one sentence serves them all
            if (other != d && crossover_tokens(sweep, other) && crossover_tokens(sweep, other) != from)
                mistakes.push_back({"other-width", double(crossover_tokens(sweep, other))});
        if (from) {
            s.exercise = numeric_exercise(double(from), std::move(mistakes));
            s.exercise->values = {{"width", std::to_string(d)}};
            s.exercise->possible_mistakes = {"still-slower", "other-width"};
        }
    } catch (const std::exception&) {
    }
    return s;
}

// From the lab to your code: the step's experiment as Transformer Engine, torchao and
// Megatron-LM write it, and as a PyTorch script; what each does differently; where each
// recipe's GEMMs run natively.
void map_to_your_code(const Parameters& p, emu::Experiment& e) {
    // What the first step trained at its defaults (its steps, learning rate and data), so
    // the code exported is the run the student just watched; then this step's settings.
    const StepLogic trained = loss_curves();
    map_loss_curves(Parameters(trained.parameters), e);
    emu::set_recipe(e, parse_enum_or_throw<emu::Fp8Recipe>(p.choice("recipe"), "recipe"));
    const emu::FormatRecipe formats = parse_enum_or_throw<emu::FormatRecipe>(p.choice("formats"), "formats");
    if (!emu::recipe(e.numerics.recipe).formats_fixed) {
        e.numerics.formats.input = e.numerics.formats.weight = &emu::e4m3();
        e.numerics.formats.gradient = &emu::format_for(formats, emu::TensorRole::GradOutput);
    }
    e.numerics.delayed.history_length = int(p.integer("history"));
    e.numerics.edge_layers_bf16 = p.toggle("first-last-bf16");
}

StepLogic to_your_code() {
    StepLogic s;
    s.id = "to-your-code";
    s.titles = {{"table differences"}, {"table native"}, {"table hardware"}};
    s.parameters = {choice("recipe", enum_choice_names<emu::Fp8Recipe>(), "delayed"),
                    choice("formats", enum_choice_names<emu::FormatRecipe>(), "hybrid"),
                    integer("history", 1, 1024, 16), toggle("first-last-bf16", false)};
    s.training_parameters = {"recipe", "formats", "history", "first-last-bf16"};
    s.training_mapping =
        "The first step's run at its defaults (its steps, learning rate and data), with this step's recipe, "
        "formats, history length and BF16 edge layers.";
    s.training = map_to_your_code;
    s.run = [](const Parameters& p, RunContext& ctx) {
        const emu::Experiment e = step_base(p, ctx, map_to_your_code);
        StepOutput out = code_listings(e, true);
        // Where each recipe's GEMMs run with its scales on the tensor cores, from the recipe table.
        Table native{"native", {}, {{"recipe"}, {"defined by"}, {"tensor cores that run it natively"}}, {}};
        for (const emu::Recipe& r : emu::recipes()) {
            const std::string on = r.native.text();
            native.rows.push_back({Cell(std::string(enum_name(r.id))), Cell(r.library),
                                   Cell(on.empty() ? std::string("none: emulated") : on)});
        }
        out.tables.push_back(std::move(native));
        out.tables.push_back(recipe_hardware_table());
        if (e.numerics.recipe == emu::Fp8Recipe::Delayed) out.gives_answer.tables = {"differences"};
        out.notes.push_back("Generated from the experiment: " + emu::describe(e) +
                            ". 'fp8lab train --export-code te|torchao|megatron|pytorch' prints the same for any "
                            "experiment.");
        return out;
    };
    s.exercise = choice_exercise({"add-history", "same-defaults", "tensorwise", "margin"}, 0);
    return s;
}

}  // namespace

LabLogic training_lab() {
    return {"training", {loss_curves(), what_breaks(), outliers(), nvfp4_training(), crossover(), to_your_code()}};
}

}  // namespace fp8lab::labs
