// SPDX-License-Identifier: Apache-2.0
// Grid queries built on the encoder: directed rounding gives the neighbours exactly.
#include "emulator/formats/value_grid.hpp"

#include <algorithm>
#include <bit>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>

#include "emulator/formats/convert.hpp"

namespace fp8lab::emu {

std::vector<RepresentableValue> representable_values(const Format& f) {
    if (f.total_bits > 16) throw std::invalid_argument(std::string(f.name) + " has too many values to list");
    std::vector<RepresentableValue> out;
    for (std::uint32_t c = 0; c < f.code_count(); ++c) {
        const double v = decode(f, c);
        if (!std::isfinite(v)) continue;
        if (v == 0 && std::signbit(v)) continue;  // -0 equals +0
        out.push_back({c, v});
    }
    std::sort(out.begin(), out.end(),
              [](const RepresentableValue& a, const RepresentableValue& b) { return a.value < b.value; });
    return out;
}

Neighbours neighbours(const Format& f, double x) {
    if (std::isnan(x)) throw std::invalid_argument("neighbours of NaN are undefined");
    ConvertOptions down{RoundingMode::Down, Saturation::None};
    ConvertOptions up{RoundingMode::Up, Saturation::None};
    Neighbours n;
    n.below_code = encode(f, x, down);
    n.above_code = encode(f, x, up);
    n.below = decode(f, n.below_code);
    n.above = decode(f, n.above_code);
    if (f.encoding == Encoding::ScaleE8M0 && x < f.min_normal) {
        // E8M0 has nothing below 2^-127 (and encodes |x|): report the floor honestly.
        n.below = std::numeric_limits<double>::quiet_NaN();
    }
    return n;
}

double ulp(const Format& f, double x) {
    const double a = std::fabs(x);
    if (!std::isfinite(a)) return std::numeric_limits<double>::quiet_NaN();
    int floor_log2 = a == 0 ? f.min_exponent : std::ilogb(a);
    floor_log2 = std::clamp(floor_log2, f.min_exponent, f.max_exponent);
    if (f.encoding == Encoding::ScaleE8M0) return std::ldexp(1.0, floor_log2);
    return std::ldexp(1.0, floor_log2 - f.mantissa_bits);
}

RoundingError rounding_error(const Format& f, double x, const ConvertOptions& options) {
    RoundingError e;
    e.result = round_to_format(f, x, options);
    e.abs_error = std::fabs(e.result - x);
    e.rel_error = x == 0 ? 0.0 : e.abs_error / std::fabs(x);
    return e;
}

}  // namespace fp8lab::emu
