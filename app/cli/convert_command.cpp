// SPDX-License-Identifier: Apache-2.0
// `fp8lab convert`: values (arguments or one per stdin line) to codes of a format.
#include <CLI/CLI.hpp>

#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "app/options/command_options.hpp"
#include "app/cli/commands.hpp"
#include "app/options/number_text.hpp"
#include "app/options/usage_error.hpp"
#include "emulator/base/quoted_input.hpp"
#include "emulator/formats/convert.hpp"

namespace fp8lab::cli {
using options::decimal_float;
using options::format_option;
using options::hex_code;
using options::hex_float;
using options::InputPrecision;
using options::integer_in;
using options::parse_number;
using options::parse_number_round_to_odd;
using options::rounding_option;
using options::saturation_option;
using options::seed_value;
using options::trim;
using options::UsageError;
namespace {

struct ConvertArgs {
    std::string to, round = "nearest-even", saturate = "finite", from = "f64";
    std::uint64_t seed = 0;
    int random_bits = 32;
    std::vector<std::string> values;
};

// Buffered output; everything after the input text of a line is cached per code, since
// a format has few codes and printf-style formatting would dominate a long stream.
class ConvertWriter {
  public:
    explicit ConvertWriter(const emu::Format& format) : format_(format) {
        if (format.total_bits <= 16) suffix_.resize(format.code_count());
    }
    ~ConvertWriter() { flush(); }

    void write(std::string_view input, std::uint32_t code) {
        out_.append(input);
        if (!suffix_.empty()) {
            std::string& s = suffix_[code];
            if (s.empty()) s = make_suffix(code);
            out_.append(s);
        } else {
            out_.append(make_suffix(code));
        }
        if (out_.size() > (1u << 20)) flush();
    }
    void flush() {
        std::fwrite(out_.data(), 1, out_.size(), stdout);
        out_.clear();
        std::fflush(stdout);
    }

  private:
    std::string make_suffix(std::uint32_t code) const {
        const double v = emu::decode(format_, code);
        return "\t" + hex_code(format_, code) + "\t" + hex_float(v) + "\t" + decimal_float(v) + "\n";
    }
    const emu::Format& format_;
    std::vector<std::string> suffix_;
    std::string out_;
};

class Converter {
  public:
    Converter(const ConvertArgs& a) : format_(format_option("--to", a.to)), writer_(format_) {
        options_.rounding = rounding_option("--round", a.round);
        options_.saturation = saturation_option("--saturate", a.saturate);
        options_.seed = a.seed;
        options_.random_bits = a.random_bits;
        if (a.from == "f32")
            precision_ = InputPrecision::Float32;
        else if (a.from == "f64")
            precision_ = InputPrecision::Float64;
        else
            throw UsageError("--from: unknown input precision " + emu::quoted_input(a.from) + " (f32 or f64)");
    }

    // One value; `where` names it in an error message ("line 3", "argument 2").
    void convert(std::string_view text, const std::string& where) {
        const std::string_view token = trim(text);
        // float64 text is rounded once (parse_number_round_to_odd); float32 text is first
        // a float32, as the input it stands for is.
        const auto value =
            precision_ == InputPrecision::Float64 ? parse_number_round_to_odd(token) : parse_number(token, precision_);
        if (token.empty()) {
            writer_.flush();
            std::fprintf(stderr, "fp8lab convert: %s: empty line\n", where.c_str());
            ++failures_;
            return;
        }
        if (!value) {
            writer_.flush();  // keep stdout and stderr in order for a reader of both
            // Quoted short and escaped: a line of control characters or megabytes is not echoed.
            std::fprintf(stderr, "fp8lab convert: %s: cannot parse %s as a number\n", where.c_str(),
                         emu::quoted_input(token).c_str());
            ++failures_;
            return;
        }
        // A value read as float32 converts as a float32 does (CUDA's float32 NaN rule differs
        // from its float64 one: 0x7F in E5M2 whatever the sign).
        const std::uint32_t code = precision_ == InputPrecision::Float32
                                       ? emu::encode(format_, static_cast<float>(*value), options_, index_)
                                       : emu::encode(format_, *value, options_, index_);
        ++index_;
        writer_.write(token, code);
    }

