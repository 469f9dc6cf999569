// SPDX-License-Identifier: Apache-2.0
// Option values shared by subcommands, checked with messages that say what is accepted.
#include "app/options/command_options.hpp"

#include "emulator/io/user_files.hpp"

#include <cmath>
#include <cstdio>
#include <optional>

#include "app/options/number_text.hpp"
#include "app/options/usage_error.hpp"
#include "emulator/base/integer_text.hpp"
#include "emulator/base/quoted_input.hpp"

namespace fp8lab::options {

const emu::Format& format_option(std::string_view option, const std::string& text) {
    if (const emu::Format* f = emu::find_format(text)) return *f;
    throw UsageError(std::string(option) + ": unknown format " + emu::quoted_input(text) +
                     " (one of: " + emu::format_names_list() + ")");
}

emu::RoundingMode rounding_option(std::string_view option, const std::string& text) {
    if (auto mode = emu::parse_rounding_mode(text)) return *mode;
    throw UsageError(std::string(option) + ": unknown rounding mode " + emu::quoted_input(text) +
                     " (one of: " + emu::rounding_mode_names_list() + ")");
}

emu::Saturation saturation_option(std::string_view option, const std::string& text) {
    if (auto s = emu::parse_saturation(text)) return *s;
    throw UsageError(std::string(option) + ": unknown saturation " + emu::quoted_input(text) + " (finite or none)");
}

}  // namespace fp8lab::options

namespace fp8lab::options {

CLI::Validator integer_in(emu::IntegerBounds bounds) {
    return CLI::Validator(
        [bounds](std::string& text) -> std::string {
            const std::optional<std::int64_t> v = emu::parse_signed(text);
            if (!v) return emu::quoted_input(text) + " is not a whole number";
            if (!emu::contains(bounds, *v)) return emu::quoted_input(text) + " is not in " + emu::interval(bounds);
            text = std::to_string(*v);
            return {};
        },
        emu::interval(bounds));
}

CLI::Validator real_in(emu::RealBounds bounds) {
    return CLI::Validator(
        [bounds](std::string& text) -> std::string {
            const std::optional<double> v = parse_number(text, InputPrecision::Float64);
            if (!v || !std::isfinite(*v)) return emu::quoted_input(text) + " is not a finite number";
            if (!emu::contains(bounds, *v)) return emu::quoted_input(text) + " is not in " + emu::interval(bounds);
            return {};
        },
        emu::interval(bounds));
}

PixelSize pixel_size_option(const std::string& option, const std::string& text, PixelSize smallest, PixelSize largest) {
    const std::size_t x = text.find('x');
    const std::optional<std::uint64_t> w = emu::parse_unsigned(std::string_view(text).substr(0, x));
    const std::optional<std::uint64_t> h =
        x == std::string::npos ? std::nullopt : emu::parse_unsigned(std::string_view(text).substr(x + 1));
    if (!w || !h || *w < std::uint64_t(smallest.width) || *w > std::uint64_t(largest.width) ||
        *h < std::uint64_t(smallest.height) || *h > std::uint64_t(largest.height))
        throw UsageError(option + ": " + emu::quoted_input(text) + " is not WIDTHxHEIGHT between " +
                         std::to_string(smallest.width) + "x" + std::to_string(smallest.height) + " and " +
                         std::to_string(largest.width) + "x" + std::to_string(largest.height));
    return {int(*w), int(*h)};
}

CLI::Validator seed_value() {
    return CLI::Validator(
        [](std::string& text) -> std::string {
            const std::optional<std::uint64_t> v = emu::parse_unsigned(text);
            if (!v) return emu::quoted_input(text) + " is not a seed (a whole number from 0 to 18446744073709551615)";
            text = std::to_string(*v);
            return {};
        },
        "[0, 2^64-1]");
}

void check_output_option(const CLI::App& command, const std::string& option, const std::string& path,
                         const std::vector<std::string>& inputs) {
    if (command.get_option(option)->count() == 0) return;
    try {
        emu::check_output_path(option, path, inputs);
    } catch (const std::invalid_argument& e) {
        throw UsageError(e.what());
    }
}

}  // namespace fp8lab::options
