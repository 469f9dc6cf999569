// SPDX-License-Identifier: Apache-2.0
// Lab 10, inside the tensor core: an FP8 GEMM's products are exact in float32, its sums
// are not. Accumulation error against K for a narrow accumulator with and without
// periodic promotion to float32 (emulated), and the real tensor cores with and without
// cuBLASLt's fast accumulation (measured on a GPU, or the H100 recording in assets/).
#include <algorithm>
#include <cmath>
#include <fstream>

#include "emulator/training/experiment.hpp"
#include "emulator/formats/format.hpp"
#include "emulator/scaling/recipe.hpp"
#include "labs/experiments/accumulation.hpp"
#include "labs/framework/asset_files.hpp"
#include "labs/logic/lab_logic.hpp"

namespace fp8lab::labs {
namespace {

constexpr const char* kAsset = "h100-accumulation.csv";

StepLogic emulated() {
    StepLogic s;
    s.id = "accumulation";
    s.titles = {{"figure error-by-k"}, {"table by-k"}};
    s.parameters = {integer("mantissa_bits", 8, 23, emu::kFastAccumulationFractionBits),
                    integer("promote_every", 16, 4096, 128), choice("signs", {"positive", "random"}, "positive")};
    s.no_training_reason =
        "This step emulates an accumulator of any width; the tensor-cores step trains with fast "
        "accumulation, which the CPU emulates with this accumulator at its default width.";
    s.run = [](const Parameters& p, RunContext& ctx) {
        const int bits = int(p.integer("mantissa_bits")), every = int(p.integer("promote_every"));
        const bool positive = p.choice("signs") == "positive";
        StepOutput out;
        Figure fig;
        fig.id = "error-by-k";
        fig.x_axis = {"K (products per dot product)", AxisScale::Log2};
        fig.y_axis = {"mean |error| / sum |products|", AxisScale::Log10};
        Series f32 = line("float32 accumulator", {}, {}, 0);
        Series narrow = line(std::to_string(bits) + "-bit accumulator", {}, {}, 5);
        Series promoted = line(std::to_string(bits) + "-bit, promoted every " + std::to_string(every), {}, {}, 2);
        promoted.dashed = true;
        Table t{"by-k", {}, {}, {}};
        t.columns = {{"K", ColumnType::Integer},
                     {"float32 mean", ColumnType::Number},
                     {"narrow mean", ColumnType::Number},
                     {"narrow worst", ColumnType::Number},
                     {"promoted mean", ColumnType::Number}};
        for (int k = 64; k <= 65536; k *= 4) {
            if (ctx.cancel_requested()) throw RunCancelled();
            const int outputs = 4;
            const DotOperands ops = dot_operands(outputs, k, positive, ctx.seed());
            const std::vector<ExactDot> exact = exact_dots(ops, outputs);
            const auto errors = [&](int mantissa_bits, int promote) {
                return dot_errors(exact, [&](std::size_t o) {
                    return emulated_dot(ops, int(o) / outputs, int(o) % outputs, mantissa_bits, promote);
                });
            };
            const DotErrors a = errors(23, 0), b = errors(bits, 0), c = errors(bits, every);
            for (auto [series, e] : {std::pair{&f32, a}, std::pair{&narrow, b}, std::pair{&promoted, c}}) {
                series->x.push_back(k);
                series->y.push_back(e.mean);  // an exact sum (0) is marked on the log axis' floor
            }
            t.rows.push_back({std::int64_t(k), a.mean, b.mean, b.max, c.mean});
        }
        fig.series = {f32, narrow, promoted};
        out.figures.push_back(std::move(fig));
        out.tables.push_back(std::move(t));
        out.notes.push_back(
            "The narrow accumulator is a model (truncation to a fixed number of fraction bits after "
            "every addition); the next step measures real tensor cores.");
        return out;
    };
    const int product_bits = 2 * (emu::e4m3().mantissa_bits + 1);
    s.exercise = numeric_exercise(product_bits, {{"no-implicit-one", 2.0 * emu::e4m3().mantissa_bits},
                                                 {"whole-codes", 2.0 * emu::e4m3().total_bits},
                                                 {"float32", 24}});
    return s;
}

AccumulationSweep recorded() {
    const std::string path = asset_path(kAsset);
    std::ifstream in(path);
    if (!in) throw std::runtime_error("cannot read " + path);
    return read_accumulation_csv(in, path);
}

StepLogic tensor_cores() {
    StepLogic s;
    s.id = "tensor-cores";
    s.titles = {{"figure tensor-core-error"}, {"table measured"}};
    s.exercise_from_recording = true;
    s.backends = {Backend::Cpu, Backend::Gpu};
    // Transformer Engine's per-tensor recipes: fast accumulation in the forward GEMM only.
    s.parameters = {toggle("fast_forward", true), toggle("fast_dgrad", false), toggle("fast_wgrad", false)};
    s.training_parameters = {"fast_forward", "fast_dgrad", "fast_wgrad"};
    s.training_mapping =
        "Each toggle is fast accumulation of that FP8 GEMM in training: cuBLASLt's on the GPU; on the CPU "
        "the previous step's narrow accumulator (" +
        std::to_string(emu::kFastAccumulationFractionBits) +
        " fraction bits, truncated after every addition, never promoted), a model of it.";
    s.training = [](const Parameters& p, emu::Experiment& e) {
        e.numerics.fast_accumulation = {p.toggle("fast_forward"), p.toggle("fast_dgrad"), p.toggle("fast_wgrad")};
    };
    s.run = [](const Parameters&, RunContext& ctx) {
        const bool live = ctx.backend() == Backend::Gpu;
        const AccumulationSweep sweep = live ? measure_tensor_core_accumulation([&](int done, int total) {
            ctx.report_progress(double(done) / total, "GEMM " + std::to_string(done) + " of " + std::to_string(total));
            return !ctx.cancel_requested();
        })
                                             : recorded();
        StepOutput out;
        Figure fig;
        fig.id = "tensor-core-error";
        fig.x_axis = {"K", AxisScale::Log2};
        fig.y_axis = {"|error| / sum |products|", AxisScale::Log10};
        Table t{"measured", {}, {}, {}};
        t.columns = {{"operands"},
                     {"K", ColumnType::Integer},
                     {"fast accumulation"},
                     {"mean error", ColumnType::Number},
                     {"worst error", ColumnType::Number}};
        // The mean error of each (operands, accumulation) pair: colour for the accumulation,
        // solid for all-positive operands (the worst case), dashed for zero-mean ones.
        for (bool all_positive : {true, false})
            for (bool fast : {false, true}) {
                const std::string operands = all_positive ? "all-positive" : "random-sign";
                Series mean = line(std::string(fast ? "fast accumulation" : "promoted (default)") + ", " + operands, {},
                                   {}, fast ? 1 : 0);
                mean.dashed = !all_positive;
                for (const AccumulationPoint& p : sweep.points) {
                    if (p.fast_accumulation != fast || p.all_positive != all_positive) continue;
                    mean.x.push_back(p.k);
                    mean.y.push_back(p.mean_error);
                    t.rows.push_back(
                        {operands, std::int64_t(p.k), std::string(fast ? "on" : "off"), p.mean_error, p.max_error});
                }
                if (!mean.x.empty()) fig.series.push_back(std::move(mean));
            }
        out.figures.push_back(std::move(fig));
        out.tables.push_back(std::move(t));
        out.notes.push_back(measurement_note(live, sweep.header, kAsset));
        return out;
    };
    // The exercise reads the recording: without it the step's run says why.
    try {
        const AccumulationSweep sweep = recorded();
        int k = 0;
        double promoted = 0, fast = 0;
        for (const AccumulationPoint& p : sweep.points) k = std::max(k, p.k);
        for (const AccumulationPoint& p : sweep.points)
            if (p.k == k && p.all_positive) (p.fast_accumulation ? fast : promoted) = p.mean_error;
        if (promoted > 0 && fast > 0) {
            s.exercise = numeric_exercise(fast / promoted, {{"inverted", promoted / fast}}, 0.01);
            s.exercise->values = {{"k", std::to_string(k)}};
        }
    } catch (const std::exception&) {
    }
    return s;
}

// The bits one element of an operand costs with its share of the scales, for an operand of
// rows x K (the contraction along the rows), in a recipe's input blocking.
double bits_per_element(const emu::Recipe& r, const emu::Format& element, std::size_t rows, std::size_t k) {
    const emu::BlockShape b = r.blocks.input.shape(rows, k);
    return element.total_bits + double(r.scale_bits) / double(b.rows * b.cols);
}

// Which recipes' GEMMs Blackwell runs with their scales on its tensor cores, how cuBLASLt
// takes the scales, and what each element costs with its scales: all from the recipe table.
StepLogic block_scaled_tensor_cores() {
    StepLogic s;
    s.id = "block-scaled-tensor-cores";
    s.titles = {{"figure bits", {"rows", "k"}}, {"table recipes"}};
    s.no_training_reason =
        "This step reads the recipe table: which hardware runs each recipe natively; it trains nothing.";
    constexpr std::size_t kRows = 4096, kK = 4096;  // the operand the bits are counted on
    s.run = [](const Parameters&, RunContext&) {    // kRows and kK are constants: nothing to capture
        StepOutput out;
        Figure fig = category_bar_figure("bits", "bits per element, scales included");
        fig.title_values = {{"rows", std::to_string(kRows)}, {"k", std::to_string(kK)}};
        CategoryBars bars{fig, {SeriesKind::Bars, "", 2}};
        Table t{"recipes", {}, {}, {}};
        t.columns = {{"recipe"},
                     {"elements"},
                     {"blocks (inputs)"},
                     {"scale"},
                     {"cuBLASLt scale mode"},
                     {"runs natively on"},
                     {"bits per element", ColumnType::Number}};
        for (const emu::Recipe& r : emu::recipes()) {
            const double bits = bits_per_element(r, *r.formats.input, kRows, kK);
            const std::string on = r.native.text();
            t.rows.push_back({std::string(enum_name(r.id)), std::string(r.formats.input->display_name),
                              r.blocks.input.text(), std::string(r.scale_type_text()), r.scale_mode, on, bits});
            bars.add(r.label, bits);
        }
        // MX with four-bit elements: the same E8M0 blocks of 32 (Blackwell's MXFP4).
        const emu::Recipe& mx = emu::recipe(emu::Fp8Recipe::MxRceil);
        const double mxfp4 = bits_per_element(mx, emu::e2m1(), kRows, kK);
        t.rows.push_back({std::string("mx-rceil with E2M1 (MXFP4)"), std::string(emu::e2m1().display_name),
                          mx.blocks.input.text(), std::string(mx.scale_type_text()), mx.scale_mode, mx.native.text(),
                          mxfp4});
        bars.add("MXFP4", mxfp4);
        bars.finish();
        out.figures.push_back(std::move(fig));
        out.tables.push_back(std::move(t));
        return out;
    };
    // An MXFP8 operand of 8192 x 8192: its E8M0 scales in bytes, one per 32 elements.
    const emu::Recipe& mx = emu::recipe(emu::Fp8Recipe::MxRceil);
    const double n = 8192.0 * 8192.0, block = double(mx.blocks.input.block.cols), byte = mx.scale_bits / 8.0;
    const double nvfp4_block = double(emu::recipe(emu::Fp8Recipe::Nvfp4).blocks.input.block.cols);
    s.exercise = numeric_exercise(n / block * byte, {{"bits", n / block * mx.scale_bits},
                                                     {"nvfp4-blocks", n / nvfp4_block * byte},
                                                     {"mib", n / block * byte / (1024.0 * 1024.0)}});
    return s;
}

}  // namespace

LabLogic accumulation_lab() { return {"tensor-core", {emulated(), tensor_cores(), block_scaled_tensor_cores()}}; }

}  // namespace fp8lab::labs
