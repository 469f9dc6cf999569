// SPDX-License-Identifier: Apache-2.0
// The figure layout: margins from the measured tick labels, a title that wraps, a legend in
// a corner that hides no data (or under the plot), then every shape in drawing order.
#include "app/plot/figure_layout.hpp"

#include <algorithm>
#include <cmath>
#include <cstdlib>

#include "app/plot/colour_map.hpp"
#include "app/plot/figure_extent.hpp"

namespace fp8lab::plot {
namespace {

using labs::Figure;
using labs::Series;
using labs::SeriesKind;

// What the layout needs while it places things.
struct Context {
    const Figure& figure;
    const LayoutRequest& request;
    const TextMetrics& metrics;
    FrameMapping fr;
    double unit;
    FigureLayout& out;

    double size(double multiple) const { return unit * multiple; }
    Paint text_paint(double alpha = 1) const { return {request.theme.text, alpha}; }
    labs::Rgb colour_of(const Series& s) const { return series_colour(request.theme, labs::palette_colour(s.colour)); }
    bool hidden(const Series& s) const { return !s.name.empty() && request.hidden.count(s.name) > 0; }
    void add(Primitive p) { out.primitives.push_back(std::move(p)); }
    void text(std::string s, Point at, double size, bool bold = false, Paint paint = {}, bool vertical = false) {
        add(Text{std::move(s), at, size, bold, paint, vertical});
    }
    void hit(Rect area, std::size_t series, std::size_t index) {
        if (request.hit_targets) out.hit_targets.push_back({area, series, index});
    }
};

Rect normalised(Rect r) {
    if (r.width < 0) r = {r.x + r.width, r.y, -r.width, r.height};
    if (r.height < 0) r = {r.x, r.y + r.height, r.width, -r.height};
    return r;
}

double tick_width(const Context& c, const Tick& t, double size) {
    if (const std::size_t nl = t.label.find('\n'); nl != std::string::npos)  // a wrapped category: its wider line
        return std::max(c.metrics.width(t.label.substr(0, nl), size, false),
                        c.metrics.width(t.label.substr(nl + 1), size, false));
    double w = c.metrics.width(t.label, size, false);
    if (!t.superscript.empty()) w += c.metrics.width(t.superscript, size * 0.7, false);
    return w;
}

// A tick label with its left edge at x and its baseline at y; the power's exponent raised
// and smaller; a category wrapped onto two lines is centred line by line.
void tick_label(Context& c, const Tick& t, double x, double y, double size) {
    if (const std::size_t nl = t.label.find('\n'); nl != std::string::npos) {
        const double centre = x + tick_width(c, t, size) / 2;
        for (const std::string& part : {t.label.substr(0, nl), t.label.substr(nl + 1)}) {
            c.text(part, {centre - c.metrics.width(part, size, false) / 2, y}, size, false, c.text_paint());
            y += size * 1.2;
        }
        return;
    }
    c.text(t.label, {x, y}, size, false, c.text_paint());
    if (t.superscript.empty()) return;
    c.text(t.superscript, {x + c.metrics.width(t.label, size, false), y - size * 0.45}, size * 0.7, false,
           c.text_paint());
}

// Whether tick labels i and j, centred on their ticks, come closer than half a unit.
bool labels_collide(const Context& c, const std::vector<Tick>& ticks, std::size_t i, std::size_t j, double size) {
    const double room = std::abs(c.fr.px(ticks[i].value) - c.fr.px(ticks[j].value));
    return (tick_width(c, ticks[i], size) + tick_width(c, ticks[j], size)) / 2 + c.unit * 0.5 > room;
}

bool collides_with_a_neighbour(const Context& c, const std::vector<Tick>& ticks, std::size_t i, double size) {
    return (i > 0 && labels_collide(c, ticks, i, i - 1, size)) ||
           (i + 1 < ticks.size() && labels_collide(c, ticks, i, i + 1, size));
}

// A category name that would run into a neighbour's goes on two lines, split at the space
// nearest its middle. Returns whether any did.
bool wrap_categories(const Context& c, std::vector<Tick>& ticks, double size) {
    bool wrapped = false;
    for (std::size_t i = 0; i < ticks.size(); ++i) {
        if (!collides_with_a_neighbour(c, ticks, i, size)) continue;
        std::string& label = ticks[i].label;
        std::size_t best = std::string::npos;
        const long middle = long(label.size() / 2);
        for (std::size_t k = label.find(' '); k != std::string::npos; k = label.find(' ', k + 1))
            if (best == std::string::npos || std::labs(long(k) - middle) < std::labs(long(best) - middle)) best = k;
        if (best == std::string::npos) continue;
        label[best] = '\n';
        wrapped = true;
    }
    return wrapped;
}

// Category names that still run into a neighbour once wrapped (single words, many bars):
// every other one goes a row lower, where it has twice the room.
// Category labels on the y axis closer than a line apart would print over each other: keep
// every k-th (the first included), the fewest that leave a line between them; the hover
// text still names every row.
void thin_categories(std::vector<Tick>& ticks, double frame_height, double size) {
    if (ticks.size() < 2) return;
    const double pitch = frame_height / double(ticks.size());
    const std::size_t every = std::size_t(std::ceil(size * 1.15 / std::max(pitch, 1e-9)));
    if (every <= 1) return;
    std::vector<Tick> kept;
    for (std::size_t i = 0; i < ticks.size(); i += every) kept.push_back(ticks[i]);
    ticks = std::move(kept);
}

bool stagger_categories(const Context& c, const std::vector<Tick>& ticks, double size) {
    for (std::size_t i = 0; i + 1 < ticks.size(); ++i)
        if (labels_collide(c, ticks, i, i + 1, size)) return true;
    return false;
}

// Words into lines no wider than `width` (a word longer than a line keeps a line of its
// own, and is reported).
std::vector<std::string> wrapped(const Context& c, const std::string& text, double width, double size, bool bold,
                                 bool& overflows) {
    std::vector<std::string> lines;
    std::string line;
    std::size_t start = 0;
    while (start <= text.size()) {
        const std::size_t space = std::min(text.find(' ', start), text.size());
        const std::string word = text.substr(start, space - start);
        const std::string longer = line.empty() ? word : line + " " + word;
        if (!line.empty() && c.metrics.width(longer, size, bold) > width) {
            lines.push_back(line);
            line = word;
        } else {
            line = longer;
        }
        start = space + 1;
    }
    if (!line.empty()) lines.push_back(line);
    for (const std::string& l : lines) overflows = overflows || c.metrics.width(l, size, bold) > width;
    return lines;
}

// More solid lines than this in one figure get line styles too: seven colours cannot all
// be told apart in print or by every eye (orange, vermillion and yellow side by side).
constexpr int kSolidLinesInColourAlone = 4;

// Which of the figure's solid lines `s` is (0, 1, ...), and how many there are.
std::pair<int, int> solid_line_rank(const Figure& f, const Series& s) {
    int rank = -1, count = 0;
    for (const Series& other : f.series) {
        if ((other.kind != SeriesKind::Line && other.kind != SeriesKind::Stairs) || other.dashed) continue;
        if (&other == &s) rank = count;
        ++count;
    }
    return {rank, count};
}

Stroke series_stroke(const Context& c, const Series& s, double width) {
    Stroke st{{c.colour_of(s), 1}, width};
    if (s.dashed) {
        st.dash_on = c.unit * 0.5;
        st.dash_off = c.unit * 0.3;
        return st;
    }
    // Past the first few, every third solid line is dotted and every third dashed, so
    // that lines of close colours differ in style as well (the legend's swatches follow).
    const auto [rank, count] = solid_line_rank(c.figure, s);
    if (count > kSolidLinesInColourAlone && rank >= 0) {
        if (rank % 3 == 1) {
            st.dash_on = c.unit * 0.12;
            st.dash_off = c.unit * 0.22;
        } else if (rank % 3 == 2) {
            st.dash_on = c.unit * 0.7;
            st.dash_off = c.unit * 0.45;
        }
    }
    return st;
}

// A value of exactly zero on a log axis, which has no place for it: an open circle on the
// frame's floor (hit target included, so the tooltip gives the 0), never a made-up tiny value.
bool mark_zero_on_log_floor(Context& c, Path& markers, double x, double y, std::size_t series, std::size_t i) {
    const double px = c.fr.px(x);
    if (y != 0 || std::isfinite(c.fr.py(0)) || !std::isfinite(px)) return false;
    const double radius = c.unit * 0.25;
    const Point p{px, c.fr.frame.y + c.fr.frame.height - radius};
    markers.parts.push_back({SubPath::Kind::Circle, {p}, {}, {}, radius});
    c.hit({p.x, p.y, 0, 0}, series, i);
    return true;
}

void lay_out_lines(Context& c, const Series& s, std::size_t index) {
    Path path;
    path.stroke = series_stroke(c, s, c.unit * 0.14 * s.line_width);
    Path zeros;
    zeros.stroke = Stroke{{c.colour_of(s), 1}, c.unit * 0.1};
    SubPath* run = nullptr;
    for (std::size_t i = 0; i < s.x.size() && i < s.y.size(); ++i) {
        const Point p{c.fr.px(s.x[i]), c.fr.py(s.y[i])};
        if (!std::isfinite(p.x) || !std::isfinite(p.y)) {
            mark_zero_on_log_floor(c, zeros, s.x[i], s.y[i], index, i);
            run = nullptr;
            continue;
        }
        if (!run) {
            run = &path.parts.emplace_back();
        } else if (s.kind == SeriesKind::Stairs) {
            run->points.push_back({p.x, run->points.back().y});
        }
        run->points.push_back(p);
        c.hit({p.x, p.y, 0, 0}, index, i);
    }
    c.add(std::move(path));
    if (!zeros.parts.empty()) c.add(std::move(zeros));
}

void lay_out_series(Context& c, const Series& s, std::size_t index) {
    const FrameMapping& fr = c.fr;
    const Rect& frame = fr.frame;
    switch (s.kind) {
    case SeriesKind::Line:
    case SeriesKind::Stairs:
        lay_out_lines(c, s, index);
        return;
    case SeriesKind::Scatter: {
        Path path;
        path.fill = Paint{c.colour_of(s), 0.85};
        for (std::size_t i = 0; i < s.x.size() && i < s.y.size(); ++i) {
            const Point p{fr.px(s.x[i]), fr.py(s.y[i])};
            if (!std::isfinite(p.x) || !std::isfinite(p.y)) continue;
            path.parts.push_back({SubPath::Kind::Circle, {p}, {}, {}, c.unit * 0.2});
            c.hit({p.x, p.y, 0, 0}, index, i);
        }
        c.add(std::move(path));
        return;
    }
    case SeriesKind::VerticalLines: {
        Path path;
        path.stroke = series_stroke(c, s, c.unit * 0.08);
        for (std::size_t i = 0; i < s.x.size(); ++i) {
            const double x = fr.px(s.x[i]);
            if (!std::isfinite(x)) continue;
            path.parts.push_back({SubPath::Kind::Open, {{x, frame.y}, {x, frame.y + frame.height}}});
            c.hit({x, frame.y, 0, frame.height}, index, i);
        }
        c.add(std::move(path));
        return;
    }
    case SeriesKind::Band: {
        Path path;
        path.fill = Paint{c.colour_of(s), 0.25};
        path.abutting = true;  // a renderer that fills the strip quad by quad must not seam it
        SubPath strip{SubPath::Kind::Strip};
        const std::size_t n = std::min({s.x.size(), s.y.size(), s.y_upper.size()});
        for (std::size_t i = 0; i < n; ++i) {
            strip.points.push_back({fr.px(s.x[i]), fr.py(s.y_upper[i])});
            strip.lower.push_back({fr.px(s.x[i]), fr.py(s.y[i])});
        }
        path.parts.push_back(std::move(strip));
        c.add(std::move(path));
        return;
    }
    case SeriesKind::Bars:
    case SeriesKind::Histogram: {
        Path path;
        path.fill = Paint{c.colour_of(s), 0.9};
        path.abutting = true;
        const bool bars = s.kind == SeriesKind::Bars;
        const double base = std::isfinite(fr.py(0)) ? fr.py(0) : frame.y + frame.height;
        const std::size_t n =
            bars ? std::min(s.x.size(), s.y.size()) : std::min(s.x.size() ? s.x.size() - 1 : 0, s.y.size());
        Path zeros;
        zeros.stroke = Stroke{{c.colour_of(s), 1}, c.unit * 0.1};
        for (std::size_t i = 0; i < n; ++i) {
            const double x0 = bars ? s.x[i] - s.bar_width / 2 : s.x[i];
            const double x1 = bars ? s.x[i] + s.bar_width / 2 : s.x[i + 1];
            const double left = fr.px(x0), right = fr.px(x1), top = fr.py(s.y[i]);
            if (bars && mark_zero_on_log_floor(c, zeros, s.x[i], s.y[i], index, i)) continue;
            if (!std::isfinite(left) || !std::isfinite(right) || !std::isfinite(top)) continue;
            const Rect r{left, std::min(top, base), right - left, std::abs(base - top)};
            path.parts.push_back({SubPath::Kind::Rectangle, {}, {}, r});
            c.hit(normalised(r), index, i);
        }
        c.add(std::move(path));
        if (!zeros.parts.empty()) c.add(std::move(zeros));
        return;
    }
    case SeriesKind::Heatmap: {
        if (s.rows <= 0 || s.columns <= 0 || s.values.size() < std::size_t(s.rows) * std::size_t(s.columns)) return;
        const auto [lo, hi] = value_range(s.values);
        const double x0 = s.x.size() >= 2 ? s.x[0] : 0, x1 = s.x.size() >= 2 ? s.x[1] : s.columns;
        const double y0 = s.y.size() >= 2 ? s.y[0] : 0, y1 = s.y.size() >= 2 ? s.y[1] : s.rows;
        for (int r = 0; r < s.rows; ++r)
            for (int col = 0; col < s.columns; ++col) {
                const std::size_t cell = std::size_t(r) * std::size_t(s.columns) + std::size_t(col);
                const double v = s.values[cell];
                const double left = fr.px(x0 + (x1 - x0) * col / s.columns);
                const double right = fr.px(x0 + (x1 - x0) * (col + 1) / s.columns);
                const double top = fr.py(y0 + (y1 - y0) * r / s.rows);
                const double bottom = fr.py(y0 + (y1 - y0) * (r + 1) / s.rows);
                const Rect area{std::min(left, right), std::min(top, bottom), std::abs(right - left),
                                std::abs(bottom - top)};
                Path path;
                path.fill = Paint{sequential_colour(hi > lo ? (v - lo) / (hi - lo) : 0.5), 1};
                path.abutting = true;
                // Half a pixel of overlap hides the seams anti-aliasing leaves between cells.
                path.parts.push_back({SubPath::Kind::Rectangle,
                                      {},
                                      {},
                                      {area.x - 0.25, area.y - 0.25, area.width + 0.5, area.height + 0.5}});
                c.add(std::move(path));
                c.hit(area, index, cell);
            }
        return;
    }
    }
}

// The legend's entries and box: in one column inside the frame, or in `columns` columns
// under the plot when every corner of the frame would cover data.
struct Legend {
    std::vector<std::size_t> entries;             // series indices
    std::vector<std::vector<std::string>> names;  // each entry's name, in lines (one unless wrapped)
    double text_width = 0, row = 0, swatch = 0;
    std::size_t lines = 1;  // lines of the longest name: every entry is this tall
    double entry_width() const { return text_width + swatch + row; }
    double entry_height() const { return row * double(lines); }
    double box_width(int columns) const { return entry_width() * columns; }
    double box_height(int columns) const {
        const std::size_t rows = (entries.size() + std::size_t(columns) - 1) / std::size_t(columns);
        return entry_height() * double(rows) + row * 0.45;
    }
};

// The legend's entries; with `max_text`, names wider than it wrap onto more lines (a legend
// under a narrow plot), so that no name runs past the figure's edge.
Legend legend_of(const Context& c, double max_text = 0) {
    Legend l;
    if (!c.figure.legend) return l;
    for (std::size_t i = 0; i < c.figure.series.size(); ++i)
        if (!c.figure.series[i].name.empty() && c.figure.series[i].kind != SeriesKind::Heatmap) l.entries.push_back(i);
    const double size = c.size(c.request.text.legend);
    for (std::size_t i : l.entries) {
        const std::string& name = c.figure.series[i].name;
        bool overflows = false;
        l.names.push_back(max_text > 0 && c.metrics.width(name, size, false) > max_text
                              ? wrapped(c, name, max_text, size, false, overflows)
                              : std::vector<std::string>{name});
        l.lines = std::max(l.lines, l.names.back().size());
        for (const std::string& line : l.names.back())
            l.text_width = std::max(l.text_width, c.metrics.width(line, size, false));
    }
    l.row = c.unit * 1.35;
    l.swatch = c.unit * 1.6;
    return l;
}

// Whether the segment from a to b passes through the box (Liang-Barsky clipping).
bool segment_crosses(const Rect& box, Point a, Point b) {
    double t0 = 0, t1 = 1;
    const double dx = b.x - a.x, dy = b.y - a.y;
    const double p[4] = {-dx, dx, -dy, dy};
    const double q[4] = {a.x - box.x, box.x + box.width - a.x, a.y - box.y, box.y + box.height - a.y};
    for (int i = 0; i < 4; ++i) {
        if (p[i] == 0) {
            if (q[i] < 0) return false;
            continue;
        }
        const double t = q[i] / p[i];
        if (p[i] < 0)
            t0 = std::max(t0, t);
        else
            t1 = std::min(t1, t);
        if (t0 > t1) return false;
    }
    return true;
}

bool rects_meet(const Rect& a, const Rect& b) {
    return a.x <= b.x + b.width && b.x <= a.x + a.width && a.y <= b.y + b.height && b.y <= a.y + a.height;
}

// The series' items a box would cover: points, the segments between a line's points (a
// line can cross a box with no point inside it), bars and histogram bins, vertical lines.
std::size_t series_items_under(const Series& s, const FrameMapping& m, const Rect& box) {
    const std::size_t n = std::min(s.x.size(), s.y.size());
    std::size_t items = 0;
    const auto point = [&](std::size_t i) { return Point{m.px(s.x[i]), m.py(s.y[i])}; };
    switch (s.kind) {
    case SeriesKind::Heatmap:  // fills the frame and has no legend entry: not data a legend can avoid
        return 0;
    case SeriesKind::VerticalLines:
        for (std::size_t i = 0; i < s.x.size(); ++i) {
            const double x = m.px(s.x[i]);
            items += x >= box.x && x <= box.x + box.width;
        }
        return items;
    case SeriesKind::Bars:
        for (std::size_t i = 0; i < n; ++i) {
            const double left = m.px(s.x[i] - s.bar_width / 2), right = m.px(s.x[i] + s.bar_width / 2);
            const double top = m.py(std::max(s.y[i], 0.0)), bottom = m.py(std::min(s.y[i], 0.0));
            items += rects_meet(
                box, {std::min(left, right), std::min(top, bottom), std::abs(right - left), std::abs(bottom - top)});
        }
        return items;
    case SeriesKind::Histogram:
        for (std::size_t i = 0; i < s.y.size() && i + 1 < s.x.size(); ++i) {
            const double left = m.px(s.x[i]), right = m.px(s.x[i + 1]), top = m.py(s.y[i]), bottom = m.py(0);
            items += rects_meet(
                box, {std::min(left, right), std::min(top, bottom), std::abs(right - left), std::abs(bottom - top)});
        }
        return items;
    case SeriesKind::Scatter:
        for (std::size_t i = 0; i < n; ++i) items += box.contains(point(i));
        return items;
    case SeriesKind::Line:
    case SeriesKind::Stairs:
    case SeriesKind::Band:
        break;
    }
    const auto polyline = [&](const std::vector<double>& ys) {
        const std::size_t count = std::min(s.x.size(), ys.size());
        for (std::size_t i = 0; i < count; ++i) {
            const Point here{m.px(s.x[i]), m.py(ys[i])};
            if (box.contains(here)) {
                ++items;
            } else if (i + 1 < count && std::isfinite(ys[i]) && std::isfinite(ys[i + 1])) {
                const Point next{m.px(s.x[i + 1]), m.py(ys[i + 1])};
                // Stairs hold y to the next x, then step.
                if (s.kind == SeriesKind::Stairs)
                    items +=
                        segment_crosses(box, here, {next.x, here.y}) || segment_crosses(box, {next.x, here.y}, next);
                else
                    items += segment_crosses(box, here, next);
            }
        }
    };
    polyline(s.y);
    if (s.kind == SeriesKind::Band) polyline(s.y_upper);
    return items;
}

// How much of the data a box would hide: the drawn series' items, and annotations (whose
// text costs more than a point).
std::size_t hidden_by(const Context& c, Rect box) {
    std::size_t hidden = 0;
    for (const Series& s : c.figure.series)
        if (!c.hidden(s)) hidden += series_items_under(s, c.fr, box);
    for (const labs::Annotation& a : c.figure.annotations) {
        const double px = c.fr.px(a.x), py = c.fr.py(a.y);
        hidden += 100 * (px >= box.x - box.width && px <= box.x + box.width && py >= box.y && py <= box.y + box.height);
    }
    return hidden;
}

// The frame corner whose box hides no data, if there is one.
std::optional<Point> free_corner(const Context& c, const Legend& l) {
    const Rect& frame = c.fr.frame;
    const double bw = l.box_width(1), bh = l.box_height(1), u = c.unit;
    for (int corner = 0; corner < 4; ++corner) {
        const double x = corner % 2 == 0 ? frame.x + frame.width - bw - u * 0.5 : frame.x + u * 0.5;
        const double y = corner < 2 ? frame.y + u * 0.5 : frame.y + frame.height - bh - u * 0.5;
        if (bw <= frame.width - u && bh <= frame.height - u && hidden_by(c, {x, y, bw, bh}) == 0) return Point{x, y};
    }
    return std::nullopt;
}

void lay_out_legend(Context& c, const Legend& l, Point at, int columns) {
    const double u = c.unit;
    Path box;
    box.parts.push_back({SubPath::Kind::Rectangle, {}, {}, {at.x, at.y, l.box_width(columns), l.box_height(columns)}});
    c.out.legend_box = box.parts.back().rect;
    box.fill = Paint{c.request.theme.legend_background, c.request.theme.legend_alpha};
    box.stroke = Stroke{{c.request.theme.frame, 0.5}, u * 0.05};
    c.add(std::move(box));
    const double rows = std::ceil(double(l.entries.size()) / columns);
    for (std::size_t i = 0; i < l.entries.size(); ++i) {
        const Series& s = c.figure.series[l.entries[i]];
        const bool hidden = c.hidden(s);
        const double dim = hidden ? 0.25 : 1;
        const double column = std::floor(double(i) / rows), row_in_column = double(i) - column * rows;
        const double top = at.y + l.row * 0.225 + l.entry_height() * row_in_column;
        const double cy = top + l.row * 0.5;  // the swatch beside the name's first line
        const double sx = at.x + u * 0.5 + column * l.entry_width();
        Path swatch;
        if (s.kind == SeriesKind::Scatter) {
            swatch.parts.push_back({SubPath::Kind::Circle, {{sx + l.swatch / 2 - u * 0.2, cy}}, {}, {}, u * 0.28});
            swatch.fill = Paint{c.colour_of(s), dim};
        } else if (s.kind == SeriesKind::Bars || s.kind == SeriesKind::Histogram || s.kind == SeriesKind::Band) {
            swatch.parts.push_back(
                {SubPath::Kind::Rectangle, {}, {}, {sx, cy - u * 0.35, l.swatch - u * 0.4, u * 0.7}});
            swatch.fill = Paint{c.colour_of(s), (s.kind == SeriesKind::Band ? 0.35 : 0.9) * dim};
        } else {
            swatch.parts.push_back({SubPath::Kind::Open, {{sx, cy}, {sx + l.swatch - u * 0.4, cy}}});
            swatch.stroke = series_stroke(c, s, u * 0.14 * s.line_width);
            swatch.stroke->paint.alpha = dim;
        }
        c.add(std::move(swatch));
        for (std::size_t k = 0; k < l.names[i].size(); ++k)
            c.text(l.names[i][k], {sx + l.swatch, cy + u * 0.3 + l.row * double(k)}, c.size(c.request.text.legend),
                   false, c.text_paint(hidden ? 0.4 : 1));
        c.out.legend.push_back(
            {{at.x + column * l.entry_width(), top, l.entry_width(), l.entry_height()}, l.entries[i]});
    }
}

void lay_out_colour_bar(Context& c, const Series& s) {
    const Rect& frame = c.fr.frame;
    const double u = c.unit, x = frame.x + frame.width + u * 0.8, top = frame.y, height = frame.height;
    const auto [lo, hi] = value_range(s.values);
    const int steps = 64;
    for (int i = 0; i < steps; ++i) {
        Path band;
        band.parts.push_back({SubPath::Kind::Rectangle,
                              {},
                              {},
                              {x, top + height * (1 - double(i + 1) / steps) - 0.25, u * 0.8, height / steps + 0.5}});
        band.fill = Paint{sequential_colour((i + 0.5) / steps), 1};
        band.abutting = true;
        c.add(std::move(band));
    }
    labs::Axis axis;
    axis.label = s.value_label;
    for (const Tick& t : make_ticks(axis, {lo, hi}, 5)) {
        const double y = hi > lo ? top + height * (1 - (t.value - lo) / (hi - lo)) : top + height / 2;
        tick_label(c, t, x + u * 1.1, y + u * 0.3, c.size(c.request.text.colour_bar_tick));
    }
    if (!s.value_label.empty()) {
        const double size = c.size(c.request.text.colour_bar_label);
        c.text(s.value_label, {x + u * 4.6, top + height / 2 + c.metrics.width(s.value_label, size, false) / 2}, size,
               false, c.text_paint(), true);
    }
}

void lay_out_annotation(Context& c, const labs::Annotation& a) {
    const Rect& frame = c.fr.frame;
    const double u = c.unit, x = c.fr.px(a.x), y = c.fr.py(a.y);
    if (!std::isfinite(x) || !std::isfinite(y)) return;
    Path marker;
    marker.parts.push_back({SubPath::Kind::Circle, {{x, y}}, {}, {}, u * 0.22});
    marker.fill = c.text_paint();
    c.add(std::move(marker));
    const double size = c.size(c.request.text.annotation);
    const double w = c.metrics.width(a.text, size, false);
    double tx = x + u * 0.5;
    if (tx + w > frame.x + frame.width - u * 0.3) tx = std::max(x - u * 0.5 - w, frame.x + u * 0.3);
    const double ty = std::clamp(y - u * 0.4, frame.y + u, frame.y + frame.height - u * 0.3);
    Path background;
    background.parts.push_back(
        {SubPath::Kind::Rectangle, {}, {}, {tx - u * 0.15, ty - u * 0.8, w + u * 0.3, u * 1.05}});
    background.fill = Paint{c.request.theme.legend_background, 0.8};
    c.add(std::move(background));
    c.text(a.text, {tx, ty}, size, false, c.text_paint());
}

const Series* heatmap_of(const Figure& f) {
    for (const Series& s : f.series)
        if (s.kind == SeriesKind::Heatmap) return &s;
    return nullptr;
}

}  // namespace

bool Rect::contains(Point p) const { return p.x >= x && p.x <= x + width && p.y >= y && p.y <= y + height; }

double FrameMapping::px(double x) const { return frame.x + (tx.forward(x) - tx_lo) / (tx_hi - tx_lo) * frame.width; }
double FrameMapping::py(double y) const {
    return frame.y + frame.height - (ty.forward(y) - ty_lo) / (ty_hi - ty_lo) * frame.height;
}

std::size_t legend_covers_data(const Figure& figure, const FigureLayout& layout, const std::set<std::string>& hidden) {
    if (layout.legend.empty() || layout.legend_below > 0) return 0;
    std::size_t items = 0;
    for (const Series& s : figure.series)
        if (s.name.empty() || hidden.count(s.name) == 0)
            items += series_items_under(s, layout.mapping, layout.legend_box);
    return items;
}

std::size_t overlapping_texts(const FigureLayout& layout, const TextMetrics& metrics) {
    std::vector<Rect> boxes;
    for (const Primitive& p : layout.primitives) {
        const auto* t = std::get_if<Text>(&p);
        if (!t || t->text.empty()) continue;
        const double w = metrics.width(t->text, t->size, t->bold), ascent = 0.8 * t->size, descent = 0.2 * t->size;
        const Point b = t->baseline_start;
        boxes.push_back(t->vertical ? Rect{b.x - ascent, b.y - w, ascent + descent, w}
                                    : Rect{b.x, b.y - ascent, w, ascent + descent});
    }
    std::size_t pairs = 0;
    for (std::size_t i = 0; i < boxes.size(); ++i)
        for (std::size_t j = i + 1; j < boxes.size(); ++j) {
            const Rect &a = boxes[i], &b = boxes[j];
            const double ox = std::min(a.x + a.width, b.x + b.width) - std::max(a.x, b.x);
            const double oy = std::min(a.y + a.height, b.y + b.height) - std::max(a.y, b.y);
            const double slack = 0.1 * std::min({a.height, b.height, a.width, b.width});
            pairs += ox > slack && oy > slack;
        }
    return pairs;
}

FigureLayout layout_figure(const Figure& f, const LayoutRequest& request, const TextMetrics& metrics) {
    FigureLayout out;
    Context c{f, request, metrics, {}, request.unit, out};
    const double u = request.unit, width = request.width, height = request.height;
    const double tick_size = c.size(request.text.tick);
    c.add(Clear{request.theme.background});

    const AxisRange xr = request.x_range ? *request.x_range : fit_range(f.x_axis, figure_x_values(f));
    const AxisRange yr = request.y_range ? *request.y_range : fit_range(f.y_axis, figure_y_values(f));
    std::vector<Tick> xt = f.x_axis.show_ticks ? make_ticks(f.x_axis, xr, request.x_ticks) : std::vector<Tick>{};
    std::vector<Tick> yt = f.y_axis.show_ticks ? make_ticks(f.y_axis, yr, request.y_ticks) : std::vector<Tick>{};

    double y_label_width = 0;
    for (const Tick& t : yt) y_label_width = std::max(y_label_width, tick_width(c, t, tick_size));
    const Series* heatmap = heatmap_of(f);
    Rect& frame = c.fr.frame;
    frame.x = u * (f.y_axis.label.empty() ? 1.0 : 2.6) + y_label_width + u * 0.6;
    frame.width = width - frame.x - u * (heatmap ? 7.5 : 1.2);
    // A title wider than the figure wraps onto more lines instead of being cut.
    const double title_size = c.size(request.text.title);
    const std::vector<std::string> title_lines =
        wrapped(c, f.title, width - frame.x - u * 0.6, title_size, request.text.bold_title, out.title_overflows);
    const double title_line = u * 1.45;
    frame.y = title_lines.empty() ? u : u * 2.6 + title_line * double(title_lines.size() - 1);
    c.fr.tx = {f.x_axis.scale, f.x_axis.linear_threshold};
    c.fr.ty = {f.y_axis.scale, f.y_axis.linear_threshold};
    c.fr.tx_lo = c.fr.tx.forward(xr.lo);
    c.fr.tx_hi = c.fr.tx.forward(xr.hi);
    c.fr.ty_lo = c.fr.ty.forward(yr.lo);
    c.fr.ty_hi = c.fr.ty.forward(yr.hi);
    const bool categories_wrapped = !f.x_axis.categories.empty() && wrap_categories(c, xt, tick_size);
    // A staggered row sits one label's height (one or two lines) below the first.
    const double stagger = !f.x_axis.categories.empty() && stagger_categories(c, xt, tick_size)
                               ? tick_size * 1.2 * (categories_wrapped ? 2 : 1)
                               : 0;
    const double below_frame = u * ((f.x_axis.label.empty() ? 2.4 : 4.0) + (categories_wrapped ? 1.2 : 0.0)) + stagger;
    frame.height = height - frame.y - below_frame;
    if (!f.y_axis.categories.empty()) thin_categories(yt, frame.height, tick_size);

    // The legend goes in a corner of the frame that covers no data, or else under the plot,
    // which then gives up the room it takes.
    Legend legend = legend_of(c);
    std::optional<Point> legend_at;
    int legend_columns = 1;
    if (!legend.entries.empty()) {
        legend_at = free_corner(c, legend);
        if (!legend_at) {
            // Under the plot the legend may use the figure's whole width; past it, names wrap.
            const double room = width - frame.x - u * 0.5;
            if (legend.entry_width() > room) legend = legend_of(c, room - legend.swatch - legend.row);
            legend_columns =
                std::max(1, std::min(int(legend.entries.size()), int((width - frame.x) / legend.entry_width())));
            out.legend_below = legend.box_height(legend_columns) + u * 0.5;
            frame.height -= out.legend_below;
            legend_at = Point{frame.x, frame.y + frame.height + below_frame};
        }
    }
    for (std::size_t i = 0; i < title_lines.size(); ++i)
        c.text(title_lines[i], {frame.x, u * 1.7 + title_line * double(i)}, title_size, request.text.bold_title,
               c.text_paint());

    Path grid;
    grid.stroke = Stroke{{request.theme.grid, 1}, u * 0.04};
    for (const Tick& t : xt)
        grid.parts.push_back(
            {SubPath::Kind::Open, {{c.fr.px(t.value), frame.y}, {c.fr.px(t.value), frame.y + frame.height}}});
    for (const Tick& t : yt)
        grid.parts.push_back(
            {SubPath::Kind::Open, {{frame.x, c.fr.py(t.value)}, {frame.x + frame.width, c.fr.py(t.value)}}});
    c.add(std::move(grid));

    c.add(ClipBegin{frame});
    for (std::size_t i = 0; i < f.series.size(); ++i)
        if (!c.hidden(f.series[i])) lay_out_series(c, f.series[i], i);
    c.add(ClipEnd{});

    Path border;
    border.parts.push_back({SubPath::Kind::Rectangle, {}, {}, frame});
    border.stroke = Stroke{{request.theme.frame, 1}, u * 0.07};
    c.add(std::move(border));

    for (std::size_t i = 0; i < xt.size(); ++i) {
        const double w = tick_width(c, xt[i], tick_size);
        tick_label(c, xt[i], c.fr.px(xt[i].value) - w / 2, frame.y + frame.height + u * 1.3 + (i % 2 ? stagger : 0),
                   tick_size);
    }
    for (const Tick& t : yt) {
        const double w = tick_width(c, t, tick_size);
        tick_label(c, t, frame.x - u * 0.4 - w, c.fr.py(t.value) + tick_size * 0.35, tick_size);
    }
    const double label_size = c.size(request.text.axis_label);
    if (!f.x_axis.label.empty()) {
        const double w = metrics.width(f.x_axis.label, label_size, false);
        c.text(f.x_axis.label,
               {frame.x + frame.width / 2 - w / 2,
                frame.y + frame.height + u * (categories_wrapped ? 4.3 : 3.1) + stagger},
               label_size, false, c.text_paint());
    }
    if (!f.y_axis.label.empty()) {
        const double w = metrics.width(f.y_axis.label, label_size, false);
        c.text(f.y_axis.label, {u * 1.5, frame.y + frame.height / 2 + w / 2}, label_size, false, c.text_paint(), true);
    }
    // Annotations: a marker on the point and the text beside it, kept inside the frame.
    for (const labs::Annotation& a : f.annotations) lay_out_annotation(c, a);
    if (legend_at) lay_out_legend(c, legend, *legend_at, legend_columns);
    if (heatmap) lay_out_colour_bar(c, *heatmap);
    out.mapping = c.fr;
    return out;
}

}  // namespace fp8lab::plot
