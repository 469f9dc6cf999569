// Shared option parsing for subcommands: format, rounding and saturation names.
#pragma once

#include <string>

#include "emulator/format.hpp"
#include "emulator/rounding.hpp"

namespace fp8lab::cli {

// Each throws UsageError naming the option, the text, and what it accepts.
const emu::Format& format_option(const std::string& option, const std::string& text);
emu::RoundingMode rounding_option(const std::string& option, const std::string& text);
emu::Saturation saturation_option(const std::string& option, const std::string& text);

}  // namespace fp8lab::cli
