// SPDX-License-Identifier: Apache-2.0
// ExportSettings: its formats, and the same settings as `fp8lab figures` options.
#include "app/export/export_settings.hpp"

#include <cstdio>

namespace fp8lab::exporter {

std::vector<ImageFormat> ExportSettings::formats() const {
    std::vector<ImageFormat> f;
    if (svg) f.push_back(ImageFormat::Svg);
    if (png) f.push_back(ImageFormat::Png);
    if (pdf) f.push_back(ImageFormat::Pdf);
    return f;
}

ExportSettings ExportSettings::slides() {
    ExportSettings s;
    s.svg = false, s.png = true, s.pdf = false;
    s.width = 1280, s.height = 720;
    s.style = {plot::Theme::Projector, kSlideFontScale};
    s.png_scale = 1.0;
    return s;
}

std::string ExportSettings::figures_options() const {
    std::string list;
    for (ImageFormat f : formats()) (list += list.empty() ? "" : ",") += extension(f);
    char scales[64];
    std::snprintf(scales, sizeof scales, " --font-scale %g --png-scale %g", style.font_scale, png_scale);
    return "--format " + list + " --size " + std::to_string(width) + "x" + std::to_string(height) + " --theme " +
           std::string(enum_name(style.theme)) + scales;
}

}  // namespace fp8lab::exporter
