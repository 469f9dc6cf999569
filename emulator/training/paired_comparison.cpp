// SPDX-License-Identifier: Apache-2.0
// Paired comparisons over seeds (paired_comparison.hpp).
#include "emulator/training/paired_comparison.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <numbers>
#include <stdexcept>

namespace fp8lab::emu {
namespace {

// P(|T| < t) for Student's t with an integer number of degrees of freedom, by the finite
// series in theta = atan(t / sqrt(nu)) (Abramowitz and Stegun, 26.7.3 and 26.7.4).
double t_central_probability(double t, int nu) {
    const double theta = std::atan(t / std::sqrt(double(nu)));
    const double c2 = std::cos(theta) * std::cos(theta), s = std::sin(theta);
    if (nu % 2 == 1) {
        double sum = 0, term = 1;  // 1 + (2/3) c^2 + (2*4)/(3*5) c^4 + ... up to c^(nu-3)
        for (int k = 1; k <= nu - 2; k += 2) {
            sum += term;
            term *= c2 * double(k + 1) / double(k + 2);
        }
        return 2.0 / std::numbers::pi * (theta + (nu > 1 ? s * std::cos(theta) * sum : 0.0));
    }
    double sum = 0, term = 1;  // 1 + (1/2) c^2 + (1*3)/(2*4) c^4 + ... up to c^(nu-2)
    for (int k = 1; k <= nu - 1; k += 2) {
        sum += term;
        term *= c2 * double(k) / double(k + 1);
    }
    return s * sum;
}

}  // namespace

double student_t_975(int degrees) {
    if (degrees < 1) throw std::invalid_argument("student_t_975: needs at least one degree of freedom");
    // Bisection on the central probability, which rises from 0 to 1 with t.
    double lo = 0, hi = 1;
    while (t_central_probability(hi, degrees) < 0.95) hi *= 2;
    for (int i = 0; i < 200 && hi - lo > 1e-12 * hi; ++i) {
        const double mid = 0.5 * (lo + hi);
        (t_central_probability(mid, degrees) < 0.95 ? lo : hi) = mid;
    }
    return 0.5 * (lo + hi);
}

SeedSpread spread_of(std::span<const double> finals) {
    SeedSpread s;
    s.seeds = int(finals.size());
    if (finals.empty()) return s;
    double sum = 0;
    for (double f : finals) sum += f;
    s.mean = sum / double(finals.size());
    s.least = *std::min_element(finals.begin(), finals.end());
    s.largest = *std::max_element(finals.begin(), finals.end());
    return s;
}

PairedComparison compare_paired(std::span<const double> baseline, std::span<const double> variant) {
    if (baseline.size() != variant.size())
        throw std::invalid_argument("a paired comparison needs the same seeds for both runs: " +
                                    std::to_string(baseline.size()) + " against " + std::to_string(variant.size()));
    if (baseline.empty()) throw std::invalid_argument("a paired comparison needs at least one seed");
    PairedComparison c;
    double sum = 0;
    std::vector<double> logs;
    for (std::size_t k = 0; k < baseline.size(); ++k) {
        if (!(std::isfinite(baseline[k]) && baseline[k] > 0 && std::isfinite(variant[k]) && variant[k] > 0))
            throw std::invalid_argument("seed " + std::to_string(k + 1) +
                                        ": a paired comparison needs finite, positive final losses");
        c.ratios.push_back(variant[k] / baseline[k]);
        logs.push_back(std::log(variant[k]) - std::log(baseline[k]));
        sum += logs.back();
        if (variant[k] > baseline[k])
            ++c.worse;
        else if (variant[k] < baseline[k])
            ++c.better;
        else
            ++c.equal;
    }
    const double n = double(logs.size()), mean = sum / n;
    c.mean_ratio = c.low = c.high = std::exp(mean);
    if (logs.size() < 2) return c;
    double squares = 0;
    for (double l : logs) squares += (l - mean) * (l - mean);
    const double standard_error = std::sqrt(squares / (n - 1) / n);
    const double half = student_t_975(int(logs.size()) - 1) * standard_error;
    c.low = std::exp(mean - half);
    c.high = std::exp(mean + half);
    return c;
}

std::string percent_text(double ratio, int decimals) {
    char text[64];
    std::snprintf(text, sizeof text, "%+.*f%%", decimals, 100 * (ratio - 1));
    return text;
}

int percent_decimals(const PairedComparison& c) {
    // Two digits or more of the interval's width, at least one decimal...
    const double width = 100 * (c.high - c.low);
    int decimals = width >= 0.5 || width <= 0 ? 1 : width >= 0.05 ? 2 : 3;
    // ...and more, up to three, until no end that differs from 1 reads as 0.0%.
    for (const double end : {c.low, c.high}) {
        const double off = 100 * std::fabs(end - 1);
        while (off > 0 && decimals < 3 && off < 0.5 * std::pow(10.0, -decimals)) ++decimals;
    }
    return decimals;
}

std::string paired_words(const PairedComparison& c, const std::string& variant, const std::string& baseline) {
    return paired_words(c, variant, baseline, percent_decimals(c));
}

std::string paired_words(const PairedComparison& c, const std::string& variant, const std::string& baseline,
                         int decimals) {
    const std::string n = std::to_string(c.seeds());
    const auto size = [&](double ratio) {
        std::string t = percent_text(ratio, decimals);
        return t.substr(1);  // the sign is said in words
    };
    // Without a variant's name, the words for a table's cell beside it: "1.2% worse (...)".
    const std::string who = variant.empty() ? "" : variant + " ";
    const std::string than = variant.empty() ? "" : " than " + baseline;
    if (!c.has_interval())
        return who + percent_text(c.mean_ratio, 1) + (variant.empty() ? "" : " against " + baseline) +
               " on one seed: no interval, so no finding (run 2 seeds or more)";
    const std::string interval =
        "95% interval " + percent_text(c.low, decimals) + " to " + percent_text(c.high, decimals);
    if (!c.differs())
        return "no difference found at " + n + " seeds (" + percent_text(c.mean_ratio, decimals) + ", " + interval +
               ")";
    const bool worse = c.low > 1.0;
    return who + size(c.mean_ratio) + (worse ? " worse" : " better") + than + " (" + interval + "; " +
           (worse ? "worse" : "better") + " on " + std::to_string(worse ? c.worse : c.better) + " of " + n + " seeds)";
}

}  // namespace fp8lab::emu
