// SPDX-License-Identifier: Apache-2.0
// Data extents of figures, shared by the Cairo exporter and the screen plots.
#include "app/plot/figure_extent.hpp"

namespace fp8lab::plot {

using labs::Series;
using labs::SeriesKind;

std::vector<double> figure_x_values(const labs::Figure& f) {
    std::vector<double> v;
    for (const Series& s : f.series) {
        if (s.kind == SeriesKind::Bars)
            for (double x : s.x) {
                v.push_back(x - s.bar_width / 2);
                v.push_back(x + s.bar_width / 2);
            }
        else
            v.insert(v.end(), s.x.begin(), s.x.end());
    }
    return v;
}

std::vector<double> figure_y_values(const labs::Figure& f) {
    std::vector<double> v;
    for (const Series& s : f.series) {
        if (s.kind == SeriesKind::VerticalLines) continue;
        v.insert(v.end(), s.y.begin(), s.y.end());
        v.insert(v.end(), s.y_upper.begin(), s.y_upper.end());
        if (s.kind == SeriesKind::Bars || s.kind == SeriesKind::Histogram) v.push_back(0);
    }
    return v;
}

}  // namespace fp8lab::plot
