// SPDX-License-Identifier: Apache-2.0
// The figure themes' colours. The projector theme is black on white with a darker grid:
// projectors wash out mid greys, so nothing in it relies on a subtle tint.
#include "app/plot/figure_theme.hpp"

#include <array>

namespace fp8lab {
template <>
std::span<const EnumName<plot::Theme>> enum_names<plot::Theme>() {
    static constexpr std::array<EnumName<plot::Theme>, 3> names = {{
        {plot::Theme::Light, "light"},
        {plot::Theme::Dark, "dark"},
        {plot::Theme::Projector, "projector"},
    }};
    return names;
}
}  // namespace fp8lab

namespace fp8lab::plot {

ThemeColours theme_colours(Theme theme) {
    switch (theme) {
    case Theme::Dark:
        return {{30, 30, 34}, {150, 150, 150}, {62, 62, 68}, {235, 235, 235}, {40, 40, 46}, 0.9, true};
    case Theme::Projector:
        return {{255, 255, 255}, {0, 0, 0}, {200, 200, 200}, {0, 0, 0}, {255, 255, 255}, 0.9, false};
    case Theme::Light:
        break;
    }
    return {{255, 255, 255}, {70, 70, 70}, {225, 225, 225}, {20, 20, 20}, {255, 255, 255}, 0.9, false};
}

labs::Rgb series_colour(bool dark, labs::Rgb c) {
    if (dark && c.r == 0 && c.g == 0 && c.b == 0) return {230, 230, 230};
    return c;
}

}  // namespace fp8lab::plot
