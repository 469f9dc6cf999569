// SPDX-License-Identifier: Apache-2.0
// Tick placement: nice steps in the transformed space, labels that read like a person wrote them.
#include "app/plot/axis_ticks.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace fp8lab::plot {
namespace {

using labs::AxisScale;

double nice_step(double span, int target) {
    const double raw = span / std::max(1, target);
    const double magnitude = std::pow(10.0, std::floor(std::log10(raw)));
    for (double m : {1.0, 2.0, 2.5, 5.0, 10.0})
        if (raw <= m * magnitude * 1.0000001) return m * magnitude;
    return 10 * magnitude;
}

std::string plain(double v, double step) {
    char buf[64];
    if (v == 0) return "0";
    const double a = std::abs(v);
    if (a >= 1e6 || a < 1e-4) {
        std::snprintf(buf, sizeof buf, "%.3g", v);
        return buf;
    }
    // Enough decimals for every multiple of the step: 0.025 needs three, not two.
    int decimals = 0;
    while (decimals < 10) {
        const double scaled = step * std::pow(10.0, decimals);
        if (std::abs(scaled - std::round(scaled)) < 1e-6 * scaled) break;
        ++decimals;
    }
    std::snprintf(buf, sizeof buf, "%.*f", decimals, v);
    return buf;
}

std::vector<Tick> linear_ticks(double lo, double hi, int target) {
    std::vector<Tick> ticks;
    if (!(hi > lo)) return {{lo, plain(lo, 1), ""}};
    const double step = nice_step(hi - lo, target);
    for (double k = std::ceil(lo / step - 1e-9); k * step <= hi + step * 1e-9; k += 1) {
        const double v = std::abs(k) < 0.5 ? 0.0 : k * step;
        ticks.push_back({v, plain(v, step), ""});
    }
    return ticks;
}

// Powers base^k for k in [klo, khi], thinned to about `target`.
std::vector<Tick> power_ticks(double base, double lo, double hi, int target) {
    const double lb = std::log(base);
    const int klo = int(std::ceil(std::log(lo) / lb - 1e-9)), khi = int(std::floor(std::log(hi) / lb + 1e-9));
    if (khi - klo < 1) {
        // Less than one full power inside, yet possibly more than a decade wide (0.02 to 0.8):
        // 1, 2 and 5 x 10^k spread over the whole log axis; linear ticks would crowd its top.
        std::vector<Tick> spread;
        for (int k = klo - 2; base == 10 && k <= khi + 1; ++k)
            for (double m : {1.0, 2.0, 5.0}) {
                const double v = m * std::pow(10.0, k);
                if (v >= lo * (1 - 1e-9) && v <= hi * (1 + 1e-9)) spread.push_back({v, plain(v, v), ""});
            }
        if (spread.size() >= 3) return spread;
        return linear_ticks(lo, hi, target);  // inside one decade or octave
    }
    int every = 1;
    for (int candidate : {1, 2, 3, 4, 5, 10, 20, 25, 50, 100})
        if ((khi - klo) / candidate + 1 <= target + 2) {
            every = candidate;
            break;
        }
    std::vector<Tick> ticks;
    for (int k = klo; k <= khi; ++k) {
        if (((k % every) + every) % every) continue;
        const double v = std::pow(base, k);
        if (base == 10 && k >= -3 && k <= 4)
            ticks.push_back({v, plain(v, v), ""});
        else
            ticks.push_back({v, base == 10 ? "10" : "2", std::to_string(k)});
    }
    if (ticks.size() < 2) return linear_ticks(lo, hi, target);
    if (base == 10 && ticks.size() < 3) {  // about one decade: add 2 x and 5 x 10^k
        for (int k = klo - 1; k <= khi; ++k)
            for (double m : {2.0, 5.0}) {
                const double v = m * std::pow(10.0, k);
                if (v >= lo && v <= hi) ticks.push_back({v, plain(v, v), ""});
            }
        std::sort(ticks.begin(), ticks.end(), [](const Tick& a, const Tick& b) { return a.value < b.value; });
    }
    return ticks;
}

}  // namespace

double AxisTransform::forward(double v) const {
    switch (scale) {
    case AxisScale::Linear:
        return v;
    case AxisScale::Log10:
        return v > 0 ? std::log10(v) : NAN;
    case AxisScale::Log2:
        return v > 0 ? std::log2(v) : NAN;
    case AxisScale::SymLog:
        return std::copysign(std::log10(1 + std::abs(v) / linear_threshold), v);
    }
    return v;
}

