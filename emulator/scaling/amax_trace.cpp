// SPDX-License-Identifier: Apache-2.0
// Writing, reading and replaying amax traces.
#include "emulator/scaling/amax_trace.hpp"

#include "emulator/formats/convert.hpp"
#include "emulator/base/quoted_input.hpp"

#include <algorithm>
#include <set>
#include <string_view>
#include <cctype>
#include <cerrno>
#include <climits>
#include <cmath>
#include <cstdint>
#include <limits>
#include <cstdio>
#include <istream>
#include <ostream>
#include <sstream>
#include <stdexcept>

namespace fp8lab::emu {
namespace {

constexpr const char* kMagic = "# fp8lab amax trace v3";
constexpr const char* kColumns =
    "step,tensor,amax,scale,histogram,elements,zeros,flushed,saturated,subnormal,relative_error";
constexpr const char* kMagicV2 = "# fp8lab amax trace v2";
constexpr const char* kColumnsV2 = "step,tensor,amax,scale,histogram";
constexpr const char* kCountPrefix = "# records: ";

std::string hex(float v) {
    if (std::isnan(v)) return "nan";
    if (std::isinf(v)) return v < 0 ? "-inf" : "inf";
    char buffer[48];
    std::snprintf(buffer, sizeof buffer, "%a", double(v));
    return buffer;
}

[[noreturn]] void bad_line(const std::string& source, std::size_t line, const std::string& what) {
    throw std::runtime_error(source + ":" + std::to_string(line) + ": " + what);
}

bool ends_with(const std::string& s, const std::string& suffix) {
    return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

}  // namespace

void fill_histogram(AmaxTraceRecord& record, std::span<const float> x) {
    // floor(log2|x|) of a finite float32 lies in [-149, 127]: count in an array first.
    std::uint64_t bins[277] = {};
    std::uint64_t zeros = 0;
    for (float v : x) {
        if (v == 0.0f)
            ++zeros;
        else if (std::isfinite(v))
            ++bins[std::ilogb(v) + 149];
    }
    record.log2_histogram.clear();
    for (int i = 0; i < 277; ++i)
        if (bins[i]) record.log2_histogram[i - 149] = bins[i];
    record.zeros = zeros;
    record.has_histogram = true;
}

void write_amax_trace(std::ostream& out, const AmaxTrace& trace) {
    out << kMagic << "\n";
    for (const auto& [key, value] : trace.header) out << "# " << key << ": " << value << "\n";
    out << kColumns << "\n";
    for (const AmaxTraceRecord& r : trace.records) {
        out << r.step << ',' << r.tensor << ',' << hex(r.amax) << ',' << hex(r.scale) << ',';
        if (r.has_histogram) {
            bool first = true;
            for (const auto& [e, count] : r.log2_histogram) {
                out << (first ? "" : ";") << e << ':' << count;
                first = false;
            }
            out << (first ? "" : ";") << "zero:" << r.zeros;
        }
        if (r.numerics) {
            const TensorNumerics& n = *r.numerics;
            char error[32];
            std::snprintf(error, sizeof error, "%.6g", n.relative_error);
            out << ',' << n.elements << ',' << n.zeros << ',' << n.flushed << ',' << n.saturated << ',' << n.subnormal
                << ',' << error;
        } else {
            out << ",,,,,,";
        }
        out << '\n';
    }
    out << kCountPrefix << trace.records.size() << "\n";
}

namespace {

// A count or step: decimal digits only (no sign, no spaces), within uint64.
bool parse_count(const std::string& text, std::uint64_t& value) {
    if (text.empty() || text.size() > 20) return false;
    value = 0;
    for (char c : text) {
        if (c < '0' || c > '9') return false;
        const std::uint64_t digit = std::uint64_t(c - '0');
        if (value > (UINT64_MAX - digit) / 10) return false;
        value = value * 10 + digit;
    }
    return true;
}

// A float32 field: the whole text, within float32's range (nan and inf are words).
bool parse_float(const std::string& text, float& value) {
    if (text == "nan")
        value = std::numeric_limits<float>::quiet_NaN();
    else if (text == "inf")
        value = std::numeric_limits<float>::infinity();
    else if (text == "-inf")
        value = -std::numeric_limits<float>::infinity();
    else {
        if (text.empty() || std::isspace(static_cast<unsigned char>(text[0]))) return false;
        char* end = nullptr;
        errno = 0;
        value = std::strtof(text.c_str(), &end);
        if (*end || (errno == ERANGE && std::isinf(value))) return false;
        if (std::isnan(value) || std::isinf(value)) return false;  // "nan(...)", "infinity": not ours
    }
    return true;
}

std::string quoted(const std::string& field) { return quoted_input(field); }

bool known_tensor(const std::string& name) {
    return ends_with(name, ".input") || ends_with(name, ".weight") || ends_with(name, ".grad_output");
}

void parse_histogram(const std::string& text, AmaxTraceRecord& r, const std::string& source, std::size_t number) {
    r.has_histogram = true;
    bool saw_zero = false;
    // A record's counts add up to its tensor's elements: past 2^62 they are no tensor's, and
    // the replay's sums of them (int64) could wrap to negative numbers.
    constexpr std::uint64_t kMaxElements = std::uint64_t(1) << 62;
    std::uint64_t total = 0;
    std::size_t start = 0;
    while (start <= text.size()) {
        const std::size_t semicolon = std::min(text.find(';', start), text.size());
        const std::string bin = text.substr(start, semicolon - start);
        start = semicolon + 1;
        const auto colon = bin.find(':');
        if (colon == std::string::npos) bad_line(source, number, "histogram bin " + quoted(bin) + " is not e:count");
        const std::string key = bin.substr(0, colon);
        std::uint64_t count = 0;
        if (!parse_count(bin.substr(colon + 1), count))
            bad_line(source, number, "histogram count in " + quoted(bin) + " is not a count (0 to 2^64-1)");
        if (count > kMaxElements - total)
            bad_line(source, number, "histogram counts add up past 2^62 elements, more than any tensor holds");
        total += count;
        if (key == "zero") {
            if (saw_zero) bad_line(source, number, "histogram has two zero bins");
            saw_zero = true;
            r.zeros = count;
            continue;
        }
        const bool negative = !key.empty() && key[0] == '-';
        std::uint64_t magnitude = 0;
        if (!parse_count(key.substr(negative), magnitude) || (negative ? magnitude > 149 : magnitude > 127))
            bad_line(source, number, "histogram exponent in " + quoted(bin) + " is not an integer in [-149, 127]");
        const int e = negative ? -int(magnitude) : int(magnitude);
        if (!r.log2_histogram.emplace(e, count).second)
            bad_line(source, number, "histogram has exponent " + std::to_string(e) + " twice");
    }
}

}  // namespace

void attach_numerics(AmaxTrace& trace, const std::vector<TensorNumerics>& numerics) {
    std::map<std::pair<std::uint64_t, std::string>, const TensorNumerics*> by_cast;
    for (const TensorNumerics& n : numerics) by_cast[{n.step, n.tensor}] = &n;
    for (AmaxTraceRecord& r : trace.records)
        if (const auto found = by_cast.find({r.step, r.tensor}); found != by_cast.end()) r.numerics = *found->second;
}

namespace {

// The six numerics fields of a v3 record (fields[5..10]): all empty, or all given with
// the counts within the elements and the error a finite number >= 0 (or nan).
void parse_numerics(const std::vector<std::string>& fields, AmaxTraceRecord& r, const std::string& source,
                    std::size_t number) {
    const bool any = std::any_of(fields.begin() + 5, fields.end(), [](const std::string& f) { return !f.empty(); });
    if (!any) return;
    TensorNumerics n;
    n.step = r.step;
    n.tensor = r.tensor;
    n.amax = r.amax;
    n.scale = r.scale;
    const char* names[5] = {"elements", "zeros", "flushed", "saturated", "subnormal"};
    std::uint64_t* counts[5] = {&n.elements, &n.zeros, &n.flushed, &n.saturated, &n.subnormal};
    for (int k = 0; k < 5; ++k) {
        if (!parse_count(fields[5 + std::size_t(k)], *counts[k]))
            bad_line(source, number,
                     std::string(names[k]) + " " + quoted(fields[5 + std::size_t(k)]) +
                         " is not a count (the numerics fields are all empty or all given)");
        if (k > 0 && *counts[k] > n.elements)
            bad_line(source, number,
                     std::string(names[k]) + " " + fields[5 + std::size_t(k)] + " is more than the " + fields[5] +
                         " elements");
    }
    if (n.zeros + n.flushed > n.elements)
        bad_line(source, number, "zeros and flushed add up to more than the " + fields[5] + " elements");
    const std::string& error = fields[10];
    char* end = nullptr;
    errno = 0;
    n.relative_error = error == "nan" ? std::numeric_limits<double>::quiet_NaN() : std::strtod(error.c_str(), &end);
    const bool number_ok =
        error == "nan" || (!error.empty() && !std::isspace(static_cast<unsigned char>(error[0])) && *end == '\0' &&
                           errno != ERANGE && std::isfinite(n.relative_error) && n.relative_error >= 0);
    if (!number_ok) bad_line(source, number, "relative_error " + quoted(error) + " is not a number >= 0 (or nan)");
    r.numerics = n;
}

}  // namespace

AmaxTrace read_amax_trace(std::istream& in, const std::string& source) {
    AmaxTrace trace;
    std::string line;
    std::size_t number = 0, count_line = 0;
    bool saw_magic = false, saw_columns = false, v2 = false;
    std::uint64_t declared = 0;
    std::vector<std::string> tensors_this_step;
    while (std::getline(in, line)) {
        ++number;
        if (!line.empty() && line.back() == '\r') line.pop_back();
        if (line.empty()) continue;
        if (count_line) bad_line(source, number, "text after the '# records:' line that ends a trace");
        if (line[0] == '#') {
            if (line == kMagic || line == kMagicV2) {
                saw_magic = true;
                v2 = line == kMagicV2;
            } else if (line == "# fp8lab amax trace v1")
                bad_line(source, number,
                         "a v1 trace carries no record count, so a truncated one cannot be told "
                         "apart; this fp8lab reads v2 and v3 (record the trace again)");
            else if (line.rfind(kCountPrefix, 0) == 0) {
                if (!saw_columns) bad_line(source, number, "'# records:' before the column header");
                if (!parse_count(line.substr(std::string(kCountPrefix).size()), declared))
                    bad_line(source, number, "'# records:' is not followed by a count");
                count_line = number;
            } else if (const auto colon = line.find(": "); colon != std::string::npos && line.rfind("# ", 0) == 0)
                // Only "# key: value" is a header line (written back as such); "#(records: 4"
                // read as the key "records" wrote back a closing line before the columns.
                trace.header.emplace_back(line.substr(2, colon - 2), line.substr(colon + 2));
            continue;
        }
        if (!saw_magic) bad_line(source, number, std::string("not an fp8lab amax trace (no '") + kMagic + "' line)");
        if (!saw_columns) {
            const char* columns = v2 ? kColumnsV2 : kColumns;
            if (line != columns) bad_line(source, number, std::string("expected the header '") + columns + "'");
            saw_columns = true;
            continue;
        }
        std::vector<std::string> fields;
        std::size_t start = 0;
        while (start <= line.size()) {
            const std::size_t comma = std::min(line.find(',', start), line.size());
            fields.push_back(line.substr(start, comma - start));
            start = comma + 1;
        }
        const std::size_t expected_fields = v2 ? 5 : 11;
        if (fields.size() != expected_fields)
            bad_line(source, number, "expected " + std::to_string(expected_fields) + " comma-separated fields");
        AmaxTraceRecord r;
        if (!parse_count(fields[0], r.step))
            bad_line(source, number, "step " + quoted(fields[0]) + " is not a count (0 to 2^64-1)");
        if (!trace.records.empty() && r.step < trace.records.back().step)
            bad_line(source, number,
                     "step " + fields[0] + " comes after step " + std::to_string(trace.records.back().step));
        if (trace.records.empty() || r.step != trace.records.back().step) tensors_this_step.clear();
        r.tensor = fields[1];
        if (!known_tensor(r.tensor))
            bad_line(source, number, "tensor " + quoted(r.tensor) + " does not end in .input, .weight or .grad_output");
        // A name is printed back (replay, the labs): control characters would reach the terminal.
        if (std::any_of(r.tensor.begin(), r.tensor.end(), [](char c) { return (unsigned char)c < 0x20 || c == 0x7f; }))
            bad_line(source, number, "tensor " + quoted(r.tensor) + " holds a control character");
        if (std::find(tensors_this_step.begin(), tensors_this_step.end(), r.tensor) != tensors_this_step.end())
            bad_line(source, number, "tensor " + quoted(r.tensor) + " appears twice in step " + fields[0]);
        tensors_this_step.push_back(r.tensor);
        if (!parse_float(fields[2], r.amax) || r.amax < 0)
            bad_line(source, number, "amax " + quoted(fields[2]) + " is not a float32 >= 0 (or inf, nan)");
        if (!parse_float(fields[3], r.scale) || !(r.scale > 0) || std::isinf(r.scale))
            bad_line(source, number, "scale " + quoted(fields[3]) + " is not a finite float32 > 0");
        if (!fields[4].empty()) parse_histogram(fields[4], r, source, number);
        if (!v2) parse_numerics(fields, r, source, number);
        trace.records.push_back(std::move(r));
    }
    if (!saw_magic) throw std::runtime_error(source + ": empty, or not an fp8lab amax trace");
    if (!count_line) bad_line(source, number, "the trace ends without its '# records: N' line: the file is truncated");
    if (declared != trace.records.size())
        bad_line(source, count_line,
                 "the trace declares " + std::to_string(declared) + " records but holds " +
                     std::to_string(trace.records.size()) + ": the file is damaged");
    return trace;
}

TensorRole role_of_tensor(const std::string& name) {
    if (ends_with(name, ".grad_output")) return TensorRole::GradOutput;
    if (ends_with(name, ".weight")) return TensorRole::Weight;
    return TensorRole::Input;
}

std::vector<ReplayRow> replay_delayed_scaling(const AmaxTrace& trace, FormatRecipe formats,
                                              const DelayedScalingConfig& config) {
    validate(config);
    // Each tensor keeps `history` amaxes: bounded before anything is allocated, so that a
    // trace of many tensor names and a long history cannot take the machine's memory.
    constexpr std::uint64_t kMaxHistoryBytes = std::uint64_t(1) << 30;
    std::set<std::string_view> names;
    for (const AmaxTraceRecord& r : trace.records) names.insert(r.tensor);
    const std::uint64_t history_bytes =
        std::uint64_t(names.size()) * std::uint64_t(config.history_length) * sizeof(float);
    if (history_bytes > kMaxHistoryBytes)
        throw std::invalid_argument(
            "replay: " + std::to_string(names.size()) + " tensors with a history of " +
            std::to_string(config.history_length) + " need " + std::to_string(history_bytes >> 20) +
            " MiB of amax history, past the 1024 MiB a replay may take; use a shorter --history");
    std::map<std::string, DelayedScaling> states;
    std::vector<ReplayRow> rows;
    std::uint64_t current_step = trace.records.empty() ? 0 : trace.records.front().step;
    std::vector<std::string> seen_this_step;
    auto end_step = [&] {
        for (const std::string& t : seen_this_step) states.at(t).update();
        seen_this_step.clear();
    };
    for (const AmaxTraceRecord& r : trace.records) {
        if (r.step != current_step) {
            end_step();
            current_step = r.step;
        }
        const Format& f = format_for(formats, role_of_tensor(r.tensor));
        auto it = states.try_emplace(r.tensor, f, config).first;
        ReplayRow row;
        row.step = r.step;
        row.tensor = r.tensor;
        row.amax = r.amax;
        row.scale = it->second.scale().scale;
        row.amax_overflows = double(r.amax) * row.scale > f.max_finite;
        if (row.amax_overflows) {  // past max; clipped only if it does not round back to max
            const std::uint32_t code =
                encode(f, double(r.amax) * row.scale, ConvertOptions{RoundingMode::NearestEven, Saturation::None});
            row.amax_clips = f.is_nan_code(code) || f.is_inf_code(code);
        }
        if (r.has_histogram) {
            const double flush_below = f.min_subnormal / 2;  // at most this rounds to zero
            row.overflowed_at_least = row.flushed_at_least = 0;
            for (const auto& [e, count] : r.log2_histogram) {
                // Past max by more than half a quantum: rounding cannot bring it back.
                const double overflow_from = f.max_finite * (1.0 + std::ldexp(1.0, -f.mantissa_bits - 1));
                if (std::ldexp(double(row.scale), e) > overflow_from) row.overflowed_at_least += count;
                if (std::ldexp(double(row.scale), e + 1) <= flush_below) row.flushed_at_least += count;
            }
        }
        it->second.record_amax(r.amax);
        seen_this_step.push_back(r.tensor);
        rows.push_back(row);
    }
    end_step();
    return rows;
}

}  // namespace fp8lab::emu
