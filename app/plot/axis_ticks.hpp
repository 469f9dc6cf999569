// SPDX-License-Identifier: Apache-2.0
// Axis transforms, data ranges and readable ticks, shared by the screen and export renderers.
#pragma once

#include <string>
#include <vector>

#include "labs/framework/figure.hpp"

namespace fp8lab::plot {

// Maps data values to a coordinate where the axis is linear (log10 for Log10, ...).
struct AxisTransform {
    labs::AxisScale scale = labs::AxisScale::Linear;
    double linear_threshold = 1;
    double forward(double v) const;  // NaN where the scale cannot show v (v <= 0 on log)
    double inverse(double t) const;
};

struct AxisRange {
    double lo = 0, hi = 1;  // data units
};

// Limits from the axis if set; else the data's extent, padded by `padding` of the span
// in transformed units. Log axes ignore values <= 0. Empty data gives a unit range.
AxisRange fit_range(const labs::Axis& axis, const std::vector<double>& data, double padding = 0.04);

struct Tick {
    double value;
    std::string label;        // "0.25", "1000", or the base "2" / "10" of a power
    std::string superscript;  // the power's exponent, drawn raised and smaller ("-9")
};

// About `target` ticks at nice places: 1/2/5 x 10^k on linear axes; powers of ten or two
// on log axes (nice linear values when the range is inside one decade or octave); 0 and
// +-10^k on symlog; category names on category axes.
std::vector<Tick> make_ticks(const labs::Axis& axis, AxisRange range, int target = 6);

}  // namespace fp8lab::plot
