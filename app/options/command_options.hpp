// SPDX-License-Identifier: Apache-2.0
// Shared option parsing for subcommands: format, rounding and saturation names.
#pragma once

#include <string>
#include <vector>
#include <string_view>

#include <CLI/CLI.hpp>

#include "emulator/base/bounds.hpp"
#include "emulator/formats/format.hpp"
#include "emulator/formats/rounding.hpp"

namespace fp8lab::options {

// Each throws UsageError naming the option, the text, and what it accepts. The option's
// name is a string_view: a std::string made from a literal at the call would be a
// temporary bound to a reference, which GCC 13 warns may dangle in the returned Format&.
const emu::Format& format_option(std::string_view option, const std::string& text);
emu::RoundingMode rounding_option(std::string_view option, const std::string& text);
emu::Saturation saturation_option(std::string_view option, const std::string& text);

// Checks for numeric options, run on the text before CLI11 converts it: integers are
// decimal or 0x-hex (010 is ten; nothing wraps or saturates), reals are finite; a value out
// of range is a usage error before any work starts. Each states its range in --help and
// hands CLI11 the canonical text.
CLI::Validator integer_in(emu::IntegerBounds bounds);
CLI::Validator real_in(emu::RealBounds bounds);
CLI::Validator seed_value();  // 0 to 2^64-1

// When `option` was given (even empty), checks before any work that its path can take a
// regular file and is none of `inputs` (emu::check_output_path); throws UsageError if not.
void check_output_option(const CLI::App& command, const std::string& option, const std::string& path,
                         const std::vector<std::string>& inputs = {});

struct PixelSize {
    int width = 0, height = 0;
};
// "WIDTHxHEIGHT" with each side checked as a whole number (no wrapping); throws UsageError
// naming the option and the accepted sizes.
PixelSize pixel_size_option(const std::string& option, const std::string& text, PixelSize smallest, PixelSize largest);

}  // namespace fp8lab::options