    static constexpr std::size_t kMaxLineBytes = 4096;

    void convert_stream(std::FILE* in) {
        std::vector<char> buffer(1 << 20);
        std::string pending;
        std::uint64_t line = 0;
        std::size_t got;
        while ((got = std::fread(buffer.data(), 1, buffer.size(), in)) > 0) {
            std::string_view chunk(buffer.data(), got);
            std::size_t start = 0, nl;
            while ((nl = chunk.find('\n', start)) != std::string_view::npos) {
                std::string_view text = chunk.substr(start, nl - start);
                if (!pending.empty()) {
                    pending.append(text);
                    text = pending;
                }
                convert(text, "line " + std::to_string(++line));
                pending.clear();
                start = nl + 1;
            }
            pending.append(chunk.substr(start));
            // A line no number needs (a binary file, /dev/zero): stop at once, before it
            // gathers memory without end.
            if (pending.size() > kMaxLineBytes)
                throw std::runtime_error("standard input line " + std::to_string(line + 1) + " is longer than " +
                                         std::to_string(kMaxLineBytes) +
                                         " bytes: not one number per line; stopped there");
        }
        if (!pending.empty()) convert(pending, "line " + std::to_string(++line));
    }

    int finish() {
        writer_.flush();
        if (failures_)
            std::fprintf(stderr, "fp8lab convert: %llu value(s) could not be parsed\n",
                         static_cast<unsigned long long>(failures_));
        return failures_ ? 1 : 0;
    }

  private:
    const emu::Format& format_;
    emu::ConvertOptions options_;
    InputPrecision precision_ = InputPrecision::Float64;
    ConvertWriter writer_;
    std::uint64_t index_ = 0;  // the element index that picks stochastic bits
    std::uint64_t failures_ = 0;
};

}  // namespace

void add_convert_command(CLI::App& app, CommandStatus& status) {
    auto args = std::make_shared<ConvertArgs>();
    CLI::App* cmd =
        app.add_subcommand("convert", "Convert values to a format; print code, hex float and decimal per value");
    cmd->add_option("--to", args->to, "Target format: " + emu::format_names_list())->required();
    cmd->add_option("--round", args->round, "Rounding mode: " + emu::rounding_mode_names_list())->capture_default_str();
    cmd->add_option("--saturate", args->saturate, "Overflow handling: finite or none")->capture_default_str();
    cmd->add_option("--from", args->from, "Parse values to the nearest f64 (default) or f32, then convert once")
        ->capture_default_str();
    cmd->add_option("--seed", args->seed, "Seed of the stochastic rounding bits")
        ->capture_default_str()
        ->check(seed_value());
    cmd->add_option("--random-bits", args->random_bits, "Random bits compared with the discarded fraction (stochastic)")
        ->capture_default_str()
        ->check(integer_in({1, emu::kMaxRandomBits}));
    // Values are collected as extras: "-inf" or "-0x1p3" look like options to CLI11.
    cmd->allow_extras();
    cmd->footer(
        "VALUES: decimal, hex float (0x1.8p+3), inf, -inf, nan, as arguments after the "
        "options, or one per line on standard input when there are none.");
    cmd->callback([args, cmd, &status] {
        for (std::string& text : cmd->remaining()) {
            if (!text.empty() && text[0] == '-' && !parse_number(text, InputPrecision::Float64))
                throw UsageError("convert: unknown option " + emu::quoted_input(text));
            args->values.push_back(std::move(text));
        }
        for (const std::string& text : status.after_options) args->values.push_back(text);
        Converter converter(*args);
        if (args->values.empty()) {
            converter.convert_stream(stdin);
        } else {
            for (std::size_t i = 0; i < args->values.size(); ++i)
                converter.convert(args->values[i], "argument " + std::to_string(i + 1));
        }
        status.exit_code = converter.finish();
    });
}

}  // namespace fp8lab::cli
