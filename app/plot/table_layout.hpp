// SPDX-License-Identifier: Apache-2.0
// The layout of a table as a slide image: its title, column heads with their units, numbers
// right-aligned and text left-aligned, a rule under the heads and every other row banded;
// the whole scaled down to fit the box when it would not (the CSV keeps every digit).
#pragma once

#include <vector>

#include "app/plot/figure_layout.hpp"
#include "labs/framework/table.hpp"

namespace fp8lab::plot {

struct TableLayoutRequest {
    double width = 0, height = 0;  // the image's box, from (0, 0)
    double unit = 1;               // about one line of text at scale 1
    ThemeColours theme = theme_colours(Theme::Light);
};

struct TableLayout {
    std::vector<Primitive> primitives;
    double scale = 1;  // below 1: the table was shrunk to fit the box
    Rect extent;       // where the table (title included) was drawn
};

TableLayout layout_table(const labs::Table& table, const TableLayoutRequest& request, const TextMetrics& metrics);

}  // namespace fp8lab::plot
