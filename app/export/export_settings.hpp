// SPDX-License-Identifier: Apache-2.0
// What an export of figures draws (formats, size, theme, text scale, PNG density), and the
// `fp8lab figures` options that draw the same: the GUI's export dialog fills one in and
// writes those options beside the files.
#pragma once

#include <string>
#include <vector>

#include "app/export/cairo_figure.hpp"
#include "app/plot/figure_theme.hpp"

namespace fp8lab::exporter {

inline constexpr double kSlideFontScale = 1.5;

struct ExportSettings {
    bool svg = true, png = true, pdf = false;
    int width = 960, height = 600;  // points; a PNG has png_scale pixels per point
    // Text 1.5 times the figures command's default: what the README recommends for slides.
    plot::FigureStyle style{plot::Theme::Light, kSlideFontScale};
    double png_scale = 2.0;

    std::vector<ImageFormat> formats() const;
    // A slide: PNG of 1280x720 pixels in the projector theme, text 1.5 times (`fp8lab figures
    // --slides`; what the GUI's dialog gives with the projector theme at that size).
    static ExportSettings slides();
    // "--format svg,png --size 960x600 --theme dark --font-scale 1.5 --png-scale 2"
    std::string figures_options() const;
};

}  // namespace fp8lab::exporter
