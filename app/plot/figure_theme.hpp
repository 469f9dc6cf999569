// SPDX-License-Identifier: Apache-2.0
// The figure themes (light, dark, projector): the colours a figure is drawn in, shared by
// the screen and the exported figures so that a slide looks like the screen.
#pragma once

#include <span>

#include "emulator/base/enum_names.hpp"
#include "labs/framework/figure.hpp"

namespace fp8lab::plot {

enum class Theme { Light, Dark, Projector };

struct ThemeColours {
    labs::Rgb background, frame, grid, text, legend_background;
    double legend_alpha;  // the legend box lets the data under it show through this little
    bool dark;            // the palette's black is drawn light on dark themes
};

ThemeColours theme_colours(Theme theme);

// A series' colour as drawn on a dark or light background, and on this theme.
labs::Rgb series_colour(bool dark, labs::Rgb colour);
inline labs::Rgb series_colour(const ThemeColours& theme, labs::Rgb colour) {
    return series_colour(theme.dark, colour);
}

// How an exported figure is drawn: its theme, and text (with the lines and margins that go
// with it) scaled from the size that fits the figure's shorter side.
struct FigureStyle {
    Theme theme = Theme::Light;
    double font_scale = 1.0;
};

}  // namespace fp8lab::plot

namespace fp8lab {
template <>
std::span<const EnumName<plot::Theme>> enum_names<plot::Theme>();
}
