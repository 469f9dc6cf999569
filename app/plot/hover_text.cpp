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

// "loss x = 3" on an axis with a label, "x = 3" on one without.
std::string axis_value(const labs::Axis& axis, const char* name, double v) {
    return (axis.label.empty() ? std::string() : axis.label + " ") + name + " = " + labs::number_text(v);
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
        return name + axis_value(f.x_axis, "x", s.x[i]) + "\n" + axis_value(f.y_axis, "y", s.y[i]);
    case labs::SeriesKind::VerticalLines:
        if (i >= s.x.size()) return {};
        return name + "x = " + labs::number_text(s.x[i]);
    case labs::SeriesKind::Bars:
        if (i >= s.x.size() || i >= s.y.size()) return {};
        return name + "x = " + labs::number_text(s.x[i]) + "\ny = " + labs::number_text(s.y[i]);
    case labs::SeriesKind::Histogram:
        if (i + 1 >= s.x.size() || i >= s.y.size()) return {};
        return name + "[" + labs::number_text(s.x[i]) + ", " + labs::number_text(s.x[i + 1]) +
               ")\ny = " + labs::number_text(s.y[i]);
    case labs::SeriesKind::Heatmap: {
        if (s.columns <= 0 || i >= s.values.size()) return {};
        const std::size_t columns = std::size_t(s.columns);
        return "row " + std::to_string(i / columns) + ", column " + std::to_string(i % columns) + "\n" +
               (s.value_label.empty() ? "value" : s.value_label) + " = " + labs::number_text(s.values[i]);
    }
    case labs::SeriesKind::Band:
        return {};
    }
    return {};
}

}  // namespace fp8lab::plot
