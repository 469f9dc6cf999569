// SPDX-License-Identifier: Apache-2.0
// Hover text: the nearest drawn item and the numbers behind it, as a person would read them.
#include "app/plot/hover_text.hpp"

#include <algorithm>
#include <cmath>

#include "labs/framework/table.hpp"

namespace fp8lab::plot {
namespace {

double distance(const Rect& r, Point p) {
    const double dx = std::max({r.x - p.x, 0.0, p.x - (r.x + r.width)});
    const double dy = std::max({r.y - p.y, 0.0, p.y - (r.y + r.height)});
    return std::hypot(dx, dy);
}

// "K = 4096" on an axis labelled K, "x = 3" on one without a label; on a category axis
// the category's name ("E4M3"), which is what the tick there reads.
std::string axis_value(const labs::Axis& axis, const char* unlabelled, double v) {
    if (!axis.categories.empty()) {
        const double i = std::round(v);
        if (i >= 0 && i < double(axis.categories.size())) return axis.categories[std::size_t(i)];
    }
    return (axis.label.empty() ? std::string(unlabelled) : axis.label) + " = " + labs::number_text(v);
}

// A zero on a log y axis is drawn as a circle on the axis' floor: the tooltip says so.
std::string zero_note(const labs::Figure& f, double y) {
    const bool log = f.y_axis.scale == labs::AxisScale::Log10 || f.y_axis.scale == labs::AxisScale::Log2;
    return y == 0 && log ? " (exactly zero: marked on the floor of the log axis)" : "";
}

// The centre of cell `index` of `count` cells spread over the extent [lo, hi].
double cell_centre(const std::vector<double>& extent, std::size_t index, std::size_t count) {
    if (extent.size() < 2 || count == 0) return double(index);
    return extent[0] + (double(index) + 0.5) * (extent[1] - extent[0]) / double(count);
}

}  // namespace

std::optional<HitTarget> nearest_target(const std::vector<HitTarget>& targets, Point p, double reach) {
    std::optional<HitTarget> best;
    double best_distance = 0;
    for (const HitTarget& t : targets) {
        const double d = distance(t.area, p);
        if (d <= reach && (!best || d < best_distance)) {
            best = t;
            best_distance = d;
        }
    }
    return best;
}

std::string hover_text(const labs::Figure& f, const HitTarget& target) {
    if (target.series >= f.series.size()) return {};
    const labs::Series& s = f.series[target.series];
    const std::size_t i = target.index;
    const std::string name = s.name.empty() ? std::string() : s.name + "\n";
    switch (s.kind) {
    case labs::SeriesKind::Line:
    case labs::SeriesKind::Stairs:
    case labs::SeriesKind::Scatter:
        if (i >= s.x.size() || i >= s.y.size()) return {};
        return name + axis_value(f.x_axis, "x", s.x[i]) + "\n" + axis_value(f.y_axis, "y", s.y[i]) +
               zero_note(f, s.y[i]);
    case labs::SeriesKind::VerticalLines:
        if (i >= s.x.size()) return {};
        return name + axis_value(f.x_axis, "x", s.x[i]);
    case labs::SeriesKind::Bars:
        if (i >= s.x.size() || i >= s.y.size()) return {};
        return name + axis_value(f.x_axis, "x", s.x[i]) + "\n" + axis_value(f.y_axis, "y", s.y[i]) +
               zero_note(f, s.y[i]);
    case labs::SeriesKind::Histogram:
        if (i + 1 >= s.x.size() || i >= s.y.size()) return {};
        return name + (f.x_axis.label.empty() ? std::string() : f.x_axis.label + " in ") + "[" +
               labs::number_text(s.x[i]) + ", " + labs::number_text(s.x[i + 1]) + ")\n" +
               (f.y_axis.label.empty() ? std::string("count") : f.y_axis.label) + " = " + labs::number_text(s.y[i]);
    case labs::SeriesKind::Heatmap: {
        if (s.columns <= 0 || i >= s.values.size()) return {};
        const std::size_t columns = std::size_t(s.columns), rows = s.values.size() / columns;
        const std::size_t row = i / columns, column = i % columns;
        // Rows and columns by their axes: a category (one per row or column), or the cell's
        // centre on a labelled axis, or else its index.
        const auto name = [](const labs::Axis& axis, const std::vector<double>& extent, std::size_t i, std::size_t n,
                             const char* unlabelled) {
            if (axis.categories.size() == n) return axis.categories[i];
            if (!axis.label.empty()) return axis_value(axis, unlabelled, cell_centre(extent, i, n));
            return std::string(unlabelled) + " " + std::to_string(i);
        };
        const std::string row_text = name(f.y_axis, s.y, row, rows, "row");
        const std::string column_text = name(f.x_axis, s.x, column, columns, "column");
        return row_text + ", " + column_text + "\n" + (s.value_label.empty() ? "value" : s.value_label) + " = " +
               labs::number_text(s.values[i]);
    }
    case labs::SeriesKind::Band:
        return {};
    }
    return {};
}

}  // namespace fp8lab::plot
