// The Cairo renderer of the figure model: layout, axes and ticks, every series kind, legend.
#include "app/export/cairo_figure.hpp"

#include "app/cli/atomic_file.hpp"

#include <cairo-pdf.h>
#include <cairo-svg.h>
#include <cairo.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <optional>
#include <utility>
#include <vector>
#include <stdexcept>

#include "app/plot/axis_ticks.hpp"
#include "app/plot/colour_map.hpp"
#include "app/plot/figure_extent.hpp"
#include "app/plot/figure_theme.hpp"

namespace fp8lab::exporter {
namespace {

using labs::Figure;
using labs::Series;
using labs::SeriesKind;
using plot::AxisRange;
using plot::AxisTransform;
using plot::Tick;

constexpr const char* kFont = "DejaVu Sans";

void set_colour(cairo_t* cr, labs::Rgb c, double alpha = 1) {
    cairo_set_source_rgba(cr, c.r / 255.0, c.g / 255.0, c.b / 255.0, alpha);
}

void font(cairo_t* cr, double size, bool bold = false) {
    cairo_select_font_face(cr, kFont, CAIRO_FONT_SLANT_NORMAL,
                           bold ? CAIRO_FONT_WEIGHT_BOLD : CAIRO_FONT_WEIGHT_NORMAL);
    cairo_set_font_size(cr, size);
}

double text_width(cairo_t* cr, const std::string& s) {
    cairo_text_extents_t e;
    cairo_text_extents(cr, s.c_str(), &e);
    return e.x_advance;
}

// A tick label's width, with its superscript at 70% size.
double tick_width(cairo_t* cr, const Tick& t, double size) {
    font(cr, size);
    double w = text_width(cr, t.label);
    if (!t.superscript.empty()) {
        font(cr, size * 0.7);
        w += text_width(cr, t.superscript);
        font(cr, size);
    }
    return w;
}

// Draws a tick label with its left edge at x and its baseline at y.
void draw_tick_label(cairo_t* cr, const Tick& t, double x, double y, double size) {
    font(cr, size);
    cairo_move_to(cr, x, y);
    cairo_show_text(cr, t.label.c_str());
    if (t.superscript.empty()) return;
    const double w = text_width(cr, t.label);
    font(cr, size * 0.7);
    cairo_move_to(cr, x + w, y - size * 0.45);
    cairo_show_text(cr, t.superscript.c_str());
    font(cr, size);
}

struct Frame {
    const plot::ThemeColours* theme;
    double left, top, width, height;
    AxisTransform tx, ty;
    double tx_lo, tx_hi, ty_lo, ty_hi;  // transformed range
    double px(double x) const { return left + (tx.forward(x) - tx_lo) / (tx_hi - tx_lo) * width; }
    double py(double y) const { return top + height - (ty.forward(y) - ty_lo) / (ty_hi - ty_lo) * height; }
};

void stroke_style(cairo_t* cr, const Series& s, const plot::ThemeColours& theme, double unit) {
    set_colour(cr, plot::series_colour(theme, labs::palette_colour(s.colour)));
    cairo_set_line_width(cr, unit * 0.14 * s.line_width);
    if (s.dashed) {
        const double dash[] = {unit * 0.5, unit * 0.3};
        cairo_set_dash(cr, dash, 2, 0);
    } else {
        cairo_set_dash(cr, nullptr, 0, 0);
    }
}

void draw_series(cairo_t* cr, const Series& s, const Frame& fr, double unit) {
    const labs::Rgb colour = plot::series_colour(*fr.theme, labs::palette_colour(s.colour));
    switch (s.kind) {
    case SeriesKind::Line:
    case SeriesKind::Stairs: {
        stroke_style(cr, s, *fr.theme, unit);
        bool pen_down = false;
        for (std::size_t i = 0; i < s.x.size() && i < s.y.size(); ++i) {
            const double x = fr.px(s.x[i]), y = fr.py(s.y[i]);
            if (!std::isfinite(x) || !std::isfinite(y)) {
                pen_down = false;
                continue;
            }
            if (!pen_down)
                cairo_move_to(cr, x, y);
            else if (s.kind == SeriesKind::Stairs) {
                double cx, cy;
                cairo_get_current_point(cr, &cx, &cy);
                cairo_line_to(cr, x, cy);
                cairo_line_to(cr, x, y);
            } else
                cairo_line_to(cr, x, y);
            pen_down = true;
        }
        cairo_stroke(cr);
        cairo_set_dash(cr, nullptr, 0, 0);
        return;
    }
    case SeriesKind::Scatter:
        set_colour(cr, colour, 0.85);
        for (std::size_t i = 0; i < s.x.size() && i < s.y.size(); ++i) {
            const double x = fr.px(s.x[i]), y = fr.py(s.y[i]);
            if (!std::isfinite(x) || !std::isfinite(y)) continue;
            cairo_new_sub_path(cr);
            cairo_arc(cr, x, y, unit * 0.2, 0, 2 * M_PI);
        }
        cairo_fill(cr);
        return;
    case SeriesKind::VerticalLines:
        stroke_style(cr, s, *fr.theme, unit);
        cairo_set_line_width(cr, unit * 0.08);
        for (double v : s.x) {
            const double x = fr.px(v);
            if (!std::isfinite(x)) continue;
            cairo_move_to(cr, x, fr.top);
            cairo_line_to(cr, x, fr.top + fr.height);
        }
        cairo_stroke(cr);
        cairo_set_dash(cr, nullptr, 0, 0);
        return;
    case SeriesKind::Band: {
        set_colour(cr, colour, 0.25);
        const std::size_t n = std::min({s.x.size(), s.y.size(), s.y_upper.size()});
        for (std::size_t i = 0; i < n; ++i) {
            const double x = fr.px(s.x[i]), y = fr.py(s.y_upper[i]);
            if (i == 0)
                cairo_move_to(cr, x, y);
            else
                cairo_line_to(cr, x, y);
        }
        for (std::size_t i = n; i-- > 0;) cairo_line_to(cr, fr.px(s.x[i]), fr.py(s.y[i]));
        cairo_close_path(cr);
        cairo_fill(cr);
        return;
    }
    case SeriesKind::Bars:
    case SeriesKind::Histogram: {
        set_colour(cr, colour, 0.9);
        const double base = std::isfinite(fr.py(0)) ? fr.py(0) : fr.top + fr.height;
        const std::size_t n = s.kind == SeriesKind::Bars ? std::min(s.x.size(), s.y.size())
                                                         : std::min(s.x.size() ? s.x.size() - 1 : 0, s.y.size());
        for (std::size_t i = 0; i < n; ++i) {
            const double x0 = s.kind == SeriesKind::Bars ? s.x[i] - s.bar_width / 2 : s.x[i];
            const double x1 = s.kind == SeriesKind::Bars ? s.x[i] + s.bar_width / 2 : s.x[i + 1];
            const double left = fr.px(x0), right = fr.px(x1), top = fr.py(s.y[i]);
            if (!std::isfinite(left) || !std::isfinite(right) || !std::isfinite(top)) continue;
            cairo_rectangle(cr, left, std::min(top, base), right - left, std::abs(base - top));
        }
        cairo_fill(cr);
        return;
    }
    case SeriesKind::Heatmap: {
        if (s.rows <= 0 || s.columns <= 0 || s.values.size() < std::size_t(s.rows) * s.columns) return;
        const auto [lo, hi] = plot::value_range(s.values);
        const double x0 = s.x.size() >= 2 ? s.x[0] : 0, x1 = s.x.size() >= 2 ? s.x[1] : s.columns;
        const double y0 = s.y.size() >= 2 ? s.y[0] : 0, y1 = s.y.size() >= 2 ? s.y[1] : s.rows;
        for (int r = 0; r < s.rows; ++r)
            for (int c = 0; c < s.columns; ++c) {
                const double v = s.values[std::size_t(r) * s.columns + c];
                set_colour(cr, plot::sequential_colour(hi > lo ? (v - lo) / (hi - lo) : 0.5));
                const double left = fr.px(x0 + (x1 - x0) * c / s.columns);
                const double right = fr.px(x0 + (x1 - x0) * (c + 1) / s.columns);
                const double top = fr.py(y0 + (y1 - y0) * r / s.rows);
                const double bottom = fr.py(y0 + (y1 - y0) * (r + 1) / s.rows);
                // Half a pixel of overlap hides the seams antialiasing leaves between cells.
                cairo_rectangle(cr, std::min(left, right) - 0.25, std::min(top, bottom) - 0.25,
                                std::abs(right - left) + 0.5, std::abs(bottom - top) + 0.5);
                cairo_fill(cr);
            }
        return;
    }
    }
}

// The legend's entries and box: in one column inside the frame, or in `columns` columns
// under the plot when every corner of the frame would cover data.
struct Legend {
    std::vector<const Series*> entries;
    double text_width = 0, row = 0, swatch = 0;
    double entry_width() const { return text_width + swatch + row; }
    double box_width(int columns) const { return entry_width() * columns; }
    double box_height(int columns) const {
        const std::size_t rows = (entries.size() + std::size_t(columns) - 1) / std::size_t(columns);
        return row * double(rows) + row * 0.45;
    }
};

Legend legend_of(cairo_t* cr, const Figure& f, double unit) {
    Legend l;
    if (!f.legend) return l;
    for (const Series& s : f.series)
        if (!s.name.empty() && s.kind != SeriesKind::Heatmap) l.entries.push_back(&s);
    font(cr, unit * 0.85);
    for (const Series* s : l.entries) l.text_width = std::max(l.text_width, text_width(cr, s->name));
    l.row = unit * 1.35;
    l.swatch = unit * 1.6;
    return l;
}

// How much of the data a box at (x, y) would hide: points, and annotations (whose text
// costs more than a point).
std::size_t hidden_by(const Figure& f, const Frame& fr, double x, double y, double w, double h) {
    std::size_t hidden = 0;
    for (const Series& s : f.series)
        for (std::size_t i = 0; i < s.x.size() && i < s.y.size(); ++i) {
            const double px = fr.px(s.x[i]), py = fr.py(s.y[i]);
            hidden += px >= x && px <= x + w && py >= y && py <= y + h;
        }
    for (const labs::Annotation& a : f.annotations) {
        const double px = fr.px(a.x), py = fr.py(a.y);
        hidden += 100 * (px >= x - w && px <= x + w && py >= y && py <= y + h);
    }
    return hidden;
}

// The frame corner whose box hides no data, if there is one.
std::optional<std::pair<double, double>> free_corner(const Figure& f, const Frame& fr, const Legend& l, double unit) {
    const double bw = l.box_width(1), bh = l.box_height(1);
    for (int corner = 0; corner < 4; ++corner) {
        const double x = corner % 2 == 0 ? fr.left + fr.width - bw - unit * 0.5 : fr.left + unit * 0.5;
        const double y = corner < 2 ? fr.top + unit * 0.5 : fr.top + fr.height - bh - unit * 0.5;
        if (bw <= fr.width - unit && bh <= fr.height - unit && hidden_by(f, fr, x, y, bw, bh) == 0)
            return std::pair{x, y};
    }
    return std::nullopt;
}

void draw_legend(cairo_t* cr, const Legend& l, const plot::ThemeColours& theme, double x, double y, int columns,
                 double unit) {
    const double bw = l.box_width(columns), bh = l.box_height(columns);
    set_colour(cr, theme.legend_background, theme.legend_alpha);
    cairo_rectangle(cr, x, y, bw, bh);
    cairo_fill_preserve(cr);
    set_colour(cr, theme.frame, 0.5);
    cairo_set_line_width(cr, unit * 0.05);
    cairo_stroke(cr);
    const double rows = std::ceil(double(l.entries.size()) / columns);
    for (std::size_t i = 0; i < l.entries.size(); ++i) {
        const Series& s = *l.entries[i];
        const double column = std::floor(double(i) / rows), row_in_column = double(i) - column * rows;
        const double cy = y + l.row * 0.225 + l.row * (row_in_column + 0.5);
        const double sx = x + unit * 0.5 + column * l.entry_width();
        const labs::Rgb colour = plot::series_colour(theme, labs::palette_colour(s.colour));
        if (s.kind == SeriesKind::Scatter) {
            set_colour(cr, colour);
            cairo_arc(cr, sx + l.swatch / 2 - unit * 0.2, cy, unit * 0.28, 0, 2 * M_PI);
            cairo_fill(cr);
        } else if (s.kind == SeriesKind::Bars || s.kind == SeriesKind::Histogram || s.kind == SeriesKind::Band) {
            set_colour(cr, colour, s.kind == SeriesKind::Band ? 0.35 : 0.9);
            cairo_rectangle(cr, sx, cy - unit * 0.35, l.swatch - unit * 0.4, unit * 0.7);
            cairo_fill(cr);
        } else {
            stroke_style(cr, s, theme, unit);
            cairo_move_to(cr, sx, cy);
            cairo_line_to(cr, sx + l.swatch - unit * 0.4, cy);
            cairo_stroke(cr);
            cairo_set_dash(cr, nullptr, 0, 0);
        }
        set_colour(cr, theme.text);
        font(cr, unit * 0.85);
        cairo_move_to(cr, sx + l.swatch, cy + unit * 0.3);
        cairo_show_text(cr, s.name.c_str());
    }
}

// Words into lines no wider than `width` at the current font (a word longer than a line
// keeps a line of its own).
std::vector<std::string> wrapped(cairo_t* cr, const std::string& text, double width) {
    std::vector<std::string> lines;
    std::string line, word;
    std::size_t start = 0;
    while (start <= text.size()) {
        const std::size_t space = std::min(text.find(' ', start), text.size());
        word = text.substr(start, space - start);
        const std::string longer = line.empty() ? word : line + " " + word;
        if (!line.empty() && text_width(cr, longer) > width) {
            lines.push_back(line);
            line = word;
        } else {
            line = longer;
        }
        start = space + 1;
    }
    if (!line.empty()) lines.push_back(line);
    return lines;
}

const Series* heatmap_of(const Figure& f) {
    for (const Series& s : f.series)
        if (s.kind == SeriesKind::Heatmap) return &s;
    return nullptr;
}

void draw_colour_bar(cairo_t* cr, const Series& s, const plot::ThemeColours& theme, double x, double top, double height,
                     double unit) {
    const auto [lo, hi] = plot::value_range(s.values);
    const int steps = 64;
    for (int i = 0; i < steps; ++i) {
        set_colour(cr, plot::sequential_colour((i + 0.5) / steps));
        cairo_rectangle(cr, x, top + height * (1 - double(i + 1) / steps) - 0.25, unit * 0.8, height / steps + 0.5);
        cairo_fill(cr);
    }
    labs::Axis axis;
    axis.label = s.value_label;
    const std::vector<Tick> ticks = plot::make_ticks(axis, {lo, hi}, 5);
    set_colour(cr, theme.text);
    for (const Tick& t : ticks) {
        const double y = hi > lo ? top + height * (1 - (t.value - lo) / (hi - lo)) : top + height / 2;
        draw_tick_label(cr, t, x + unit * 1.1, y + unit * 0.3, unit * 0.8);
    }
    if (!s.value_label.empty()) {
        font(cr, unit * 0.85);
        cairo_save(cr);
        cairo_move_to(cr, x + unit * 4.6, top + height / 2 + text_width(cr, s.value_label) / 2);
        cairo_rotate(cr, -M_PI / 2);
        cairo_show_text(cr, s.value_label.c_str());
        cairo_restore(cr);
    }
}

}  // namespace

const char* extension(ImageFormat f) {
    switch (f) {
    case ImageFormat::Svg:
        return "svg";
    case ImageFormat::Png:
        return "png";
    case ImageFormat::Pdf:
        return "pdf";
    }
    return "";
}

void draw_figure(cairo_t* cr, const Figure& f, double width, double height, const plot::FigureStyle& style) {
    const plot::ThemeColours theme = plot::theme_colours(style.theme);
    const double unit = std::min(width, height) / 40.0 * style.font_scale;  // one text line is about one unit
    const double tick_size = unit * 0.85;
    set_colour(cr, theme.background);
    cairo_paint(cr);

    const AxisRange xr = plot::fit_range(f.x_axis, plot::figure_x_values(f));
    const AxisRange yr = plot::fit_range(f.y_axis, plot::figure_y_values(f));
    const std::vector<Tick> xt = f.x_axis.show_ticks ? plot::make_ticks(f.x_axis, xr, 7) : std::vector<Tick>{};
    const std::vector<Tick> yt = f.y_axis.show_ticks ? plot::make_ticks(f.y_axis, yr, 6) : std::vector<Tick>{};

    double y_label_width = 0;
    for (const Tick& t : yt) y_label_width = std::max(y_label_width, tick_width(cr, t, tick_size));
    const Series* heatmap = heatmap_of(f);
    Frame fr;
    fr.theme = &theme;
    fr.left = unit * (f.y_axis.label.empty() ? 1.0 : 2.6) + y_label_width + unit * 0.6;
    fr.width = width - fr.left - unit * (heatmap ? 7.5 : 1.2);
    // A title wider than the figure wraps onto more lines instead of being cut.
    font(cr, unit * 1.15, true);
    const std::vector<std::string> title_lines = wrapped(cr, f.title, width - fr.left - unit * 0.6);
    const double title_line = unit * 1.45;
    fr.top = title_lines.empty() ? unit : unit * 2.6 + title_line * double(title_lines.size() - 1);
    const double below_frame = unit * (f.x_axis.label.empty() ? 2.4 : 4.0);
    fr.height = height - fr.top - below_frame;
    fr.tx = {f.x_axis.scale, f.x_axis.linear_threshold};
    fr.ty = {f.y_axis.scale, f.y_axis.linear_threshold};
    fr.tx_lo = fr.tx.forward(xr.lo);
    fr.tx_hi = fr.tx.forward(xr.hi);
    fr.ty_lo = fr.ty.forward(yr.lo);
    fr.ty_hi = fr.ty.forward(yr.hi);

    // The legend goes in a corner of the frame that covers no data, or else under the plot,
    // which then gives up the room it takes.
    const Legend legend = legend_of(cr, f, unit);
    std::optional<std::pair<double, double>> legend_at;
    int legend_columns = 1;
    if (!legend.entries.empty()) {
        legend_at = free_corner(f, fr, legend, unit);
        if (!legend_at) {
            legend_columns =
                std::max(1, std::min(int(legend.entries.size()), int((width - fr.left) / legend.entry_width())));
            fr.height -= legend.box_height(legend_columns) + unit * 0.5;
            legend_at = std::pair{fr.left, fr.top + fr.height + below_frame};
        }
    }
    font(cr, unit * 1.15, true);
    set_colour(cr, theme.text);
    for (std::size_t i = 0; i < title_lines.size(); ++i) {
        cairo_move_to(cr, fr.left, unit * 1.7 + title_line * double(i));
        cairo_show_text(cr, title_lines[i].c_str());
    }
    // Grid lines and ticks.
    cairo_set_line_width(cr, unit * 0.04);
    set_colour(cr, theme.grid);
    for (const Tick& t : xt) {
        cairo_move_to(cr, fr.px(t.value), fr.top);
        cairo_line_to(cr, fr.px(t.value), fr.top + fr.height);
    }
    for (const Tick& t : yt) {
        cairo_move_to(cr, fr.left, fr.py(t.value));
        cairo_line_to(cr, fr.left + fr.width, fr.py(t.value));
    }
    cairo_stroke(cr);

    cairo_save(cr);
    cairo_rectangle(cr, fr.left, fr.top, fr.width, fr.height);
    cairo_clip(cr);
    for (const Series& s : f.series) draw_series(cr, s, fr, unit);
    cairo_restore(cr);

    set_colour(cr, theme.frame);
    cairo_set_line_width(cr, unit * 0.07);
    cairo_rectangle(cr, fr.left, fr.top, fr.width, fr.height);
    cairo_stroke(cr);

    set_colour(cr, theme.text);
    for (const Tick& t : xt) {
        const double w = tick_width(cr, t, tick_size);
        draw_tick_label(cr, t, fr.px(t.value) - w / 2, fr.top + fr.height + unit * 1.3, tick_size);
    }
    for (const Tick& t : yt) {
        const double w = tick_width(cr, t, tick_size);
        draw_tick_label(cr, t, fr.left - unit * 0.4 - w, fr.py(t.value) + tick_size * 0.35, tick_size);
    }
    font(cr, unit * 0.95);
    if (!f.x_axis.label.empty()) {
        cairo_move_to(cr, fr.left + fr.width / 2 - text_width(cr, f.x_axis.label) / 2, fr.top + fr.height + unit * 3.1);
        cairo_show_text(cr, f.x_axis.label.c_str());
    }
    if (!f.y_axis.label.empty()) {
        cairo_save(cr);
        cairo_move_to(cr, unit * 1.5, fr.top + fr.height / 2 + text_width(cr, f.y_axis.label) / 2);
        cairo_rotate(cr, -M_PI / 2);
        cairo_show_text(cr, f.y_axis.label.c_str());
        cairo_restore(cr);
    }
    // Annotations: a marker on the point and the text beside it, kept inside the frame.
    for (const labs::Annotation& a : f.annotations) {
        const double x = fr.px(a.x), y = fr.py(a.y);
        if (!std::isfinite(x) || !std::isfinite(y)) continue;
        set_colour(cr, theme.text);
        cairo_arc(cr, x, y, unit * 0.22, 0, 2 * M_PI);
        cairo_fill(cr);
        font(cr, unit * 0.8);
        const double w = text_width(cr, a.text);
        double tx = x + unit * 0.5;
        if (tx + w > fr.left + fr.width - unit * 0.3) tx = x - unit * 0.5 - w;
        const double ty = std::clamp(y - unit * 0.4, fr.top + unit, fr.top + fr.height - unit * 0.3);
        set_colour(cr, theme.legend_background, 0.8);
        cairo_rectangle(cr, tx - unit * 0.15, ty - unit * 0.8, w + unit * 0.3, unit * 1.05);
        cairo_fill(cr);
        set_colour(cr, theme.text);
        cairo_move_to(cr, tx, ty);
        cairo_show_text(cr, a.text.c_str());
    }
    if (legend_at) draw_legend(cr, legend, theme, legend_at->first, legend_at->second, legend_columns, unit);
    if (heatmap) draw_colour_bar(cr, *heatmap, theme, fr.left + fr.width + unit * 0.8, fr.top, fr.height, unit);
}

namespace {
// Cairo writes into memory; the file is written whole by write_file_atomically.
cairo_status_t append_to_string(void* closure, const unsigned char* data, unsigned int length) {
    static_cast<std::string*>(closure)->append(reinterpret_cast<const char*>(data), length);
    return CAIRO_STATUS_SUCCESS;
}
}  // namespace

void write_figure(const Figure& figure, const std::string& path, ImageFormat format, int width, int height,
                  const plot::FigureStyle& style, double png_scale) {
    if (!(png_scale > 0)) throw std::invalid_argument("write_figure: the PNG scale must be positive");
    std::string bytes;
    cairo_surface_t* surface = nullptr;
    switch (format) {
    case ImageFormat::Svg:
        surface = cairo_svg_surface_create_for_stream(append_to_string, &bytes, width, height);
        break;
    case ImageFormat::Pdf:
        surface = cairo_pdf_surface_create_for_stream(append_to_string, &bytes, width, height);
        break;
    case ImageFormat::Png:
        surface = cairo_image_surface_create(CAIRO_FORMAT_RGB24, int(std::lround(width * png_scale)),
                                             int(std::lround(height * png_scale)));
        break;
    }
    if (cairo_surface_status(surface) != CAIRO_STATUS_SUCCESS) {
        const std::string why = cairo_status_to_string(cairo_surface_status(surface));
        cairo_surface_destroy(surface);
        throw std::runtime_error(path + ": " + why);
    }
    cairo_t* cr = cairo_create(surface);
    if (format == ImageFormat::Png) cairo_scale(cr, png_scale, png_scale);  // the same layout, more pixels
    draw_figure(cr, figure, width, height, style);
    cairo_destroy(cr);
    cairo_status_t status = CAIRO_STATUS_SUCCESS;
    if (format == ImageFormat::Png) status = cairo_surface_write_to_png_stream(surface, append_to_string, &bytes);
    cairo_surface_finish(surface);
    if (status == CAIRO_STATUS_SUCCESS) status = cairo_surface_status(surface);
    cairo_surface_destroy(surface);
    if (status != CAIRO_STATUS_SUCCESS) throw std::runtime_error(path + ": " + cairo_status_to_string(status));
    cli::write_file_atomically(path, bytes);
}

}  // namespace fp8lab::exporter
