// Reading and writing the recorded-measurement CSV files, strictly and with line numbers.
#include "labs/recorded_csv.hpp"

#include <ctime>
#include <istream>
#include <ostream>
#include <stdexcept>

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

void write_recorded_header(std::ostream& out, const std::string& magic, const RecordedHeader& header,
                           const std::string& columns) {
    out << magic << "\n";
    for (const auto& [k, v] : header) out << "# " << k << ": " << v << "\n";
    out << columns << "\n";
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

}  // namespace fp8lab::labs
