// SPDX-License-Identifier: Apache-2.0
// What a pointer over a drawn data item reads, found among a layout's hit targets.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "app/plot/figure_layout.hpp"

namespace fp8lab::plot {

// The target nearest to `p` within `reach` (inside an area is distance 0; the first of
// equals wins), or none.
std::optional<HitTarget> nearest_target(const std::vector<HitTarget>& targets, Point p, double reach);

// The words for `target`: the series' name, then its x and y (a bin's edges, a cell's row,
// column and value).
std::string hover_text(const labs::Figure& figure, const HitTarget& target);

}  // namespace fp8lab::plot
