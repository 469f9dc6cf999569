// SPDX-License-Identifier: Apache-2.0
// Draws a step's output (figures, tables, metrics, notes) from the labs' plain data.
#pragma once

#include <imgui.h>

#include "labs/framework/step_output.hpp"

namespace fp8lab::gui {

// One figure through the plot API; `height` in pixels.
void draw_figure(const labs::Figure& figure, const char* id, float height);
// Rows a table shows before it scrolls.
inline constexpr std::size_t kTableRowsShown = 16;
void draw_table(const labs::Table& table);
// Tables drawn so far with at most kTableRowsShown rows that scrolled or left room below
// their last row (the tour fails a stop that adds one).
int tables_not_fitted();
void draw_metrics(const std::vector<labs::Metric>& metrics);
void draw_listing(const labs::CodeListing& listing, ImFont* mono);
// Everything, figures first; `figure_height` in pixels; code listings in `mono` (the
// current font when null).
void draw_step_output(const labs::StepOutput& output, const char* id, float figure_height, ImFont* mono = nullptr);

}  // namespace fp8lab::gui
