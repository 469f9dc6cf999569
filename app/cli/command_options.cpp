// Option values shared by subcommands, checked with messages that say what is accepted.
#include "app/cli/command_options.hpp"

#include "app/cli/usage_error.hpp"

namespace fp8lab::cli {

const emu::Format& format_option(const std::string& option, const std::string& text) {
    if (const emu::Format* f = emu::find_format(text)) return *f;
    throw UsageError(option + ": unknown format '" + text + "' (one of: " +
                     emu::format_names_list() + ")");
}

emu::RoundingMode rounding_option(const std::string& option, const std::string& text) {
    if (auto mode = emu::parse_rounding_mode(text)) return *mode;
    throw UsageError(option + ": unknown rounding mode '" + text + "' (one of: " +
                     emu::rounding_mode_names_list() + ")");
}

emu::Saturation saturation_option(const std::string& option, const std::string& text) {
    if (auto s = emu::parse_saturation(text)) return *s;
    throw UsageError(option + ": unknown saturation '" + text + "' (finite or none)");
}

}  // namespace fp8lab::cli
