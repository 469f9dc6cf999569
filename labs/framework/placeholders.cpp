// SPDX-License-Identifier: Apache-2.0
// Placeholder filling: every number comes from the emulator's format descriptors.
#include "labs/framework/placeholders.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <mutex>
#include <utility>

#include "emulator/formats/format.hpp"
#include "emulator/formats/value_grid.hpp"
#include "labs/framework/table.hpp"
#include "labs/framework/training_mapping.hpp"
#include "emulator/base/quoted_input.hpp"

namespace fp8lab::labs {
namespace {

std::uint64_t count_codes(const emu::Format& f, bool (emu::Format::*test)(std::uint32_t) const) {
    if (f.total_bits > 16) {  // FP32: from the layout (all-ones exponent, both signs)
        return test == &emu::Format::is_nan_code ? 2 * ((std::uint64_t(1) << f.mantissa_bits) - 1) : 2;
    }
    std::uint64_t n = 0;
    for (std::uint64_t c = 0; c < f.code_count(); ++c) n += (f.*test)(std::uint32_t(c));
    return n;
}

double compute_property(const emu::Format& f, const std::string& name) {
    if (name == "max") return f.max_finite;
    if (name == "min_normal") return f.min_normal;
    if (name == "min_subnormal") return f.min_subnormal;
    if (name == "bias") return f.bias;
    if (name == "bits") return f.total_bits;
    if (name == "exponent_bits") return f.exponent_bits;
    if (name == "mantissa_bits") return f.mantissa_bits;
    if (name == "epsilon") return std::ldexp(1.0, -f.mantissa_bits);
    if (name == "min_exponent") return f.min_exponent;
    if (name == "max_exponent") return f.max_exponent;
    if (name == "nan_codes") return double(count_codes(f, &emu::Format::is_nan_code));
    if (name == "inf_codes") return double(count_codes(f, &emu::Format::is_inf_code));
    if (name == "finite_values") {
        if (f.total_bits > 16) throw std::invalid_argument("finite_values is only listed for formats up to 16 bits");
        return double(emu::representable_values(f).size());  // -0 and +0 are one value
    }
    if (name == "binades") {
        const double smallest = f.has_subnormals ? f.min_subnormal : f.min_normal;
        return std::log2(f.max_finite / smallest);
    }
    std::string known;
    for (const std::string& p : placeholder_properties()) known += (known.empty() ? "" : ", ") + p;
    throw std::invalid_argument("unknown property " + emu::quoted_input(name) + " (known: " + known + ")");
}

// Properties that count codes walk up to 65536 of them: each is computed once per format.
double property(const emu::Format& f, const std::string& name) {
    static std::mutex mutex;
    static std::map<std::pair<const emu::Format*, std::string>, double> known;
    const std::lock_guard<std::mutex> lock(mutex);
    const auto key = std::make_pair(&f, name);
    if (const auto it = known.find(key); it != known.end()) return it->second;
    const double value = compute_property(f, name);  // throws for an unknown name: nothing stored
    known.emplace(key, value);
    return value;
}

// Walks the placeholders in one pass (linear in the text: the line number is carried
// along, and the current line's end and the next "}}" are found once and reused, so a line
// of many unclosed "{{" is not rescanned for each); `fill` gets (line, inside, unclosed)
// and returns the replacement. `examined`, when given, receives the bytes the searches
// passed over (what the tests hold to a multiple of the text's length).
template <class Fill>
std::string walk(std::string_view markdown, Fill fill, std::size_t* examined = nullptr) {
    std::string out;
    out.reserve(markdown.size());
    std::size_t pos = 0, line_end = 0, next_close = 0, seen = 0;
    bool line_known = false, close_known = false;
    int line = 1;
    while (true) {
        const std::size_t open = markdown.find("{{", pos);
        seen += (open == std::string_view::npos ? markdown.size() : open) - pos;
        if (open == std::string_view::npos) break;
        const std::string_view before = markdown.substr(pos, open - pos);
        line += int(std::count(before.begin(), before.end(), '\n'));
        seen += before.size();
        out.append(before);
        if (!line_known || open > line_end) {
            line_end = std::min(markdown.find('\n', open), markdown.size());
            seen += line_end - open;
            line_known = true;
        }
        if (!close_known || next_close < open + 2) {
            next_close = std::min(markdown.find("}}", open + 2), markdown.size());
            seen += next_close - open;
            close_known = true;
        }
        if (next_close >= line_end) {
            out += fill(line, std::string_view{}, true);
            pos = open + 2;
            continue;
        }
        out += fill(line, markdown.substr(open + 2, next_close - open - 2), false);
        pos = next_close + 2;
    }
    out.append(markdown.substr(pos));
    if (examined) *examined = seen;
    return out;
}

}  // namespace

const std::vector<std::string>& placeholder_properties() {
    static const std::vector<std::string> names = {
        "max",     "min_normal",   "min_subnormal", "bias",      "bits",      "exponent_bits", "mantissa_bits",
        "epsilon", "min_exponent", "max_exponent",  "nan_codes", "inf_codes", "finite_values", "binades"};
    return names;
}

namespace {

// The labs' experiment's settings that lab text states ({{lab.seeds}}), from lab_experiment().
const PlaceholderValues& lab_experiment_values() {
    static const PlaceholderValues values = [] {
        const emu::Experiment e = lab_experiment();
        return PlaceholderValues{{"lab.seeds", std::to_string(e.seeds)},
                                 {"lab.warmup_steps", std::to_string(e.optimizer.schedule.warmup_steps)},
                                 {"lab.lr_floor", number_text(e.optimizer.schedule.floor)},
                                 {"lab.fast_accumulation_bits", std::to_string(emu::kFastAccumulationFractionBits)}};
    }();
    return values;
}

}  // namespace

std::string placeholder_value(std::string_view inside, const PlaceholderValues& values) {
    std::string text(inside);
    if (const auto given = values.find(text); given != values.end()) return given->second;
    if (const auto lab = lab_experiment_values().find(text); lab != lab_experiment_values().end()) return lab->second;
    std::string modifier;
    if (const auto colon = text.find(':'); colon != std::string::npos) {
        modifier = text.substr(colon + 1);
        text.resize(colon);
    }
    const auto dot = text.find('.');
    if (dot == std::string::npos) {
        std::string names;
        for (const auto& [name, value] : values) names += (names.empty() ? "" : ", ") + name;
        throw PlaceholderError(0,
                               "placeholder {{" + std::string(inside) + "}} is not FORMAT.property" +
                                   (names.empty() ? std::string() : " nor one of the code's values (" + names + ")"));
    }
    const emu::Format* format = emu::find_format(text.substr(0, dot));
    if (!format)
        throw PlaceholderError(0, "placeholder {{" + std::string(inside) + "}}: unknown format '" +
                                      text.substr(0, dot) + "' (known: " + emu::format_names_list() + ")");
    double value;
    try {
        value = property(*format, text.substr(dot + 1));
    } catch (const std::invalid_argument& e) {
        throw PlaceholderError(0, "placeholder {{" + std::string(inside) + "}}: " + e.what());
    }
    if (modifier.empty()) return shortest_text(value);
    if (modifier == "pow2") {
        int exponent;
        if (value <= 0 || std::frexp(value, &exponent) != 0.5)
            throw PlaceholderError(
                0, "placeholder {{" + std::string(inside) + "}}: " + shortest_text(value) + " is not a power of two");
        return "2^" + std::to_string(exponent - 1);
    }
    if (modifier == "round") return shortest_text(std::round(value));
    throw PlaceholderError(
        0, "placeholder {{" + std::string(inside) + "}}: unknown modifier ':" + modifier + "' (known: :pow2, :round)");
}

std::string render_placeholders(std::string_view markdown, const PlaceholderValues& values) {
    return walk(markdown, [&](int line, std::string_view inside, bool unclosed) -> std::string {
        if (unclosed) throw PlaceholderError(line, "'{{' is not closed by '}}' on the same line");
        try {
            return placeholder_value(inside, values);
        } catch (const PlaceholderError& e) {
            throw PlaceholderError(line, e.what());
        }
    });
}

std::vector<PlaceholderError> placeholder_errors(std::string_view markdown, const PlaceholderValues& values,
                                                 std::size_t* examined) {
    // The first error of each line, and at most kMaxErrors lines: a line of 400,000 unclosed
    // braces is one message, not 400,000.
    constexpr std::size_t kMaxErrors = 50;
    std::vector<PlaceholderError> errors;
    std::size_t more = 0;
    int last_line = -1;
    const auto report = [&](int line, const std::string& why) {
        if (line == last_line) return;
        last_line = line;
        if (errors.size() < kMaxErrors)
            errors.emplace_back(line, why);
        else
            ++more;
    };
    walk(
        markdown,
        [&](int line, std::string_view inside, bool unclosed) -> std::string {
            if (unclosed) {
                report(line, "'{{' is not closed by '}}' on the same line");
                return {};
            }
            try {
                return placeholder_value(inside, values);
            } catch (const PlaceholderError& e) {
                report(line, e.what());
                return {};
            }
        },
        examined);
    if (more)
        errors.emplace_back(errors.back().line, "and placeholder errors on " + std::to_string(more) +
                                                    " more line(s) after this one, not listed");
    return errors;
}

}  // namespace fp8lab::labs
