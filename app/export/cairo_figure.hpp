// SPDX-License-Identifier: Apache-2.0
// Draws a figure, or a table as a slide image, with Cairo and writes it as SVG, PNG or PDF.
#pragma once

#include <string>

#include "app/export/cairo_canvas.hpp"
#include "app/plot/figure_theme.hpp"
#include "app/plot/table_layout.hpp"
#include "labs/framework/figure.hpp"
#include "labs/framework/table.hpp"

typedef struct _cairo cairo_t;

namespace fp8lab::exporter {

// Draws onto any Cairo context, in a width x height box (user units).
void draw_figure(cairo_t* cr, const labs::Figure& figure, double width, double height,
                 const plot::FigureStyle& style = {});

// Writes the figure; throws std::runtime_error naming the file when Cairo fails.
// Width and height are points for SVG and PDF; a PNG has png_scale pixels per point (2
// draws the same figure, text and lines as sharp on a screen twice as dense).
void write_figure(const labs::Figure& figure, const std::string& path, ImageFormat format, int width, int height,
                  const plot::FigureStyle& style = {}, double png_scale = 1.0);

// A table as a slide image of the same size and text as a figure's (table_layout.hpp:
// shrunk to fit when it would not).
void write_table(const labs::Table& table, const std::string& path, ImageFormat format, int width, int height,
                 const plot::FigureStyle& style = {}, double png_scale = 1.0);

}  // namespace fp8lab::exporter
