// SPDX-License-Identifier: Apache-2.0
// CSV writing for figures and tables.
#include "app/export/figure_csv.hpp"

#include <cmath>

namespace fp8lab::exporter {
namespace {

std::string num(double v) {
    if (std::isnan(v)) return "nan";
    if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
    return labs::shortest_text(v);
}

const char* kind_name(labs::SeriesKind k) {
    switch (k) {
    case labs::SeriesKind::Line:
        return "line";
    case labs::SeriesKind::Scatter:
        return "scatter";
    case labs::SeriesKind::Stairs:
        return "stairs";
    case labs::SeriesKind::VerticalLines:
        return "vertical-lines";
    case labs::SeriesKind::Band:
        return "band";
    case labs::SeriesKind::Bars:
        return "bars";
    case labs::SeriesKind::Histogram:
        return "histogram";
    case labs::SeriesKind::Heatmap:
        return "heatmap";
    }
    return "?";
}

}  // namespace

std::string csv_field(const std::string& text) {
    if (text.find_first_of(",\"\n") == std::string::npos) return text;
    std::string out = "\"";
    for (char c : text) out += c == '"' ? std::string("\"\"") : std::string(1, c);
    return out + "\"";
}

std::string figure_csv(const labs::Figure& f) {
    std::string out = "series,kind,x,y,y_upper\n";
    std::string heat;
    for (std::size_t si = 0; si < f.series.size(); ++si) {
        const labs::Series& s = f.series[si];
        const std::string name = csv_field(s.name.empty() ? "series " + std::to_string(si + 1) : s.name);
        if (s.kind == labs::SeriesKind::Heatmap) {
            if (heat.empty()) heat = "series,row,column,value\n";
            for (int r = 0; r < s.rows; ++r)
                for (int c = 0; c < s.columns; ++c)
                    heat += name + "," + std::to_string(r) + "," + std::to_string(c) + "," +
                            num(s.values[std::size_t(r) * s.columns + c]) + "\n";
            continue;
        }
        for (std::size_t i = 0; i < s.x.size(); ++i) {
            out += name + "," + kind_name(s.kind) + "," + num(s.x[i]) + ",";
            if (i < s.y.size()) out += num(s.y[i]);
            out += ",";
            if (i < s.y_upper.size()) out += num(s.y_upper[i]);
            out += "\n";
        }
    }
    if (!heat.empty()) return out == "series,kind,x,y,y_upper\n" ? heat : out + "\n" + heat;
    return out;
}

std::string table_csv(const labs::Table& t) {
    std::string out;
    for (std::size_t i = 0; i < t.columns.size(); ++i) {
        const labs::Column& c = t.columns[i];
        (out += i ? "," : "") += csv_field(c.unit.empty() ? c.name : c.name + " [" + c.unit + "]");
    }
    out += "\n";
    for (const auto& row : t.rows) {
        for (std::size_t i = 0; i < row.size() && i < t.columns.size(); ++i) {
            const labs::Cell& cell = row[i];
            std::string text = std::holds_alternative<double>(cell) ? num(std::get<double>(cell))
                                                                    : labs::cell_text(t.columns[i], cell);
            (out += i ? "," : "") += csv_field(text);
        }
        out += "\n";
    }
    return out;
}

}  // namespace fp8lab::exporter
