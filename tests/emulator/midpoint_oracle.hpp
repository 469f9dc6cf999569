// SPDX-License-Identifier: Apache-2.0
// Independent reference for every rounding mode: enumerate the grid, compare with midpoints.
// Shares nothing with the encoder but the format's layout (docs/numerics.md §3).
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

#include "emulator/formats/format.hpp"
#include "emulator/formats/rounding.hpp"

namespace fp8lab::test {

class MidpointOracle {
  public:
    explicit MidpointOracle(const emu::Format& f) : f_(f) {
        // Magnitude codes in increasing value order, computed from the fields here.
        const std::uint32_t magnitudes = f.has_sign ? f.code_count() / 2 : f.code_count();
        for (std::uint32_t c = 0; c <= f.max_magnitude_code && c < magnitudes; ++c) grid_.push_back({c, value_of(c)});
        std::sort(grid_.begin(), grid_.end(), [](auto& a, auto& b) { return a.value < b.value; });
        // The next grid point past max, as an exponent without limit would place it.
        const double top_quantum = f.encoding == emu::Encoding::ScaleE8M0
                                       ? grid_.back().value
                                       : std::ldexp(1.0, f.max_exponent - f.mantissa_bits);
        beyond_ = {f.max_magnitude_code + 1, grid_.back().value + top_quantum};
    }

    // The code for x, with `random` the stochastic bits (random_bits wide).
    std::uint32_t encode(double x, const emu::ConvertOptions& o, std::uint32_t random = 0) const {
        const bool scale = f_.encoding == emu::Encoding::ScaleE8M0;
        if (std::isnan(x)) return f_.nan_code;
        const bool negative = !scale && std::signbit(x);
        const std::uint32_t sign = negative ? f_.sign_mask() : 0;
        const auto with_sign = [&](std::uint32_t magnitude) {
            // FNUZ: the sign bit over a zero magnitude is NaN, so zero is always +0.
            return f_.encoding == emu::Encoding::FiniteNanUnsignedZero && magnitude == 0 ? 0u : sign | magnitude;
        };
        const double a = std::fabs(x);
        if (std::isinf(a)) return sign | overflow(o, false);
        if (a >= beyond_.value) return sign | overflow(o, toward_zero(o.rounding, negative));

        // lo <= a <= hi, by exact comparison.
        auto it = std::upper_bound(grid_.begin(), grid_.end(), a, [](double v, const Point& p) { return v < p.value; });
        if (it == grid_.begin()) return with_sign(grid_.front().code);  // E8M0: below 2^-127
        const Point lo = *(it - 1);
        const Point hi = it == grid_.end() ? beyond_ : *it;
        if (lo.value == a) return with_sign(lo.code);

        const double mid = lo.value + (hi.value - lo.value) / 2;  // exact: few bits
        bool up = false;
        switch (o.rounding) {
        case emu::RoundingMode::NearestEven:
            up = a > mid || (a == mid && (hi.code & 1) == 0);
            break;
        case emu::RoundingMode::NearestAway:
            up = a >= mid;
            break;
        case emu::RoundingMode::TowardZero:
            up = false;
            break;
        case emu::RoundingMode::Up:
            up = !negative;
            break;
        case emu::RoundingMode::Down:
            up = negative;
            break;
        case emu::RoundingMode::Odd:
            up = (hi.code & 1) == 1;
            break;
        case emu::RoundingMode::Stochastic: {
            // f = (a - lo) / (hi - lo), exact (Sterbenz); away iff floor(f 2^n) + r >= 2^n.
            const double f = (a - lo.value) / (hi.value - lo.value);
            const double scaled = std::floor(std::ldexp(f, o.random_bits));
            up = scaled + double(random) >= std::ldexp(1.0, o.random_bits);
            break;
        }
        }
        const Point chosen = up ? hi : lo;
        if (chosen.code > f_.max_magnitude_code) return sign | overflow(o, toward_zero(o.rounding, negative));
        return with_sign(chosen.code);
    }

    const emu::Format& format() const { return f_; }

    // Every grid value and midpoint, including the one past max (inputs for tests).
    std::vector<double> values_and_midpoints() const {
        std::vector<double> out;
        for (std::size_t i = 0; i < grid_.size(); ++i) {
            out.push_back(grid_[i].value);
            const double next = i + 1 < grid_.size() ? grid_[i + 1].value : beyond_.value;
            out.push_back(grid_[i].value + (next - grid_[i].value) / 2);
        }
        out.push_back(beyond_.value);
        return out;
    }

  private:
    struct Point {
        std::uint32_t code;
        double value;
    };

    double value_of(std::uint32_t c) const {
        const int m = f_.mantissa_bits;
        if (f_.encoding == emu::Encoding::ScaleE8M0) return std::ldexp(1.0, int(c) - f_.bias);
        const int field = int(c >> m);
        const double fraction = double(c & ((1u << m) - 1)) / double(1u << m);
        return field == 0 ? std::ldexp(fraction, 1 - f_.bias) : std::ldexp(1.0 + fraction, field - f_.bias);
    }

    static bool toward_zero(emu::RoundingMode m, bool negative) {
        return m == emu::RoundingMode::TowardZero || (m == emu::RoundingMode::Up && negative) ||
               (m == emu::RoundingMode::Down && !negative);
    }

    std::uint32_t overflow(const emu::ConvertOptions& o, bool to_max) const {
        if (o.saturation == emu::Saturation::Finite || to_max) return f_.max_magnitude_code;
        if (f_.has_inf) return f_.inf_code;
        if (f_.has_nan) return f_.nan_code;
        return f_.max_magnitude_code;
    }

    const emu::Format& f_;
    std::vector<Point> grid_;
    Point beyond_;
};

}  // namespace fp8lab::test
