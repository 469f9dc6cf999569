// SPDX-License-Identifier: Apache-2.0
// The three themes: dark, light, and a light high-contrast one for projectors.
#pragma once

#include <string>
#include <string_view>

#include "app/gui/markdown_view.hpp"
#include <imgui.h>
#include "app/plot/figure_theme.hpp"

namespace fp8lab::gui {

using plot::Theme;  // the figure themes; the names are enum_names<plot::Theme>

struct ThemeColours {
    plot::ThemeColours plot;
    ImU32 link, code_background, field_sign, field_exponent, field_mantissa, done_mark;
};

// Sets ImGui's style (sizes scaled by `scale`) and returns the colours the views use.
ThemeColours apply_theme(Theme theme, float scale);

}  // namespace fp8lab::gui
