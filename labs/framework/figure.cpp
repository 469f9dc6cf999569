// SPDX-License-Identifier: Apache-2.0
// Figure model helpers.
#include "labs/framework/figure.hpp"

namespace fp8lab::labs {

const char* axis_scale_name(AxisScale scale) {
    switch (scale) {
    case AxisScale::Linear:
        return "linear";
    case AxisScale::Log10:
        return "log10";
    case AxisScale::Log2:
        return "log2";
    case AxisScale::SymLog:
        return "symlog";
    }
    return "?";
}

const char* series_kind_name(SeriesKind kind) {
    switch (kind) {
    case SeriesKind::Line:
        return "line";
    case SeriesKind::Scatter:
        return "scatter";
    case SeriesKind::Stairs:
        return "stairs";
    case SeriesKind::VerticalLines:
        return "vertical-lines";
    case SeriesKind::Band:
        return "band";
    case SeriesKind::Bars:
        return "bars";
    case SeriesKind::Histogram:
        return "histogram";
    case SeriesKind::Heatmap:
        return "heatmap";
    }
    return "?";
}

Rgb palette_colour(int index) {
    const int n = int(kOkabeIto.size());
    return kOkabeIto[std::size_t(((index % n) + n) % n)];
}

Series line(std::string name, std::vector<double> x, std::vector<double> y, int colour) {
    Series s;
    s.kind = SeriesKind::Line;
    s.name = std::move(name);
    s.x = std::move(x);
    s.y = std::move(y);
    s.colour = colour;
    return s;
}

Series scatter(std::string name, std::vector<double> x, std::vector<double> y, int colour) {
    Series s = line(std::move(name), std::move(x), std::move(y), colour);
    s.kind = SeriesKind::Scatter;
    return s;
}

Figure category_bar_figure(std::string id, std::string y_label) {
    Figure f;
    f.id = std::move(id);
    f.y_axis = {std::move(y_label), AxisScale::Linear};
    f.y_axis.min = 0;
    f.legend = false;
    return f;
}

void CategoryBars::add(std::string category, double value) {
    figure.x_axis.categories.push_back(std::move(category));
    bars.x.push_back(double(bars.x.size()));
    bars.y.push_back(value);
}

void CategoryBars::finish() {
    figure.x_axis.min = -0.6;
    figure.x_axis.max = double(bars.x.size()) - 0.4;
    figure.series.push_back(std::move(bars));
}

std::vector<double> step_numbers(std::size_t n) {
    std::vector<double> x(n);
    for (std::size_t i = 0; i < n; ++i) x[i] = double(i);
    return x;
}

}  // namespace fp8lab::labs
