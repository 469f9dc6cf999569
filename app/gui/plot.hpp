// Plots on ImGui's draw list with ImPlot's shape: BeginPlot, SetupAxes, PlotSeries, EndPlot.
// Linear/log10/log2/symlog axes with the export's ticks; auto-fit, double-click to fit,
// drag to pan, wheel to zoom; a tooltip with the nearest point; legend entries toggle.
#pragma once

#include <imgui.h>

#include <string>

#include "app/plot/axis_ticks.hpp"
#include "labs/framework/figure.hpp"

namespace fp8lab::gui {

enum PlotFlags { PlotFlags_None = 0, PlotFlags_ColourBar = 1 << 0, PlotFlags_NoLegend = 1 << 1 };

// Colours the plot uses, from the theme (series colours come from the figure's palette).
struct PlotColours {
    ImU32 background, frame, grid, text, legend_background;
    bool dark = false;  // the palette's black is drawn light on dark themes
};
void set_plot_colours(const PlotColours& colours);

// How many plot titles, since the start, had a word too long to fit the plot's width even
// wrapped (the tour fails a stop that adds one).
int clipped_plot_titles();

// Reserves `size` (pixels; x <= 0 takes the available width). Returns false when the plot
// is not visible; call EndPlot only when it returns true.
bool BeginPlot(const char* id, const std::string& title, ImVec2 size, int flags = PlotFlags_None);
// The axes and the ranges that auto-fit shows (the view keeps them until the user pans
// or zooms; double-click returns to them). Call once, before the first item.
void SetupAxes(const labs::Axis& x, plot::AxisRange x_fit, const labs::Axis& y, plot::AxisRange y_fit);
void PlotSeries(const labs::Series& series);
void PlotAnnotation(const labs::Annotation& annotation);
void EndPlot();

}  // namespace fp8lab::gui
