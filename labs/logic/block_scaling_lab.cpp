// SPDX-License-Identifier: Apache-2.0
// Lab 7, block scaling and 4/6-bit formats: per-tensor against MX (E8M0 scales, floor
// and RCEIL), 1x128 blocks with power-of-two scales (TE's Float8BlockScaling) and NVFP4's two-level scales on a tensor with
// outlier channels; FP6 E3M2/E2M3; error against block size; a heatmap of block scales.
#include <cctype>
#include <cmath>
#include <functional>

#include "emulator/scaling/block_recipes.hpp"
#include "emulator/formats/convert.hpp"
#include "emulator/scaling/quantize.hpp"
#include "emulator/scaling/recipe.hpp"
#include "labs/experiments/recipe_code.hpp"
#include "labs/experiments/sample_tensors.hpp"
#include "labs/framework/training_mapping.hpp"
#include "labs/logic/lab_logic.hpp"

namespace fp8lab::labs {
namespace {

constexpr std::size_t kRows = 128, kCols = 1024;
constexpr std::size_t kOutlierEvery = 97;  // columns between outlier channels
constexpr float kOutlierFactor = 40.0f;

// Activations with outlier channels: N(0, 1), every kOutlierEvery-th column kOutlierFactor times larger, as the
// outlier features of large language models sit in a few fixed channels.
// Storage per element of a block-scaled tensor: the element plus its share of the scale.

std::vector<float> outlier_channels(std::uint64_t seed) {
    std::vector<float> x = sample_tensor(TensorKind::Weights, kRows * kCols, seed);  // N(0, 0.02^2)
    for (float& v : x) v *= 50.0f;
    for (std::size_t r = 0; r < kRows; ++r)
        for (std::size_t c = 13; c < kCols; c += kOutlierEvery) x[r * kCols + c] *= kOutlierFactor;
    return x;
}

// The error every element sees, not the norm's: a Frobenius norm is dominated by the
// few outliers, which every recipe keeps well, and hides what happens to the rest.
double rms_relative_error(const std::vector<float>& x, const emu::QuantizedTensor& q) {
    const std::vector<float> back = q.dequantize();
    double sum = 0;
    std::size_t n = 0;
    for (std::size_t i = 0; i < x.size(); ++i)
        if (x[i] != 0) {
            const double r = (double(back[i]) - x[i]) / x[i];
            sum += r * r;
            ++n;
        }
    return n ? std::sqrt(sum / double(n)) : 0;
}

struct RecipeResult {
    emu::Fp8Recipe recipe;
    std::string name, elements, blocks, scales;
    double bits_per_element;
    emu::QuantizationStats stats;
    double rms_relative = 0;
};

// Every recipe of the table but delayed (its scale comes from a history; on one tensor it
// is current scaling), on x as a GEMM's input, with `elements` where the recipe lets the
// experiment choose, through the one quantize() the trainers call.
std::vector<RecipeResult> all_recipes(const std::vector<float>& x, const emu::Format& elements) {
    std::vector<RecipeResult> results;
    for (emu::Recipe r : emu::recipes()) {
        if (r.rule == emu::ScaleRule::Delayed) continue;
        if (!r.formats_fixed) r.formats = {&elements, &elements, &elements};
        emu::RecipeState state;
        const emu::QuantizedTensor q = emu::quantize(x, kRows, kCols, r, {"x", emu::TensorRole::Input}, state);
        const emu::BlockShape b = r.blocks.input.shape(kRows, kCols);
        // The element, its share of its block's scale and of a float32 per tensor.
        const bool tensor_scale =
            r.blocks.input.kind == emu::BlockKind::Tensor || r.scale_type == emu::ScaleType::E4M3TimesFloat32;
        const double bits =
            q.format->total_bits +
            (r.blocks.input.kind == emu::BlockKind::Tensor ? 0.0 : double(r.scale_bits) / double(b.rows * b.cols)) +
            (tensor_scale ? 32.0 / double(x.size()) : 0.0);
        results.push_back({r.id, r.label, std::string(q.format->name), r.blocks.input.text(),
                           std::string(r.scale_type_text()), bits, emu::quantization_stats(x, q),
                           rms_relative_error(x, q)});
    }
    return results;
}

// The recipes in use, as the emulator defines them (emulator/recipe): the rows of the table
// and the bits of the figure are the recipe values the trainers quantise with. A row's
// scale is shared by the default experiment's widest contraction.
double activation_bits(const emu::Recipe& r) {
    const emu::Experiment defaults;
    const std::size_t width = std::size_t(std::max(defaults.model.input, defaults.model.hidden));
    const emu::BlockShape b = r.blocks.input.shape(1, width);
    return r.formats.input->total_bits +
           (r.blocks.input.kind == emu::BlockKind::Tensor ? 0.0 : double(r.scale_bits) / double(b.rows * b.cols));
}

StepLogic recipe_map() {
    StepLogic s;
    s.id = "recipe-map";
    s.titles = {{"figure bits"}, {"table recipes"}};
    s.no_training_reason =
        "This step maps the recipes; each of them trains from the steps that teach it (the next "
        "step's recipe choice, lab 6, lab 8).";
    s.run = [](const Parameters&, RunContext&) {
        StepOutput out;
        Table t{"recipes", {}, {}, {}};
        t.columns = {{"fp8lab --recipe"},
                     {"defined by"},
                     {"elements (input / weight / gradient)"},
                     {"activation and gradient blocks"},
                     {"weight blocks"},
                     {"scale"},
                     {"scale from"},
                     {"accumulation"},
                     {"tensor cores on"}};
        Figure fig;
        fig.id = "bits";
        fig.y_axis = {"bits per element", AxisScale::Linear};
        fig.y_axis.min = 0;
        fig.legend = false;
        Series bars{SeriesKind::Bars, "", 0};
        for (const emu::Recipe& d : emu::recipes()) {
            const auto upper = [](std::string_view name) {
                std::string u(name);
                for (char& ch : u) ch = char(std::toupper(static_cast<unsigned char>(ch)));
                return u;
            };
            const std::string elements = upper(d.formats.input->name) + " / " + upper(d.formats.weight->name) + " / " +
                                         upper(d.formats.gradient->name) + (d.formats_fixed ? "" : " (default)");
            t.rows.push_back({std::string(enum_name(d.id)), d.library, elements, d.blocks.input.text(),
                              d.blocks.weight.text(), std::string(d.scale_type_text()), d.scale_from, d.accumulation,
                              d.native.text()});
            fig.x_axis.categories.push_back(std::string(enum_name(d.id)));
            bars.x.push_back(double(bars.x.size()));
            bars.y.push_back(activation_bits(d));
        }
        fig.x_axis.min = -0.6;
        fig.x_axis.max = double(bars.x.size()) - 0.4;
        fig.series.push_back(std::move(bars));
        out.figures.push_back(std::move(fig));
        out.tables.push_back(std::move(t));
        return out;
    };
    const emu::Recipe& blockwise = emu::recipe(emu::Fp8Recipe::Blockwise);
    const std::size_t n = 1024;
    const auto scales = [&](const emu::Blocking& blocking) {
        const emu::BlockShape b = blocking.shape(n, n);
        return double((n / b.rows) * (n / b.cols));
    };
    s.exercise = numeric_exercise(scales(blockwise.blocks.weight),
                                  {{"activation-blocks", scales(blockwise.blocks.input)}, {"per-tensor", 1}});
    s.exercise->values = {{"library", std::string(blockwise.library)}, {"n", std::to_string(n)}};
    return s;
}

StepLogic recipes() {
    StepLogic s;
    s.id = "recipes";
    s.titles = {{"figure error-by-recipe"}, {"table recipes", {"rows", "columns", "every", "factor"}}};
    s.parameters = {choice("mx_elements", element_format_names(), "e2m1"),
                    choice("training_recipe", enum_choice_names<emu::Fp8Recipe>(), "mx-rceil")};
    s.training_parameters = {"mx_elements", "training_recipe"};
    s.training_mapping =
        "The recipe for training is the experiment's recipe; the element format is every role's "
        "for per-tensor and MX recipes (blockwise is E4M3, NVFP4 E2M1, whatever it says).";
    s.training = [](const Parameters& p, emu::Experiment& e) {
        const emu::Fp8Recipe r = parse_enum_or_throw<emu::Fp8Recipe>(p.choice("training_recipe"), "training_recipe");
        emu::set_recipe(e, r);
        if (!emu::recipe(r).formats_fixed) emu::set_all_formats(e, emu::format_by_name(p.choice("mx_elements")));
    };
    s.run = [](const Parameters& p, RunContext& ctx) {
        const emu::Format& mx = emu::format_by_name(p.choice("mx_elements"));
        const std::vector<float> x = outlier_channels(ctx.seed());
        const std::vector<RecipeResult> results = all_recipes(x, mx);
        StepOutput out;
        // Both error measures side by side: the per-element RMS counts every element alike, the
        // Frobenius error weighs each by its size. The cost in bits is the table's (MXFP8's is
        // the exercise's answer, hidden there until it is answered).
        Figure fig;
        fig.id = "error-by-recipe";
        fig.x_axis = {"", AxisScale::Linear, -0.6, double(results.size()) - 0.4};
        fig.y_axis = {"error", AxisScale::Linear};
        fig.y_axis.min = 0;
        Series rms{SeriesKind::Bars, "RMS relative error per element", 0};
        Series frobenius{SeriesKind::Bars, "relative Frobenius error (the large elements weigh most)", 1};
        rms.bar_width = frobenius.bar_width = 0.38;
        for (std::size_t i = 0; i < results.size(); ++i) {
            fig.x_axis.categories.push_back(results[i].name);
            rms.x.push_back(double(i) - 0.2);
            rms.y.push_back(results[i].rms_relative);
            frobenius.x.push_back(double(i) + 0.2);
            frobenius.y.push_back(results[i].stats.rel_frobenius_error);
        }
        // The recipe the training panel trains (the second parameter) is marked on the figure.
        const emu::Fp8Recipe trained =
            parse_enum_or_throw<emu::Fp8Recipe>(p.choice("training_recipe"), "training_recipe");
        // Delayed scaling is marked on current scaling's bar (the first), its one-tensor equivalent.
        std::size_t marked = 0;
        for (std::size_t i = 0; i < results.size(); ++i)
            if (results[i].recipe == trained) marked = i;
        fig.annotations.push_back({double(marked) - 0.2, results[marked].rms_relative,
                                   "the training panel trains " + std::string(enum_name(trained))});
        fig.series.push_back(std::move(rms));
        fig.series.push_back(std::move(frobenius));
        out.figures.push_back(std::move(fig));
        Table t{"recipes", {}, {}, {}};
        t.title_values = {{"rows", std::to_string(kRows)},
                          {"columns", std::to_string(kCols)},
                          {"every", std::to_string(kOutlierEvery)},
                          {"factor", number_text(kOutlierFactor)}};
        t.columns = {{"recipe"},
                     {"elements"},
                     {"blocks"},
                     {"scales"},
                     {"bits per element", ColumnType::Number},
                     {"RMS relative error", ColumnType::Number},
                     {"relative Frobenius error", ColumnType::Number},
                     {"clipped at max", ColumnType::Number, "%"},
                     {"flushed to zero", ColumnType::Number, "%"}};
        for (const RecipeResult& r : results) {
            const double n = double(r.stats.elements);
            t.rows.push_back({r.name, r.elements, r.blocks, r.scales, r.bits_per_element, r.rms_relative,
                              r.stats.rel_frobenius_error, 100 * double(r.stats.overflowed) / n,
                              100 * double(r.stats.flushed_to_zero) / n});
        }
        out.tables.push_back(std::move(t));
        out.gives_answer.table_columns = {{"recipes", "bits per element"}};  // MXFP8's is the exercise's
        return out;
    };
    const emu::Format &e4m3 = emu::e4m3(), &e8m0 = emu::e8m0();
    s.exercise = numeric_exercise(emu::block_scaled_bits(e4m3, e8m0, 32),
                                  {{"elements-only", double(e4m3.total_bits)},
                                   {"blocks-of-16", emu::block_scaled_bits(e4m3, e8m0, 16)},
                                   {"scale-per-element", emu::block_scaled_bits(e4m3, e8m0, 1)}});
    return s;
}

StepLogic floor_against_rceil() {
    StepLogic s;
    s.id = "floor-vs-rceil";
    s.titles = {{"table example"}, {"figure block-max-error", {"format"}}};
    s.parameters = {choice("elements", element_format_names(), "e4m3")};
    s.training_parameters = {"elements"};
    s.training_mapping =
        "Training runs MX with the floor rule (mx-floor) and this element format for every role; "
        "the recipes step trains RCEIL.";
    s.training = [](const Parameters& p, emu::Experiment& e) {
        emu::set_recipe(e, emu::Fp8Recipe::MxFloor);
        emu::set_all_formats(e, emu::format_by_name(p.choice("elements")));
    };
    s.run = [](const Parameters& p, RunContext&) {
        const emu::Format& f = emu::format_by_name(p.choice("elements"));
        StepOutput out;
        Figure fig;
        fig.id = "block-max-error";
        fig.title_values = {{"format", std::string(f.display_name)}};
        fig.x_axis = {"block amax (times a power of two)", AxisScale::Linear, 1.0, 2.0};
        fig.y_axis = {"relative error of the block's largest element", AxisScale::Linear};
        Series floor = line("OCP floor", {}, {}, 0), rceil = line("RCEIL", {}, {}, 1);
        rceil.dashed = true;
        for (int i = 0; i < 400; ++i) {
            const float amax = 1.0f + float(i) / 400.0f;
            std::vector<float> block(32, 0.1f);
            block[0] = amax;
            for (auto [rule, series] :
                 {std::pair{emu::MxScaleRule::OcpFloor, &floor}, std::pair{emu::MxScaleRule::Rceil, &rceil}}) {
                const std::vector<float> back = emu::quantize_mx(block, 1, 32, f, rule).dequantize();
                series->x.push_back(amax);
                series->y.push_back(std::fabs(double(back[0]) - amax) / amax);
            }
        }
        fig.series = {floor, rceil};
        out.figures.push_back(std::move(fig));

        Table t{"example", {}, {}, {}};
        t.columns = {{"block amax", ColumnType::Number},
                     {"OCP floor gives", ColumnType::Number},
                     {"RCEIL gives", ColumnType::Number}};
        for (float amax : {448.0f, 500.0f, 957.0f, 1000.0f}) {
            std::vector<float> block(32, 1.0f);
            block[0] = amax;
            t.rows.push_back({double(amax),
                              double(emu::quantize_mx(block, 1, 32, f, emu::MxScaleRule::OcpFloor).dequantize()[0]),
                              double(emu::quantize_mx(block, 1, 32, f, emu::MxScaleRule::Rceil).dequantize()[0])});
        }
        out.tables.push_back(std::move(t));
        return out;
    };
    // The exercise's block: its maximum, in double as the student reads it, and as stored.
    const double amax = 1.9;
    const emu::Format& e4m3 = emu::e4m3();
    std::vector<float> block(32, 0.1f);
    block[0] = float(amax);
    const double floor_value = emu::quantize_mx(block, 1, 32, e4m3, emu::MxScaleRule::OcpFloor).dequantize()[0];
    const int x_log2 = std::ilogb(amax) - e4m3.max_exponent;  // the floor rule's X = 2^x_log2
    const std::string a = number_text(amax), x = "2^" + std::to_string(x_log2), max = number_text(e4m3.max_finite);
    const double nearest = emu::decode(e4m3, emu::encode(e4m3, block[0]));
    s.exercise = numeric_exercise(
        floor_value, {{"unclamped", amax},
                      {"unclamped", std::ldexp(amax, -x_log2)},  // amax / X, neither clamped nor multiplied back
                      {"nearest", nearest},
                      {"scaled-units", std::min(std::ldexp(amax, -x_log2), e4m3.max_finite)}});  // the stored element
    s.exercise->values = {{"amax", a},
                          {"x", x},
                          {"max", max},
                          {"max_exponent", std::to_string(e4m3.max_exponent)},
                          {"scaled", number_text(std::ldexp(amax, -x_log2))}};
    return s;
}

// The E8M0 scale's traps, each computed: no zero, no sign, one NaN code that poisons a
// block, and the all-zero block.
StepLogic e8m0_traps() {
    StepLogic s;
    s.id = "e8m0-traps";
    s.titles = {{"table e8m0-codes"}, {"table blocks", {"format"}}};
    s.parameters = {choice("elements", element_format_names(), "e4m3"),
                    choice("rule", enum_choice_names<emu::MxScaleRule>(), "ocp-floor")};
    s.no_training_reason = "This step shows what single E8M0 codes and single blocks do; the recipes step trains MX.";
    s.run = [](const Parameters& p, RunContext&) {
        const emu::Format& f = emu::format_by_name(p.choice("elements"));
        const emu::MxScaleRule rule = parse_enum_or_throw<emu::MxScaleRule>(p.choice("rule"), "rule");
        const emu::Format& e8m0 = emu::e8m0();
        StepOutput out;
        Table codes{"e8m0-codes", {}, {}, {}};
        codes.columns = {{"scale asked for"},
                         {"code, rounded down", ColumnType::Code},
                         {"its value", ColumnType::Number},
                         {"code, rounded up", ColumnType::Code},
                         {"its value", ColumnType::Number}};
        const emu::ConvertOptions down{emu::RoundingMode::TowardZero, emu::Saturation::Finite};
        const emu::ConvertOptions up{emu::RoundingMode::Up, emu::Saturation::Finite};
        const std::pair<const char*, double> asked[] = {{"1", 1.0},
                                                        {"0.75", 0.75},
                                                        {"0 (an all-zero block)", 0.0},
                                                        {"2^-130", std::ldexp(1.0, -130)},
                                                        {"-8 (a sign)", -8.0},
                                                        {"2^130", std::ldexp(1.0, 130)},
                                                        {"NaN", std::nan("")}};
        for (const auto& [label, x] : asked) {
            const std::uint32_t d = emu::encode(e8m0, x, down), u = emu::encode(e8m0, x, up);
            codes.rows.push_back(
                {std::string(label), std::int64_t(d), emu::decode(e8m0, d), std::int64_t(u), emu::decode(e8m0, u)});
        }
        out.tables.push_back(std::move(codes));

        // Two blocks of 32: the second holds one Inf among ordinary values.
        std::vector<float> x(64);
        for (std::size_t i = 0; i < x.size(); ++i) x[i] = 0.25f + 0.01f * float(i % 32);
        x[40] = INFINITY;
        const emu::QuantizedTensor q = emu::quantize_mx(x, 1, 64, f, rule);
        const std::vector<float> back = q.dequantize();
        // An all-zero block: its scale code and what its elements read back as.
        const std::vector<float> zeros(32, 0.0f);
        const emu::QuantizedTensor z = emu::quantize_mx(zeros, 1, 32, f, rule);
        const std::vector<float> zeros_back = z.dequantize();
        Table blocks{"blocks", {}, {}, {}};
        blocks.title_values = {{"format", std::string(f.display_name)}};
        blocks.columns = {{"block"},
                          {"amax", ColumnType::Number},
                          {"scale code", ColumnType::Code},
                          {"scale", ColumnType::Number},
                          {"elements that read back finite", ColumnType::Integer}};
        auto finite_in = [](const std::vector<float>& v, std::size_t b, std::size_t e) {
            return std::int64_t(std::count_if(v.begin() + std::ptrdiff_t(b), v.begin() + std::ptrdiff_t(e),
                                              [](float y) { return std::isfinite(y); }));
        };
        blocks.rows.push_back({std::string("ordinary values"), double(q.block_amax[0]), std::int64_t(q.scale_codes[0]),
                               emu::decode(e8m0, q.scale_codes[0]), finite_in(back, 0, 32)});
        blocks.rows.push_back({std::string("the same with one Inf"), double(q.block_amax[1]),
                               std::int64_t(q.scale_codes[1]), emu::decode(e8m0, q.scale_codes[1]),
                               finite_in(back, 32, 64)});
        blocks.rows.push_back({std::string("all zeros"), double(z.block_amax[0]), std::int64_t(z.scale_codes[0]),
                               emu::decode(e8m0, z.scale_codes[0]), finite_in(zeros_back, 0, 32)});
        out.tables.push_back(std::move(blocks));
        out.metrics.push_back({"finite elements left in the block with one Inf", double(finite_in(back, 32, 64)), ""});
        out.metrics.push_back({"scale code of the all-zero block", double(z.scale_codes[0]), ""});
        out.metrics.push_back({"largest all-zero block element read back",
                               double(*std::max_element(zeros_back.begin(), zeros_back.end())), ""});
        out.gives_answer.metrics = {"finite elements left in the block with one Inf"};
        out.gives_answer.table_columns = {{"blocks", "elements that read back finite"}};
        return out;
    };
    std::vector<float> x(32, 0.5f);
    x[7] = INFINITY;
    const std::vector<float> back = emu::quantize_mx(x, 1, 32, emu::e4m3(), emu::MxScaleRule::OcpFloor).dequantize();
    const double finite = double(std::count_if(back.begin(), back.end(), [](float y) { return std::isfinite(y); }));
    s.exercise = numeric_exercise(finite, {{"all-but-the-inf", 31.0}, {"all", 32.0}});
    return s;
}

StepLogic block_size_and_nvfp4() {
    StepLogic s;
    s.id = "block-size";
    s.titles = {{"figure error-by-block-size"}, {"figure block-scales", {"recipe"}}};
    s.parameters = {choice("heatmap", {"nvfp4", "mxfp4", "mxfp8"}, "nvfp4")};
    s.training_parameters = {"heatmap"};
    s.training_mapping =
        "The heatmap's recipe is trained: nvfp4 (E2M1, 16-element blocks), mxfp4 (MX RCEIL, E2M1) "
        "or mxfp8 (MX RCEIL, E4M3).";
    s.training = [](const Parameters& p, emu::Experiment& e) {
        const std::string& which = p.choice("heatmap");
        if (which == "nvfp4") {
            emu::set_recipe(e, emu::Fp8Recipe::Nvfp4);
            return;
        }
        emu::set_recipe(e, emu::Fp8Recipe::MxRceil);
        emu::set_all_formats(e, which == "mxfp4" ? emu::e2m1() : emu::e4m3());
    };
    s.run = [](const Parameters& p, RunContext& ctx) {
        const std::vector<float> x = outlier_channels(ctx.seed());
        StepOutput out;
        Figure fig;
        fig.id = "error-by-block-size";
        fig.x_axis = {"block size (elements along a row)", AxisScale::Log2};
        fig.y_axis = {"RMS relative error per element", AxisScale::Log10};
        int colour = 0;
        for (const emu::Format* f : {&emu::e4m3(), &emu::e3m2(), &emu::e2m3(), &emu::e2m1()}) {
            Series l = line(std::string(f->display_name), {}, {}, colour++);
            for (std::size_t b = 8; b <= kCols; b *= 2) {
                if (ctx.cancel_requested()) throw RunCancelled();
                l.x.push_back(double(b));
                l.y.push_back(rms_relative_error(x, emu::quantize_mx(x, kRows, kCols, *f, emu::MxScaleRule::Rceil, b)));
            }
            fig.series.push_back(std::move(l));
        }
        const emu::QuantizedTensor nv = emu::quantize_nvfp4(x, kRows, kCols);
        fig.series.push_back(scatter("NVFP4 (E2M1, E4M3 scale per 16)", {16}, {rms_relative_error(x, nv)}, 5));
        out.figures.push_back(std::move(fig));

        // The heatmap: log2 of each block's scale_inv (the factor its values are read back
        // with: large where the block's values are large) over the first 32 rows.
        const std::string which = p.choice("heatmap");
        const emu::QuantizedTensor q = which == "nvfp4" ? nv
                                       : which == "mxfp4"
                                           ? emu::quantize_mx(x, kRows, kCols, emu::e2m1(), emu::MxScaleRule::Rceil)
                                           : emu::quantize_mx(x, kRows, kCols, emu::e4m3(), emu::MxScaleRule::Rceil);
        const int rows = 32, columns = int(q.block_grid_cols());
        Figure heat;
        heat.id = "block-scales";
        heat.title_values = {{"recipe", which}};
        heat.x_axis = {"column", AxisScale::Linear, 0.0, double(kCols)};
        heat.y_axis = {"row", AxisScale::Linear, 0.0, double(rows)};
        heat.legend = false;
        Series h{SeriesKind::Heatmap, which, 0, {0, double(kCols)}, {0, double(rows)}};
        h.rows = rows;
        h.columns = columns;
        h.value_label = "log2(block scale_inv)";
        for (int r = 0; r < rows; ++r)
            for (int c = 0; c < columns; ++c)
                h.values.push_back(
                    std::log2(double(q.block_scale_inv[std::size_t(r) * q.block_grid_cols() + std::size_t(c)])));
        heat.series.push_back(std::move(h));
        out.figures.push_back(std::move(heat));
        out.metrics.push_back({"NVFP4 tensor scale S_enc", double(1.0f / nv.tensor_scale_inv), ""});
        return out;
    };
    const emu::Format &e2m1 = emu::e2m1(), &e4m3 = emu::e4m3(), &e8m0 = emu::e8m0();
    s.exercise = numeric_exercise(emu::block_scaled_bits(e2m1, e4m3, 16),
                                  {{"mxfp4", emu::block_scaled_bits(e2m1, e8m0, 32)},
                                   {"elements-only", double(e2m1.total_bits)},
                                   {"scale-per-element", emu::block_scaled_bits(e2m1, e4m3, 1)}});
    return s;
}

// x (rows x cols, row-major) transposed.
std::vector<float> transposed(const std::vector<float>& x, std::size_t rows, std::size_t cols) {
    std::vector<float> t(x.size());
    for (std::size_t r = 0; r < rows; ++r)
        for (std::size_t c = 0; c < cols; ++c) t[c * rows + r] = x[r * cols + c];
    return t;
}

StepLogic transpose_copy() {
    StepLogic s;
    s.id = "transpose";
    s.titles = {{"figure transpose-error"}, {"table transpose"}};
    s.no_training_reason =
        "The trainers already quantise each orientation from the high-precision tensor, as Transformer Engine does; "
        "this step shows what the other way would cost.";
    s.run = [](const Parameters&, RunContext& ctx) {
        // x as an activation, kRows tokens x kCols features: the forward GEMM's blocks run
        // along the features, the weight gradient's along the tokens, so it needs x^T in
        // blocks of its own.
        const std::vector<float> x = outlier_channels(ctx.seed());
        const std::vector<float> xt = transposed(x, kRows, kCols);
        using Quantise = std::function<emu::QuantizedTensor(const std::vector<float>&, std::size_t, std::size_t)>;
        const auto mx = [](const emu::Format& f) {
            return Quantise([&f](const std::vector<float>& v, std::size_t r, std::size_t c) {
                return emu::quantize_mx(v, r, c, f, emu::MxScaleRule::Rceil);
            });
        };
        const struct {
            const char* name;
            const char* blocks;
            Quantise quantise;
        } cases[] = {
            {"MXFP8", "1 x 32, E8M0", mx(emu::e4m3())},
            {"MXFP4", "1 x 32, E8M0", mx(emu::e2m1())},
            {"NVFP4", "1 x 16, E4M3",
             [](const std::vector<float>& v, std::size_t r, std::size_t c) { return emu::quantize_nvfp4(v, r, c); }},
            {"blockwise", "1 x 128, power of two", [](const std::vector<float>& v, std::size_t r, std::size_t c) {
                 return emu::quantize_blockwise(v, r, c, {1, 128});
             }}};
        StepOutput out;
        Figure fig;
        fig.id = "transpose-error";
        fig.x_axis = {"recipe", AxisScale::Linear};
        fig.y_axis = {"RMS relative error of x^T", AxisScale::Linear};
        Series again{SeriesKind::Bars, "from x (as TE)", 0};
        Series twice{SeriesKind::Bars, "from the copy (rounded twice)", 1};
        again.bar_width = twice.bar_width = 0.38;
        Table t{"transpose", {}, {}, {}};
        t.columns = {{"recipe"},
                     {"blocks"},
                     {"forward copy's error", ColumnType::Number},
                     {"x^T from x", ColumnType::Number},
                     {"x^T from the copy", ColumnType::Number},
                     {"elements that differ", ColumnType::Number, "%"}};
        for (const auto& c : cases) {
            if (ctx.cancel_requested()) throw RunCancelled();
            const emu::QuantizedTensor forward = c.quantise(x, kRows, kCols);
            const emu::QuantizedTensor from_x = c.quantise(xt, kCols, kRows);
            const emu::QuantizedTensor from_copy =
                c.quantise(transposed(forward.dequantize(), kRows, kCols), kCols, kRows);
            const std::vector<float> a = from_x.dequantize(), b = from_copy.dequantize();
            std::size_t differ = 0;
            for (std::size_t i = 0; i < a.size(); ++i) differ += a[i] != b[i];
            const double e_again = rms_relative_error(xt, from_x), e_twice = rms_relative_error(xt, from_copy);
            const double at = double(fig.x_axis.categories.size());
            fig.x_axis.categories.push_back(c.name);
            again.x.push_back(at - 0.2);
            again.y.push_back(e_again);
            twice.x.push_back(at + 0.2);
            twice.y.push_back(e_twice);
            t.rows.push_back({std::string(c.name), std::string(c.blocks), rms_relative_error(x, forward), e_again,
                              e_twice, 100.0 * double(differ) / double(a.size())});
        }
        fig.series = {again, twice};
        out.figures.push_back(std::move(fig));
        out.tables.push_back(std::move(t));
        return out;
    };
    // The exercise: a 4096 x 4096 MXFP8 activation kept in both orientations, with scales.
    const double n = 4096.0 * 4096.0, mib = 1024.0 * 1024.0;
    const double one_copy = n * (1 + 1.0 / 32) / mib;
    s.exercise = numeric_exercise(2 * one_copy, {{"one-copy", one_copy}, {"no-scales", 2 * n / mib}}, 0.01);
    return s;
}

// From the lab to your code, for the block recipes: the step's recipe as Transformer
// Engine's recipe object, torchao's config and Megatron-LM's flags, what each does
// differently, and which recipe runs where (lab 8's step has the MLP's whole script).
void map_block_code(const Parameters& p, emu::Experiment& e) {
    emu::set_recipe(e, parse_enum_or_throw<emu::Fp8Recipe>(p.choice("recipe"), "recipe"));
}

StepLogic block_code() {
    StepLogic s;
    s.id = "to-your-code";
    s.titles = {{"table hardware"}, {"table differences"}};
    s.parameters = {choice("recipe", enum_choice_names<emu::Fp8Recipe>(), "mx-rceil")};
    s.training_parameters = {"recipe"};
    s.training_mapping = "The recipe is the experiment's, with its library's default formats.";
    s.training = map_block_code;
    s.run = [](const Parameters& p, RunContext&) {
        emu::Experiment e = lab_experiment();
        map_block_code(p, e);
        StepOutput listings = code_listings(e, false);
        StepOutput out;
        out.tables.push_back(recipe_hardware_table());
        out.tables.push_back(std::move(listings.tables.at(0)));
        out.listings = std::move(listings.listings);
        out.notes.push_back("Generated from the experiment: " + emu::describe(e) +
                            ". 'fp8lab train --export-code te|torchao|megatron' prints the same for any experiment.");
        return out;
    };
    s.exercise = choice_exercise({"refused", "emulated", "per-tensor", "runs"}, 0);
    return s;
}

}  // namespace

LabLogic block_scaling_lab() {
    return {"block-scaling",
            {recipe_map(), recipes(), floor_against_rceil(), e8m0_traps(), block_size_and_nvfp4(), transpose_copy(),
             block_code()}};
}

}  // namespace fp8lab::labs
