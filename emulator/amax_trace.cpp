// Writing, reading and replaying amax traces.
#include "emulator/amax_trace.hpp"

#include <cmath>
#include <cstdio>
#include <istream>
#include <ostream>
#include <sstream>
#include <stdexcept>

namespace fp8lab::emu {
namespace {

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
        if (v == 0.0f) ++zeros;
        else if (std::isfinite(v)) ++bins[std::ilogb(v) + 149];
    }
    record.log2_histogram.clear();
    for (int i = 0; i < 277; ++i)
        if (bins[i]) record.log2_histogram[i - 149] = bins[i];
    record.zeros = zeros;
    record.has_histogram = true;
}

void write_amax_trace(std::ostream& out, const AmaxTrace& trace) {
    out << "# fp8lab amax trace v1\n";
    for (const auto& [key, value] : trace.header) out << "# " << key << ": " << value << "\n";
    out << "step,tensor,amax,scale,histogram\n";
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
        out << '\n';
    }
}

AmaxTrace read_amax_trace(std::istream& in, const std::string& source) {
    AmaxTrace trace;
    std::string line;
    std::size_t number = 0;
    bool saw_magic = false, saw_columns = false;
    while (std::getline(in, line)) {
        ++number;
        if (!line.empty() && line.back() == '\r') line.pop_back();
        if (line.empty()) continue;
        if (line[0] == '#') {
            if (line == "# fp8lab amax trace v1") saw_magic = true;
            else if (const auto colon = line.find(": "); colon != std::string::npos)
                trace.header.emplace_back(line.substr(2, colon - 2), line.substr(colon + 2));
            continue;
        }
        if (!saw_magic) bad_line(source, number, "not an fp8lab amax trace (no '# fp8lab amax trace v1' line)");
        if (!saw_columns) {
            if (line != "step,tensor,amax,scale,histogram")
                bad_line(source, number, "expected the header 'step,tensor,amax,scale,histogram'");
            saw_columns = true;
            continue;
        }
        std::vector<std::string> fields;
        std::stringstream ss(line);
        for (std::string f; std::getline(ss, f, ',');) fields.push_back(f);
        if (line.back() == ',') fields.emplace_back();
        if (fields.size() != 5) bad_line(source, number, "expected 5 comma-separated fields");
        AmaxTraceRecord r;
        char* end = nullptr;
        r.step = std::strtoull(fields[0].c_str(), &end, 10);
        if (fields[0].empty() || *end) bad_line(source, number, "step '" + fields[0] + "' is not a number");
        r.tensor = fields[1];
        if (r.tensor.empty()) bad_line(source, number, "empty tensor name");
        r.amax = std::strtof(fields[2].c_str(), &end);
        if (fields[2].empty() || *end) bad_line(source, number, "amax '" + fields[2] + "' is not a number");
        r.scale = std::strtof(fields[3].c_str(), &end);
        if (fields[3].empty() || *end) bad_line(source, number, "scale '" + fields[3] + "' is not a number");
        if (!fields[4].empty()) {
            r.has_histogram = true;
            std::stringstream hs(fields[4]);
            for (std::string bin; std::getline(hs, bin, ';');) {
                const auto colon = bin.find(':');
                if (colon == std::string::npos) bad_line(source, number, "histogram bin '" + bin + "' has no ':'");
                const std::string key = bin.substr(0, colon);
                const std::uint64_t count = std::strtoull(bin.c_str() + colon + 1, &end, 10);
                if (*end) bad_line(source, number, "histogram count in '" + bin + "' is not a number");
                if (key == "zero") r.zeros = count;
                else {
                    const long e = std::strtol(key.c_str(), &end, 10);
                    if (key.empty() || *end) bad_line(source, number, "histogram bin '" + bin + "' is not e:count");
                    r.log2_histogram[int(e)] = count;
                }
            }
        }
        trace.records.push_back(std::move(r));
    }
    if (!saw_magic) throw std::runtime_error(source + ": empty, or not an fp8lab amax trace");
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
