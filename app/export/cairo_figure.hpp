// Draws a figure with Cairo and writes it as SVG, PNG or PDF.
#pragma once

#include <string>

#include "labs/figure.hpp"

typedef struct _cairo cairo_t;

namespace fp8lab::exporter {

enum class ImageFormat { Svg, Png, Pdf };
const char* extension(ImageFormat f);  // "svg", "png", "pdf"

// Draws onto any Cairo context, in a width x height box (device units).
void draw_figure(cairo_t* cr, const labs::Figure& figure, double width, double height);

// Writes the figure; throws std::runtime_error naming the file when Cairo fails.
// Width and height are pixels for PNG and points for SVG and PDF.
void write_figure(const labs::Figure& figure, const std::string& path, ImageFormat format, int width, int height);

}  // namespace fp8lab::exporter
