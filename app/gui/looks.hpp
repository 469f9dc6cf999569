// SPDX-License-Identifier: Apache-2.0
// How the app looks this frame: theme, zoom, fonts and colours, and presentation mode with
// its paging.
#pragma once

#include "app/gui/fonts.hpp"
#include "app/gui/markdown_view.hpp"
#include "app/gui/theme.hpp"

namespace fp8lab::gui {

struct Looks {
    Theme theme = Theme::Light;
    float scale = 1;  // the user's zoom times the monitor's content scale
    float monitor_scale = 1;
    FontSet fonts;
    ThemeColours colours{};
    bool presentation = false, blank = false;
    bool projector_tooltips = false;  // plots' tooltips in presentation mode (T toggles them)
    // Presentation mode turns pages: a presenter key first scrolls the step's columns by
    // most of their height while either has more to show, then moves to the next step.
    struct Paging {
        float text_below = 0, output_below = 0, text_above = 0, output_above = 0;  // pixels, last frame
        int request = 0;  // +1 a page down, -1 a page up, for the next frame's columns
        bool more_below() const { return text_below > 1 || output_below > 1; }
        bool more_above() const { return text_above > 1 || output_above > 1; }
    } paging;
    bool rebuild_fonts = true;  // scale, theme or mode changed

    MarkdownFonts markdown_fonts() const;
};

}  // namespace fp8lab::gui
