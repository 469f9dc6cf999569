// SPDX-License-Identifier: Apache-2.0
// Figure model helpers.
#include "labs/framework/figure.hpp"

namespace fp8lab::labs {

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

namespace fp8lab {

template <>
std::span<const EnumName<labs::AxisScale>> enum_names<labs::AxisScale>() {
    static constexpr EnumName<labs::AxisScale> table[] = {{labs::AxisScale::Linear, "linear"},
                                                          {labs::AxisScale::Log10, "log10"},
                                                          {labs::AxisScale::Log2, "log2"},
                                                          {labs::AxisScale::SymLog, "symlog"}};
    return table;
}

template <>
std::span<const EnumName<labs::SeriesKind>> enum_names<labs::SeriesKind>() {
    static constexpr EnumName<labs::SeriesKind> table[] = {
        {labs::SeriesKind::Line, "line"},           {labs::SeriesKind::Scatter, "scatter"},
        {labs::SeriesKind::Stairs, "stairs"},       {labs::SeriesKind::VerticalLines, "vertical-lines"},
        {labs::SeriesKind::Band, "band"},           {labs::SeriesKind::Bars, "bars"},
        {labs::SeriesKind::Histogram, "histogram"}, {labs::SeriesKind::Heatmap, "heatmap"}};
    return table;
}

}  // namespace fp8lab
