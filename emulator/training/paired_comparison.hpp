// SPDX-License-Identifier: Apache-2.0
// Two runs of training compared over the same seeds (docs/numerics.md, "How fp8lab compares
// two runs"): each seed gives both the same data and starting weights, so the runs are
// paired; the finding is the ratio of their final losses, seed by seed, with a 95% interval.
#pragma once

#include <span>
#include <string>
#include <vector>

namespace fp8lab::emu {

// One run's final losses over its seeds, described (mean and range). It never compares two
// runs: their seeds are paired, and compare_paired is the rule for that.
struct SeedSpread {
    int seeds = 0;
    double mean = 0, least = 0, largest = 0;
};
SeedSpread spread_of(std::span<const double> final_losses);

struct PairedComparison {
    std::vector<double> ratios;  // per seed: the variant's final loss over the baseline's
    // The geometric mean of the ratios, exp(mean log ratio), and its 95% interval from
    // Student's t on the log-ratios (n - 1 degrees of freedom). With one seed, low = high =
    // mean: there is no interval.
    double mean_ratio = 1, low = 1, high = 1;
    int worse = 0, better = 0, equal = 0;  // seeds where the variant's loss is higher, lower, the same

    int seeds() const { return int(ratios.size()); }
    bool has_interval() const { return seeds() >= 2; }
    // A finding: the interval excludes a ratio of 1 (no difference).
    bool differs() const { return has_interval() && (low > 1.0 || high < 1.0); }
};

// Pairs baseline[k] with variant[k] (the same seed). Throws std::invalid_argument when the
// lists differ in length, are empty, or hold a loss that is not finite and positive.
PairedComparison compare_paired(std::span<const double> baseline, std::span<const double> variant);

// The 97.5th percentile of Student's t with `degrees` degrees of freedom (at least 1):
// the half-width of a two-sided 95% interval in standard errors.
double student_t_975(int degrees);

// In words, from the interval: "FP8 delayed 1.2% worse than BF16 (95% interval 0.9% to
// 1.5%; worse on 4 of 4 seeds)", "no difference found at 4 seeds (95% interval -0.8% to
// +1.1%)", or, with one seed, the ratio and that there is no interval. An empty `variant`
// gives the words for a table's cell beside the run's name: "1.2% worse (95% interval ...)".
std::string paired_words(const PairedComparison& c, const std::string& variant, const std::string& baseline);
// The same with the decimals given: a table's rows share the most any of them needs
// (percent_decimals), so that neighbouring rows read alike.
std::string paired_words(const PairedComparison& c, const std::string& variant, const std::string& baseline,
                         int decimals);

// A percentage change from a ratio with a sign and `decimals` decimals: "+1.2%".
std::string percent_text(double ratio, int decimals);
// The decimals a comparison's percentages take: enough that its interval's width shows as
// two digits or more (one decimal at least), and more, up to three, until neither end of
// the interval reads as 0.0% when it is not 1.
int percent_decimals(const PairedComparison& c);

}  // namespace fp8lab::emu
