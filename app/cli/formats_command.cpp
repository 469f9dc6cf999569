// SPDX-License-Identifier: Apache-2.0
// `fp8lab formats` and `fp8lab decode`: format properties and code breakdowns, computed.
#include <CLI/CLI.hpp>

#include <cmath>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "app/options/command_options.hpp"
#include "app/cli/commands.hpp"
#include "app/options/number_text.hpp"
#include "app/options/usage_error.hpp"
#include "emulator/formats/convert.hpp"

namespace fp8lab::cli {
using options::decimal_float;
using options::format_option;
using options::hex_code;
using options::hex_float;
using options::parse_code;
namespace {

std::string codes_or_none(const emu::Format& f, bool present, std::uint32_t code) {
    return present ? hex_code(f, code) : "none";
}

std::string nan_codes(const emu::Format& f) {
    if (!f.has_nan) return "none";
    if (f.encoding == emu::Encoding::Ieee)
        return std::to_string(2 * (f.inf_code ^ f.nan_code)) + " codes, e.g. " + hex_code(f, f.nan_code);
    if (f.encoding == emu::Encoding::FiniteNanUnsignedZero) return hex_code(f, f.nan_code) + " (no -0)";
    return hex_code(f, f.nan_code) + (f.has_sign ? ", " + hex_code(f, f.nan_code | f.sign_mask()) : "");
}

std::string json_number(double v) {
    if (v == 0) return "0";
    return decimal_float(v);
}

void print_formats(bool json) {
    if (json) {
        std::printf("[\n");
        bool first = true;
        for (const emu::Format& f : emu::all_formats()) {
            std::printf(
                "%s  {\"name\": \"%s\", \"display_name\": \"%s\", \"bits\": %d, "
                "\"exponent_bits\": %d, \"mantissa_bits\": %d, \"bias\": %d, "
                "\"max_finite\": %s, \"min_normal\": %s, \"min_subnormal\": %s, "
                "\"has_inf\": %s, \"has_nan\": %s, \"signed\": %s}",
                first ? "" : ",\n", std::string(f.name).c_str(), std::string(f.display_name).c_str(), f.total_bits,
                f.exponent_bits, f.mantissa_bits, f.bias, json_number(f.max_finite).c_str(),
                json_number(f.min_normal).c_str(), json_number(f.min_subnormal).c_str(), f.has_inf ? "true" : "false",
                f.has_nan ? "true" : "false", f.has_sign ? "true" : "false");
            first = false;
        }
        std::printf("\n]\n");
        return;
    }
    std::printf("%-10s %4s %3s %3s %5s %-24s %-32s %-32s %-10s %s\n", "format", "bits", "E", "M", "bias", "max finite",
                "min normal", "min subnormal", "+Inf", "NaN");
    for (const emu::Format& f : emu::all_formats()) {
        const std::string subnormal = f.has_subnormals ? decimal_float(f.min_subnormal) + " (2^" +
                                                             std::to_string(std::ilogb(f.min_subnormal)) + ")"
                                                       : "none";
        const std::string normal =
            decimal_float(f.min_normal) + " (2^" + std::to_string(std::ilogb(f.min_normal)) + ")";
        std::printf("%-10s %4d %3d %3d %5d %-24s %-32s %-32s %-10s %s\n", std::string(f.name).c_str(), f.total_bits,
                    f.exponent_bits, f.mantissa_bits, f.bias, decimal_float(f.max_finite).c_str(), normal.c_str(),
                    subnormal.c_str(), codes_or_none(f, f.has_inf, f.inf_code).c_str(), nan_codes(f).c_str());
    }
}

std::string code_class(const emu::Format& f, std::uint32_t code) {
    if (f.is_nan_code(code)) return "nan";
    if (f.is_inf_code(code)) return "inf";
    if (f.encoding == emu::Encoding::ScaleE8M0) return "scale";
    const std::uint32_t magnitude = code & ~f.sign_mask();
    if (magnitude == 0) return "zero";
    return (magnitude >> f.mantissa_bits) == 0 ? "subnormal" : "normal";
}

std::string bit_fields(const emu::Format& f, std::uint32_t code) {
    std::string s;
    int bit = f.total_bits - 1;
    auto take = [&](int count) {
        for (int i = 0; i < count; ++i, --bit) s += (code >> bit) & 1 ? '1' : '0';
    };
    if (f.has_sign) {
        take(1);
        s += '.';
    }
    take(f.exponent_bits);
    if (f.mantissa_bits) {
        s += '.';
        take(f.mantissa_bits);
    }
    return s;
}

}  // namespace

void add_formats_command(CLI::App& app, CommandStatus& status) {
    auto json = std::make_shared<bool>(false);
    CLI::App* cmd = app.add_subcommand("formats", "Table of every format's properties");
    cmd->add_flag("--json", *json, "Print JSON instead of a table");
    cmd->callback([json, &status] {
        print_formats(*json);
        status.exit_code = 0;
    });
}

void add_decode_command(CLI::App& app, CommandStatus& status) {
    struct Args {
        std::string format;
        std::vector<std::string> codes;
    };
    auto args = std::make_shared<Args>();
    CLI::App* cmd = app.add_subcommand(
        "decode", "Decode codes: print code, bits (sign.exponent.mantissa), class, hex float, decimal");
    cmd->add_option("--format", args->format, "Format: " + emu::format_names_list())->required();
    cmd->add_option("codes", args->codes, "Codes in hex (0x7e) or decimal")->required();
    cmd->callback([args, &status] {
        const emu::Format& f = format_option("--format", args->format);
        int failures = 0;
        for (const std::string& text : args->codes) {
            const auto code = parse_code(text);
            if (!code || *code >= f.code_count()) {
                std::fflush(stdout);
                std::fprintf(stderr, "fp8lab decode: '%s' is not a code of %s (0 to %s)\n", text.c_str(),
                             std::string(f.name).c_str(), hex_code(f, f.code_count() - 1).c_str());
                ++failures;
                continue;
            }
            const auto c = static_cast<std::uint32_t>(*code);
            const double v = emu::decode(f, c);
            std::printf("%s\t%s\t%s\t%s\t%s\n", hex_code(f, c).c_str(), bit_fields(f, c).c_str(),
                        code_class(f, c).c_str(), hex_float(v).c_str(), decimal_float(v).c_str());
        }
        status.exit_code = failures ? 1 : 0;
    });
}

}  // namespace fp8lab::cli
