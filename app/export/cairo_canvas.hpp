// SPDX-License-Identifier: Apache-2.0
// Cairo's side of every exported image: layout primitives drawn, text measured as Cairo
// draws it, and an SVG, PNG or PDF written whole.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "app/plot/figure_layout.hpp"

typedef struct _cairo cairo_t;

namespace fp8lab::exporter {

enum class ImageFormat { Svg, Png, Pdf };
const char* extension(ImageFormat f);  // "svg", "png", "pdf"

// Text widths as Cairo draws them (the advance of the whole string).
class CairoMetrics final : public plot::TextMetrics {
  public:
    explicit CairoMetrics(cairo_t* cr) : cr_(cr) {}
    double width(std::string_view text, double size, bool bold) const override;

  private:
    cairo_t* cr_;
};

void draw_primitives(cairo_t* cr, const std::vector<plot::Primitive>& primitives);

// An image of width x height (points for SVG and PDF; a PNG has png_scale pixels per point)
// that `draw` fills, written to `path` through a temporary file; throws
// std::runtime_error naming the file when Cairo fails.
void write_image(const std::string& path, ImageFormat format, int width, int height, double png_scale,
                 const std::function<void(cairo_t*)>& draw);

}  // namespace fp8lab::exporter
