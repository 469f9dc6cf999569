// SPDX-License-Identifier: Apache-2.0
// A figure drawn with Cairo and written as SVG, PNG or PDF: the figure layout's primitives
// on the Cairo canvas.
#include "app/export/cairo_figure.hpp"

#include <cairo.h>

#include <algorithm>

#include "app/export/cairo_canvas.hpp"
#include "app/plot/figure_layout.hpp"

namespace fp8lab::exporter {

void draw_figure(cairo_t* cr, const labs::Figure& f, double width, double height, const plot::FigureStyle& style) {
    plot::LayoutRequest request;
    request.width = width;
    request.height = height;
    request.unit = std::min(width, height) / 40.0 * style.font_scale;  // one text line is about one unit
    request.theme = plot::theme_colours(style.theme);
    const CairoMetrics metrics(cr);
    draw_primitives(cr, plot::layout_figure(f, request, metrics).primitives);
}

void write_figure(const labs::Figure& figure, const std::string& path, ImageFormat format, int width, int height,
                  const plot::FigureStyle& style, double png_scale) {
    write_image(path, format, width, height, png_scale,
                [&](cairo_t* cr) { draw_figure(cr, figure, width, height, style); });
}

void write_table(const labs::Table& table, const std::string& path, ImageFormat format, int width, int height,
                 const plot::FigureStyle& style, double png_scale) {
    write_image(path, format, width, height, png_scale, [&](cairo_t* cr) {
        plot::TableLayoutRequest request;
        request.width = width;
        request.height = height;
        request.unit = std::min(width, height) / 40.0 * style.font_scale;  // as a figure's text
        request.theme = plot::theme_colours(style.theme);
        const CairoMetrics metrics(cr);
        draw_primitives(cr, plot::layout_table(table, request, metrics).primitives);
    });
}

}  // namespace fp8lab::exporter
