// SPDX-License-Identifier: Apache-2.0
// Figures on ImGui's draw list: the shared figure layout's primitives, drawn; double-click
// to fit, drag to pan, wheel to zoom; a tooltip with the nearest item; legend entries toggle.
#pragma once

#include <imgui.h>

#include "app/plot/figure_theme.hpp"
#include "labs/framework/figure.hpp"

namespace fp8lab::gui {

// The theme's figure colours and the font of titles (null: the current font).
void set_plot_looks(const plot::ThemeColours& colours, ImFont* bold);

// Whether hovering a data item may show its tooltip (off on a projector unless asked: a
// tooltip wherever the presenter's pointer rests hides the slide).
void set_plot_tooltips(bool enabled);
// True (once, then cleared) when the pointer rested on a data item whose tooltip waits for
// its delay: the loop must draw again soon (an idle loop sleeps until an event).
bool take_plot_tooltip_pending();

// How many plot titles, since the start, had a word too long to fit the plot's width even
// wrapped (the tour fails a stop that adds one).
int clipped_plot_titles();
// Plots drawn so far whose data frame was shorter than kShortestFrame font heights; and,
// while check_plot_layouts is on (the tour), pairs of a plot's labels drawn over each other
// (plot::overlapping_texts) and data items under a legend (plot::legend_covers_data).
inline constexpr float kShortestFrame = 6.0f;
int short_plots();
std::size_t overlapping_plot_labels();
std::size_t legends_over_data();
void check_plot_layouts(bool on);

// Draws the figure in `size` pixels (x <= 0 takes the available width); a legend that must
// go under the plot adds its height, so that the plot keeps its own.
void draw_plot(const labs::Figure& figure, const char* id, ImVec2 size);

}  // namespace fp8lab::gui
