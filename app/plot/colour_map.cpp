// SPDX-License-Identifier: Apache-2.0
// Linear interpolation between anchors running from dark blue through grey to yellow:
// lightness rises monotonically and no red/green pair is needed to tell values apart.
#include "app/plot/colour_map.hpp"

#include <algorithm>
#include <array>
#include <cmath>

namespace fp8lab::plot {

labs::Rgb sequential_colour(double t) {
    static constexpr std::array<std::array<double, 3>, 5> anchors = {
        {{0, 34, 78}, {62, 76, 110}, {124, 123, 120}, {190, 175, 100}, {253, 231, 55}}};
    t = std::clamp(std::isfinite(t) ? t : 0.0, 0.0, 1.0) * double(anchors.size() - 1);
    const std::size_t i = std::min(std::size_t(t), anchors.size() - 2);
    const double f = t - double(i);
    auto mix = [&](int c) { return std::uint8_t(std::lround(anchors[i][c] * (1 - f) + anchors[i + 1][c] * f)); };
    return {mix(0), mix(1), mix(2)};
}

std::pair<double, double> value_range(const std::vector<double>& values) {
    double lo = INFINITY, hi = -INFINITY;
    for (double v : values)
        if (std::isfinite(v)) {
            lo = std::min(lo, v);
            hi = std::max(hi, v);
        }
    if (!std::isfinite(lo)) return {0, 1};
    return {lo, hi};
}

}  // namespace fp8lab::plot
