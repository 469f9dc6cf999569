// SPDX-License-Identifier: Apache-2.0
// The data extent of a figure along each axis, as both renderers fit their ranges to it.
#pragma once

#include <vector>

#include "labs/framework/figure.hpp"

namespace fp8lab::plot {

// Every x a figure's series occupy (bars count both edges).
std::vector<double> figure_x_values(const labs::Figure& figure);
// Every y (vertical lines span the full height and add none; bars and histograms add 0).
std::vector<double> figure_y_values(const labs::Figure& figure);

}  // namespace fp8lab::plot
