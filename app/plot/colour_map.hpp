// SPDX-License-Identifier: Apache-2.0
// A sequential colour map (dark blue to yellow, readable with colour-vision deficiencies).
#pragma once

#include <utility>
#include <vector>

#include "labs/framework/figure.hpp"

namespace fp8lab::plot {

labs::Rgb sequential_colour(double t);  // t in [0, 1], clamped

// The finite minimum and maximum of the values ({0, 1} when none is finite).
std::pair<double, double> value_range(const std::vector<double>& values);

}  // namespace fp8lab::plot
