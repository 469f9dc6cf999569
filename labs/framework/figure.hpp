// SPDX-License-Identifier: Apache-2.0
// The figure model: plain data that the screen renderer and the Cairo exporter both draw.
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "emulator/base/enum_names.hpp"

namespace fp8lab::labs {

enum class AxisScale {
    Linear,
    Log10,
    Log2,    // ticks at powers of two
    SymLog,  // linear within +-linear_threshold, log10 outside: signed data over decades
};

struct Axis {
    std::string label;
    AxisScale scale = AxisScale::Linear;
    std::optional<double> min = {}, max = {};  // unset: fitted to the data
    double linear_threshold = 1.0;             // SymLog only
    // Category axis (bar charts, one row per format): tick i at value i reads categories[i].
    std::vector<std::string> categories = {};
    bool show_ticks = true;  // false: an axis whose values mean nothing (a number line's height)
};

enum class SeriesKind {
    Line,
    Scatter,
    Stairs,         // steps: y[i] holds from x[i] to x[i+1]
    VerticalLines,  // one line at each x (e.g. every representable value), full height
    Band,           // filled between y (lower) and y_upper
    Bars,           // a bar from 0 to y centred on x, width bar_width
    Histogram,      // bins: edges in x (one more than y), counts in y
    Heatmap,        // cells row-major in values, rows x columns, over the x/y extents
};

// Okabe-Ito, safe for the common colour-vision deficiencies; colour indices refer to it.
struct Rgb {
    std::uint8_t r, g, b;
};
inline constexpr std::array<Rgb, 8> kOkabeIto = {{{0, 114, 178},    // blue
                                                  {230, 159, 0},    // orange
                                                  {0, 158, 115},    // bluish green
                                                  {204, 121, 167},  // reddish purple
                                                  {86, 180, 233},   // sky blue
                                                  {213, 94, 0},     // vermillion
                                                  {240, 228, 66},   // yellow
                                                  {0, 0, 0}}};      // black
Rgb palette_colour(int index);                                      // wraps around the palette

struct Series {
    SeriesKind kind = SeriesKind::Line;
    std::string name;  // legend entry; empty: not in the legend
    int colour = 0;    // index into kOkabeIto
    std::vector<double> x = {}, y = {}, y_upper = {};
    double bar_width = 0.8;   // Bars, in x units
    bool dashed = false;      // Line / Stairs / VerticalLines
    double line_width = 1.0;  // relative to the renderer's default
    // Heatmap
    int rows = 0, columns = 0;
    std::vector<double> values = {};
    std::string value_label = {};  // colour-bar label
};

struct Annotation {
    double x = 0, y = 0;
    std::string text;
};

// The values a title's words quote as {{name}}, by name.
using TitleValues = std::map<std::string, std::string>;

struct Figure {
    std::string id;  // file-name safe, unique within a step
    // Filled when the step runs, from its text's "figure KEY" sentence (KEY: title_key, or
    // the id) with title_values; an experiment shared beyond one step titles its own.
    std::string title;
    Axis x_axis, y_axis;
    std::vector<Series> series;
    std::vector<Annotation> annotations;
    bool legend = true;
    std::string title_key = {};
    TitleValues title_values = {};
};

// Convenience builders used by the labs.
Series line(std::string name, std::vector<double> x, std::vector<double> y, int colour);
Series scatter(std::string name, std::vector<double> x, std::vector<double> y, int colour);
// 0, 1, ..., n-1: the x of a per-step curve.
std::vector<double> step_numbers(std::size_t n);
// A figure for CategoryBars: its y axis from zero (bar heights compare), no legend.
Figure category_bar_figure(std::string id, std::string y_label);
// A bar chart of one bar per category: each add() names its category and the bar's
// height; the figure's x axis spans exactly the bars.
struct CategoryBars {
    Figure& figure;
    Series bars;
    void add(std::string category, double value);
    void finish();  // moves the bars into the figure
};

}  // namespace fp8lab::labs

// The names the Python module gives them (enum_name): "linear", "log10", "log2", "symlog";
// "line", "scatter", "stairs", "vertical-lines", "band", "bars", "histogram", "heatmap".
namespace fp8lab {
template <>
std::span<const EnumName<labs::AxisScale>> enum_names<labs::AxisScale>();
template <>
std::span<const EnumName<labs::SeriesKind>> enum_names<labs::SeriesKind>();
}  // namespace fp8lab
