// SPDX-License-Identifier: Apache-2.0
// Reading and writing the recorded-measurement CSV files, strictly and with line numbers.
#include "labs/experiments/recorded_csv.hpp"

#include <cstdlib>
#include <ctime>
#include <optional>
#include <istream>
#include <ostream>
#include <stdexcept>

#include "emulator/base/integer_text.hpp"
#include "emulator/base/quoted_input.hpp"

namespace fp8lab::labs {

std::string header_value(const RecordedHeader& header, const std::string& key) {
    for (const auto& [k, v] : header)
        if (k == key) return v;
    return "unknown";
}

std::string measurement_note(bool measured_now, const RecordedHeader& header, const std::string& asset_file) {
    return std::string(measured_now ? "Measured now on " : "Recorded on ") + header_value(header, "device") +
           (measured_now ? "" : " (" + header_value(header, "date") + ", assets/" + asset_file + ")") + "; " +
           header_value(header, "configuration") + ".";
}

std::string utc_now_text() {
    const std::time_t now = std::time(nullptr);
    char text[32];
    std::strftime(text, sizeof text, "%Y-%m-%d %H:%M UTC", std::gmtime(&now));
    return text;
}

void write_recorded_csv(std::ostream& out, const std::string& magic, const RecordedHeader& header,
                        const std::string& columns, const std::vector<RecordedRow>& rows) {
    out << magic << "\n";
    for (const auto& [k, v] : header) out << "# " << k << ": " << v << "\n";
    out << columns << "\n";
    for (const RecordedRow& row : rows) {
        for (std::size_t i = 0; i < row.size(); ++i) out << (i ? "," : "") << row[i];
        out << "\n";
    }
}

RecordedHeader read_recorded_csv(std::istream& in, const std::string& source, const std::string& magic,
                                 const std::string& columns, const RowReader& row) {
    RecordedHeader header;
    std::string line;
    int number = 0, rows = 0;
    bool in_rows = false;
    const auto fail = [&](const std::string& why) {
        throw std::runtime_error(source + ":" + std::to_string(number) + ": " + why);
    };
    while (std::getline(in, line)) {
        ++number;
        line.erase(line.find_last_not_of(" \t\r") + 1);
        if (number == 1) {
            if (line != magic) fail("not the expected file (its first line should be '" + magic + "')");
        } else if (!in_rows && line.rfind("# ", 0) == 0) {
            const auto colon = line.find(": ");
            if (colon == std::string::npos) fail("a header line needs 'key: value'");
            header.emplace_back(line.substr(2, colon - 2), line.substr(colon + 2));
        } else if (!in_rows) {
            if (line != columns) fail("unexpected column names (expected '" + columns + "')");
            in_rows = true;
        } else if (!line.empty()) {
            row(line, fail);
            ++rows;
        }
    }
    if (rows == 0) fail("no measurements");
    return header;
}

std::vector<std::string> split_fields(const std::string& line, std::size_t count, const FailFn& fail,
                                      bool last_takes_rest) {
    std::vector<std::string> fields;
    std::size_t start = 0;
    while (true) {
        const std::size_t comma =
            fields.size() + 1 == count && last_takes_rest ? std::string::npos : line.find(',', start);
        std::string field = line.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
        const std::size_t first = field.find_first_not_of(" \t");
        field =
            first == std::string::npos ? std::string() : field.substr(first, field.find_last_not_of(" \t") - first + 1);
        fields.push_back(std::move(field));
        if (comma == std::string::npos) break;
        start = comma + 1;
    }
    if (fields.size() != count)
        fail("expected " + std::to_string(count) + " comma-separated fields, found " + std::to_string(fields.size()));
    return fields;
}

long long integer_field(const std::string& text, const char* name, emu::IntegerBounds bounds, const FailFn& fail) {
    const std::optional<std::int64_t> v = emu::parse_signed(text);
    if (!v || !emu::contains(bounds, *v))
        fail(std::string(name) + " " + emu::quoted_input(text) + " is not a whole number in " + emu::interval(bounds));
    return *v;
}

double real_field(const std::string& text, const char* name, emu::RealBounds bounds, const FailFn& fail) {
    char* end = nullptr;
    const double v = text.empty() ? 0 : std::strtod(text.c_str(), &end);
    if (text.empty() || *end != '\0' || !emu::contains(bounds, v))
        fail(std::string(name) + " " + emu::quoted_input(text) + " is not a finite number in " + emu::interval(bounds));
    return v;
}

}  // namespace fp8lab::labs
