// SPDX-License-Identifier: Apache-2.0
// The data behind a figure or a table as CSV, so a slide's numbers can be checked.
#pragma once

#include <string>

#include "labs/framework/figure.hpp"
#include "labs/framework/table.hpp"

namespace fp8lab::exporter {

// One row per point: series,kind,x,y,y_upper (heatmaps: series,row,column,value).
// Numbers are written shortest round-trip, so the CSV reproduces the data exactly.
std::string figure_csv(const labs::Figure& figure);

// A header row (units in brackets) and one row per table row, as the terminal shows it.
std::string table_csv(const labs::Table& table);

std::string csv_field(const std::string& text);  // quoted when it holds , " or a newline

}  // namespace fp8lab::exporter
