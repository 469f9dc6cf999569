// The three themes: dark, light, and a light high-contrast one for projectors.
#pragma once

#include <string>
#include <string_view>

#include "app/gui/markdown_view.hpp"
#include "app/gui/plot.hpp"

namespace fp8lab::gui {

enum class Theme { Dark, Light, Projector };
std::string_view theme_name(Theme theme);  // "dark", "light", "projector"
bool parse_theme(std::string_view name, Theme& theme);

struct ThemeColours {
    PlotColours plot;
    ImU32 link, code_background, field_sign, field_exponent, field_mantissa, done_mark;
};

// Sets ImGui's style (sizes scaled by `scale`) and returns the colours the views use.
ThemeColours apply_theme(Theme theme, float scale);

}  // namespace fp8lab::gui
