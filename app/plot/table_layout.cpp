// SPDX-License-Identifier: Apache-2.0
// A table laid out as a slide image (table_layout.hpp).
#include "app/plot/table_layout.hpp"

#include <algorithm>
#include <string>

namespace fp8lab::plot {
namespace {

// Sizes in units at scale 1.
constexpr double kTitle = 1.15, kBody = 0.85, kRow = 1.55, kHeadLine = 1.1, kGap = 1.4, kMargin = 1.0;
constexpr double kLeast = 6, kMost = 16;  // a column's width bounds (text columns wrap at the most)

std::string head_text(const labs::Column& c) { return c.unit.empty() ? c.name : c.name + " (" + c.unit + ")"; }

bool right_aligned(const labs::Column& c) { return c.type != labs::ColumnType::Text; }

// Words in lines no wider than `limit` (a word wider than it on a line of its own).
std::vector<std::string> wrap(const std::string& text, double limit, double size, bool bold,
                              const TextMetrics& metrics) {
    std::vector<std::string> lines;
    std::string line, word;
    const auto place = [&] {
        if (word.empty()) return;
        const std::string joined = line.empty() ? word : line + " " + word;
        if (!line.empty() && metrics.width(joined, size, bold) > limit) {
            lines.push_back(line);
            line = word;
        } else {
            line = joined;
        }
        word.clear();
    };
    for (const char ch : text) {
        if (ch == ' ')
            place();
        else
            word += ch;
    }
    place();
    if (!line.empty()) lines.push_back(line);
    return lines;
}

}  // namespace

TableLayout layout_table(const labs::Table& table, const TableLayoutRequest& request, const TextMetrics& metrics) {
    const std::size_t columns = table.columns.size();
    std::vector<std::vector<std::string>> cells;
    for (const std::vector<labs::Cell>& row : table.rows) {
        std::vector<std::string>& texts = cells.emplace_back();
        for (std::size_t c = 0; c < columns && c < row.size(); ++c)
            texts.push_back(labs::cell_text(table.columns[c], row[c]));
    }
    // The natural size at scale 1; widths measured at the body size, heads bold. A column is
    // as wide as its widest cell (at least a few characters, a sentence at most: text cells
    // wrap there); its head wraps to that width.
    const double u = request.unit;
    std::vector<double> widths(columns, 0.0);
    std::vector<std::vector<std::string>> heads(columns);
    std::size_t head_lines = 1;
    for (std::size_t c = 0; c < columns; ++c) {
        widths[c] = kLeast * u;
        for (const auto& texts : cells)
            if (c < texts.size()) widths[c] = std::max(widths[c], metrics.width(texts[c], kBody * u, false));
        if (!right_aligned(table.columns[c])) widths[c] = std::min(widths[c], kMost * u);
        heads[c] = wrap(head_text(table.columns[c]), widths[c], kBody * u, true, metrics);
        for (const std::string& line : heads[c]) widths[c] = std::max(widths[c], metrics.width(line, kBody * u, true));
        head_lines = std::max(head_lines, heads[c].size());
    }
    // Every cell's lines (numbers one), and each row's height.
    std::vector<std::vector<std::vector<std::string>>> lines(cells.size());
    std::vector<double> heights(cells.size(), kRow * u);
    double rows_height = 0;
    for (std::size_t r = 0; r < cells.size(); ++r) {
        std::size_t most = 1;
        for (std::size_t c = 0; c < cells[r].size(); ++c) {
            lines[r].push_back(right_aligned(table.columns[c])
                                   ? std::vector<std::string>{cells[r][c]}
                                   : wrap(cells[r][c], widths[c], kBody * u, false, metrics));
            for (const std::string& line : lines[r].back())
                widths[c] = std::max(widths[c], metrics.width(line, kBody * u, false));  // a word past the limit
            most = std::max(most, lines[r].back().size());
        }
        heights[r] += kHeadLine * u * double(most - 1);
        rows_height += heights[r];
    }
    const double head_height = kRow * u + kHeadLine * u * double(head_lines - 1);
    double body_width = 0;
    for (const double w : widths) body_width += w;
    body_width += kGap * u * double(columns > 0 ? columns - 1 : 0);
    const double title_width = table.title.empty() ? 0.0 : metrics.width(table.title, kTitle * u, true);
    const double natural_width = std::max(body_width, title_width) + 2 * kMargin * u;
    const double title_height = table.title.empty() ? 0.0 : 2.0 * u;
    const double natural_height = 2 * kMargin * u + title_height + head_height + rows_height + 0.4 * u;
    TableLayout out;
    out.scale = std::min({1.0, request.width / natural_width, request.height / natural_height});
    const double s = out.scale;
    // Centred in the box, as a slide shows it.
    const double left = (request.width - natural_width * s) / 2 + kMargin * u * s;
    const double top = std::max(0.0, (request.height - natural_height * s) / 2);
    double y = top + kMargin * u * s;
    out.extent = {left - kMargin * u * s, top, natural_width * s, natural_height * s};
    const ThemeColours& t = request.theme;
    out.primitives.push_back(Clear{t.background});
    const Paint ink{t.text, 1};
    if (!table.title.empty()) {
        out.primitives.push_back(Text{table.title, {left, y + 1.2 * u * s}, kTitle * u * s, true, ink, false});
        y += title_height * s;
    }
    // Column c's left edge and width, at scale s.
    std::vector<double> x(columns, left);
    for (std::size_t c = 1; c < columns; ++c) x[c] = x[c - 1] + (widths[c - 1] + kGap * u) * s;
    const double size = kBody * u * s, baseline = 1.05 * u * s;
    const auto cell = [&](std::size_t c, const std::string& text, double top, bool bold) {
        const double w = metrics.width(text, size, bold);
        const double at = right_aligned(table.columns[c]) ? x[c] + widths[c] * s - w : x[c];
        out.primitives.push_back(Text{text, {at, top + baseline}, size, bold, ink, false});
    };
    // Heads sit on the rule: a short head's lines at the bottom of the head row.
    for (std::size_t c = 0; c < columns; ++c)
        for (std::size_t k = 0; k < heads[c].size(); ++k)
            cell(c, heads[c][k], y + kHeadLine * u * s * double(head_lines - heads[c].size() + k), true);
    y += head_height * s + 0.2 * u * s;
    Path rule;
    rule.parts.push_back({SubPath::Kind::Open, {{left, y}, {left + body_width * s, y}}});
    rule.stroke = Stroke{{t.frame, 1}, std::max(0.5, 0.08 * u * s)};
    out.primitives.push_back(rule);
    y += 0.2 * u * s;
    for (std::size_t r = 0; r < cells.size(); y += heights[r] * s, ++r) {
        if (r % 2 == 1) {  // banded rows: the eye follows a row across wide tables
            Path band;
            band.parts.push_back({SubPath::Kind::Rectangle,
                                  {},
                                  {},
                                  {left - 0.3 * u * s, y, body_width * s + 0.6 * u * s, heights[r] * s}});
            band.fill = Paint{t.grid, 0.45};
            band.abutting = true;
            out.primitives.push_back(band);
        }
        for (std::size_t c = 0; c < lines[r].size(); ++c)
            for (std::size_t k = 0; k < lines[r][c].size(); ++k)
                cell(c, lines[r][c][k], y + kHeadLine * u * s * double(k), false);
    }
    return out;
}

}  // namespace fp8lab::plot
