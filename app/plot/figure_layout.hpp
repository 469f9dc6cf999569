// SPDX-License-Identifier: Apache-2.0
// The one layout of a figure: axes, ticks, every series kind, legend, colour bar and
// annotations turned into positioned primitives, for the screen and the exporter alike.
#pragma once

#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "app/plot/axis_ticks.hpp"
#include "app/plot/figure_theme.hpp"
#include "app/plot/primitives.hpp"
#include "labs/framework/figure.hpp"

namespace fp8lab::plot {

// How wide a renderer draws a text: the layout measures through it and nothing else.
class TextMetrics {
  public:
    virtual ~TextMetrics() = default;
    virtual double width(std::string_view text, double size, bool bold) const = 0;
};

// Text sizes as multiples of the layout unit (the exporter's defaults; the screen draws
// all of them at its one font size, where text scaled off the font atlas would blur).
struct TextSizes {
    double title = 1.15, axis_label = 0.95, tick = 0.85, legend = 0.85, annotation = 0.8;
    double colour_bar_label = 0.85, colour_bar_tick = 0.8;
    bool bold_title = true;
};

struct LayoutRequest {
    double width = 0, height = 0;  // the figure's box, from (0, 0)
    double unit = 1;               // about one line of text; every margin is a multiple of it
    TextSizes text = {};
    ThemeColours theme = theme_colours(Theme::Light);
    int x_ticks = 7, y_ticks = 6;  // about this many ticks
    // The data ranges shown (a panned or zoomed view); unset: fitted to the data.
    std::optional<AxisRange> x_range = {}, y_range = {};
    std::set<std::string> hidden = {};  // series (by name) left out; their legend entries dimmed
    bool hit_targets = false;           // also list where each data item was drawn
};

// Data coordinates to figure coordinates inside the frame.
struct FrameMapping {
    Rect frame;
    AxisTransform tx, ty;
    double tx_lo = 0, tx_hi = 1, ty_lo = 0, ty_hi = 1;  // the frame's edges, transformed
    double px(double x) const;
    double py(double y) const;
};

// Where one data item was drawn: a point (a zero-sized area), a bar or cell, or a
// vertical line. `index` is the point, bar or bin, or row * columns + column of a cell.
struct HitTarget {
    Rect area;
    std::size_t series = 0, index = 0;
};

struct LegendEntry {
    Rect area;
    std::size_t series = 0;
};

struct FigureLayout {
    std::vector<Primitive> primitives;
    FrameMapping mapping;
    std::vector<LegendEntry> legend;  // empty when the figure has none
    // The height the legend takes under the frame (0 when it sits in a corner): a caller
    // that would rather keep the frame's height lays the figure out again this much taller.
    double legend_below = 0;
    Rect legend_box = {};          // the legend's box, inside the frame or under it (empty without a legend)
    bool title_overflows = false;  // a word of the title is wider than the figure
    std::vector<HitTarget> hit_targets;
};

FigureLayout layout_figure(const labs::Figure& figure, const LayoutRequest& request, const TextMetrics& metrics);

// Pairs of the layout's texts whose boxes (the advance times the text's size, turned for
// vertical texts) overlap by more than a tenth of the smaller one's height: labels a
// reader cannot tell apart. The GUI tour fails a stop that draws one.
std::size_t overlapping_texts(const FigureLayout& layout, const TextMetrics& metrics);

// The data items (points, line segments, bars, bins, vertical lines of the series not in
// `hidden`) that a legend inside the frame covers: 0 when it covers none or sits under the
// plot. The GUI tour fails a stop that draws a legend over data.
std::size_t legend_covers_data(const labs::Figure& figure, const FigureLayout& layout,
                               const std::set<std::string>& hidden = {});

}  // namespace fp8lab::plot
