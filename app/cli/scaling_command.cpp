// SPDX-License-Identifier: Apache-2.0
// `fp8lab scaling delayed|current` and `fp8lab quantize --recipe ...` on stdin values.
#include <CLI/CLI.hpp>

#include <cstdio>
#include <memory>
#include <optional>
#include <string>

#include "emulator/base/quoted_input.hpp"
#include "app/options/command_options.hpp"
#include "app/cli/commands.hpp"
#include "app/options/number_text.hpp"
#include "app/cli/stdin_values.hpp"
#include "app/options/usage_error.hpp"
#include "emulator/scaling/block_recipes.hpp"
#include "emulator/scaling/quantize.hpp"
#include "emulator/formats/convert.hpp"
#include "emulator/scaling/delayed_scaling.hpp"
#include "emulator/training/experiment.hpp"

namespace fp8lab::cli {
using options::decimal_float;
using options::format_option;
using options::hex_code;
using options::hex_float;
using options::integer_in;
using options::UsageError;
namespace {

const emu::Format& fp8_format_option(const std::string& text) {
    const emu::Format& f = format_option("--format", text);
    if (&f != &emu::e4m3() && &f != &emu::e5m2())
        throw UsageError("--format: scaling recipes use e4m3 or e5m2, not " + emu::quoted_input(text) + "");
    return f;
}

void print_scale_row(std::size_t step, float amax, emu::ScalePair s) {
    std::printf("%zu\t%s\t%s\t%s\n", step, hex_float(amax).c_str(), hex_float(s.scale).c_str(),
                hex_float(s.scale_inv).c_str());
}

// The amax values on standard input: magnitudes (max |x|), so a negative one is a mistake
// the command names by its line instead of returning a negative scale. NaN and Inf stay:
// they are what a tensor with a NaN or an Inf reports, and scaling has a rule for them.
std::vector<StdinValue> read_amax_values(const char* command) {
    std::vector<StdinValue> values = read_stdin_values(command);
    for (std::size_t i = 0; i < values.size(); ++i)
        if (values[i].value < 0)
            throw UsageError(std::string(command) + ": line " + std::to_string(i + 1) + ": amax " +
                             emu::quoted_input(values[i].text) + " is negative; amax is a magnitude, max |x|");
    return values;
}

}  // namespace

void add_scaling_command(CLI::App& app, CommandStatus& status) {
    CLI::App* cmd =
        app.add_subcommand("scaling", "Per-step scales of a recipe for amax values read from stdin (one per line)");
    cmd->require_subcommand(1);
    struct Args {
        std::string format = "e4m3", algo = "max";
        int history = 1024, margin = 0;
        bool power_of_two = false;
    };
    auto args = std::make_shared<Args>();
    CLI::App* delayed = cmd->add_subcommand(
        "delayed", "Transformer Engine's delayed scaling; prints step, amax, scale used, scale_inv");
    delayed->add_option("--format", args->format, "e4m3 or e5m2")->capture_default_str();
    delayed->add_option("--history", args->history, "amax history length")
        ->capture_default_str()
        ->check(integer_in(emu::bounds::kHistory));
    delayed->add_option("--algo", args->algo, "max or most_recent")->capture_default_str();
    delayed->add_option("--margin", args->margin, "scale = (max * 2^-margin) / amax")
        ->capture_default_str()
        ->check(integer_in(emu::bounds::kMargin));
    delayed->callback([args, &status] {
        const emu::Format& f = fp8_format_option(args->format);
        const std::optional<emu::AmaxAlgorithm> algo = parse_enum<emu::AmaxAlgorithm>(args->algo);
        if (!algo)
            throw UsageError("--algo: " + emu::quoted_input(args->algo) + " is not " +
                             enum_choices<emu::AmaxAlgorithm>());
        const emu::DelayedScalingConfig config{args->history, *algo, args->margin};
        const auto values = read_amax_values("scaling delayed");
        emu::DelayedScaling state(f, config);
        for (std::size_t step = 0; step < values.size(); ++step) {
            const float amax = static_cast<float>(values[step].value);
            print_scale_row(step, amax, state.scale());
            state.record_amax(amax);
            state.update();
        }
        status.exit_code = 0;
    });
    CLI::App* current = cmd->add_subcommand(
        "current", "Current scaling: each step's scale from its own amax; prints step, amax, scale, scale_inv");
    current->add_option("--format", args->format, "e4m3 or e5m2")->capture_default_str();
    current->add_flag("--power-of-two", args->power_of_two, "Keep only the scale's sign and exponent bits");
    current->callback([args, &status] {
        const emu::Format& f = fp8_format_option(args->format);
        const auto values = read_amax_values("scaling current");
        for (std::size_t step = 0; step < values.size(); ++step) {
            const float amax = static_cast<float>(values[step].value);
            print_scale_row(step, amax, emu::current_scale(amax, f, args->power_of_two));
        }
        status.exit_code = 0;
    });
}

namespace {

// The recipes quantize takes (every one but those that need a history of steps), and
// what each takes, from the recipe table.
std::string quantize_recipes() {
    std::vector<std::string> names;
    for (const emu::Recipe& r : emu::recipes())
        if (r.rule != emu::ScaleRule::Delayed) names.emplace_back(emu::fp8_recipe_name(r.id));
    std::string text;
    for (std::size_t i = 0; i < names.size(); ++i)
        text += (i == 0 ? "" : i + 1 == names.size() ? " or " : ", ") + names[i];
    return text;
}

std::string recipe_formats_help() {
    std::string text;
    for (const emu::Recipe& r : emu::recipes())
        if (r.rule != emu::ScaleRule::Delayed)
            text += (text.empty() ? "" : "; ") + std::string(emu::fp8_recipe_name(r.id)) + ": " +
                    emu::allowed_formats_text(r.id);
    return text;
}

std::string recipe_blocks_help() {
    std::string text;
    for (const emu::Recipe& r : emu::recipes())
        if (r.rule != emu::ScaleRule::Delayed && r.blocks.input.kind == emu::BlockKind::Block)
            text += (text.empty() ? "" : ", ") + std::string(emu::fp8_recipe_name(r.id)) + ": " +
                    std::to_string(r.blocks.input.block.cols);
    return text;
}

}  // namespace

void add_quantize_command(CLI::App& app, CommandStatus& status) {
    struct Args {
        std::string recipe, to;
        std::size_t block = 0;
    };
    auto args = std::make_shared<Args>();
    CLI::App* cmd = app.add_subcommand("quantize",
                                       "Quantize values from stdin (one per line, one row) with a scaling recipe; "
                                       "prints each element's code and value, then each block's scale");
    cmd->add_option("--recipe", args->recipe, quantize_recipes())->required();
    cmd->add_option("--to", args->to, "Element format (" + recipe_formats_help() + ")")->required();
    cmd->add_option("--block", args->block, "Block size (" + recipe_blocks_help() + ")");
    cmd->callback([args, &status] {
        const emu::Format& f = format_option("--to", args->to);
        if (f.total_bits > 8 || &f == &emu::e8m0())
            throw UsageError("--to: recipes quantize to FP8, FP6 or FP4 elements, not " + args->to);
        const std::optional<emu::Fp8Recipe> id = parse_enum<emu::Fp8Recipe>(args->recipe);
        if (!id || emu::recipe(*id).rule == emu::ScaleRule::Delayed)
            throw UsageError("--recipe: " + emu::quoted_input(args->recipe) +
                             (id ? " needs a history of steps (use 'fp8lab scaling delayed')" : " is not a recipe") +
                             "; quantize takes " + quantize_recipes());
        emu::Recipe recipe = emu::recipe(*id);
        if (!emu::recipe_allows(*id, f))
            throw UsageError("--to: the " + args->recipe + " recipe takes " + emu::allowed_formats_text(*id) +
                             ", not " + std::string(f.name));
        // The values are one row, cast as a GEMM's input with the recipe's input blocks.
        const emu::Blocking& blocks = recipe.blocks.input;
        if (args->block != 0 && blocks.kind != emu::BlockKind::Block)
            throw UsageError("--block: the " + args->recipe + " recipe has one scale " +
                             (blocks.kind == emu::BlockKind::Row ? "per row" : "per tensor") +
                             "; --block does not apply to it");
        if (args->block != 0 && args->block != blocks.block.cols)
            throw UsageError("--block: the " + args->recipe + " recipe uses blocks of " +
                             std::to_string(blocks.block.cols));
        recipe.formats = {&f, &f, &f};
        const auto values = read_stdin_values("quantize");
        std::vector<float> x;
        for (const auto& v : values) x.push_back(static_cast<float>(v.value));
        const std::size_t n = x.size();
        emu::RecipeState state;
        const emu::QuantizedTensor q = emu::quantize(x, 1, n, recipe, {"x", emu::TensorRole::Input}, state);
        const std::vector<float> back = q.dequantize();
        std::printf("# element\tindex\tinput\tcode\tvalue\tblock\n");
        for (std::size_t i = 0; i < n; ++i)
            std::printf("element\t%zu\t%s\t%s\t%s\t%zu\n", i, values[i].text.c_str(), hex_code(f, q.codes[i]).c_str(),
                        decimal_float(back[i]).c_str(), q.block_of(0, i));
        std::printf("# block\tindex\tamax\tscale code\tscale_inv (hex)\tscale_inv\n");
        for (std::size_t b = 0; b < q.block_count(); ++b)
            std::printf("block\t%zu\t%s\t%s\t%s\t%s\n", b, decimal_float(q.block_amax[b]).c_str(),
                        q.scale_format ? hex_code(*q.scale_format, q.scale_codes[b]).c_str() : "-",
                        hex_float(q.block_scale_inv[b]).c_str(), decimal_float(q.block_scale_inv[b]).c_str());
        if (recipe.scale_type == emu::ScaleType::E4M3TimesFloat32)
            std::printf("tensor\tscale_inv\t%s\t%s\n", hex_float(q.tensor_scale_inv).c_str(),
                        decimal_float(q.tensor_scale_inv).c_str());
        status.exit_code = 0;
    });
}

}  // namespace fp8lab::cli