double AxisTransform::inverse(double t) const {
    switch (scale) {
    case AxisScale::Linear:
        return t;
    case AxisScale::Log10:
        return std::pow(10.0, t);
    case AxisScale::Log2:
        return std::exp2(t);
    case AxisScale::SymLog:
        return std::copysign((std::pow(10.0, std::abs(t)) - 1) * linear_threshold, t);
    }
    return t;
}

AxisRange fit_range(const labs::Axis& axis, const std::vector<double>& data, double padding) {
    const AxisTransform tr{axis.scale, axis.linear_threshold};
    double lo = INFINITY, hi = -INFINITY;
    for (double v : data) {
        const double t = tr.forward(v);
        if (!std::isfinite(t)) continue;
        lo = std::min(lo, t);
        hi = std::max(hi, t);
    }
    if (!std::isfinite(lo)) {
        lo = 0;
        hi = 1;
    }
    if (hi - lo < 1e-12) {
        lo -= 0.5;
        hi += 0.5;
    }
    const double pad = (hi - lo) * padding;
    AxisRange r{tr.inverse(lo - pad), tr.inverse(hi + pad)};
    if (!axis.categories.empty()) r = {-0.5, double(axis.categories.size()) - 0.5};
    if (axis.min) r.lo = *axis.min;
    if (axis.max) r.hi = *axis.max;
    return r;
}

std::vector<Tick> make_ticks(const labs::Axis& axis, AxisRange range, int target) {
    const double lo = std::min(range.lo, range.hi), hi = std::max(range.lo, range.hi);
    if (!axis.categories.empty()) {
        std::vector<Tick> ticks;
        for (std::size_t i = 0; i < axis.categories.size(); ++i)
            if (double(i) >= lo && double(i) <= hi) ticks.push_back({double(i), axis.categories[i], ""});
        return ticks;
    }
    switch (axis.scale) {
    case AxisScale::Linear:
        return linear_ticks(lo, hi, target);
    case AxisScale::Log10:
        return power_ticks(10, lo, hi, target);
    case AxisScale::Log2:
        return power_ticks(2, lo, hi, target);
    case AxisScale::SymLog: {
        std::vector<Tick> ticks;
        const double c = axis.linear_threshold;
        const double top = std::max(std::abs(lo), std::abs(hi));
        const int klo = int(std::ceil(std::log10(c) - 1e-9)), khi = int(std::floor(std::log10(top) + 1e-9));
        int every = 1;
        while ((khi - klo) / every + 1 > std::max(2, target / 2)) ++every;
        auto add = [&](double v, int k) {
            if (v < lo || v > hi) return;
            if (k >= -3 && k <= 4)
                ticks.push_back({v, plain(v, std::abs(v)), ""});
            else
                ticks.push_back({v, v < 0 ? "-10" : "10", std::to_string(k)});
        };
        for (int k = khi; k >= klo; --k)
            if ((k - klo) % every == 0) add(-std::pow(10.0, k), k);
        if (lo <= 0 && hi >= 0) ticks.push_back({0, "0", ""});
        for (int k = klo; k <= khi; ++k)
            if ((k - klo) % every == 0) add(std::pow(10.0, k), k);
        // Ticks closer than a fraction of the axis to a neighbour nearer zero crowd their
        // labels (+-threshold next to 0): drop them, working outward from zero.
        const AxisTransform tr{AxisScale::SymLog, c};
        const double min_gap = (tr.forward(hi) - tr.forward(lo)) / (2.5 * target);
        std::vector<Tick> kept;
        std::sort(ticks.begin(), ticks.end(),
                  [](const Tick& a, const Tick& b) { return std::abs(a.value) < std::abs(b.value); });
        for (const Tick& t : ticks) {
            const bool crowded = std::any_of(kept.begin(), kept.end(), [&](const Tick& k) {
                return std::abs(tr.forward(k.value) - tr.forward(t.value)) < min_gap;
            });
            if (!crowded) kept.push_back(t);
        }
        std::sort(kept.begin(), kept.end(), [](const Tick& a, const Tick& b) { return a.value < b.value; });
        return kept;
    }
    }
    return {};
}

}  // namespace fp8lab::plot
