// A variant trained over several seeds: its final losses' mean and range, whether two
// variants differ beyond that range, in words, and its curves as a mean with a band.
#pragma once

#include <string>
#include <vector>

#include "labs/framework/figure.hpp"

namespace fp8lab::labs {

// The final losses of one variant, one per seed.
struct SeedSpread {
    int seeds = 0;
    double mean = 0, least = 0, largest = 0;
};
SeedSpread spread_of(const std::vector<double>& final_losses);

// A difference is a finding only when the two ranges over the seeds do not overlap (with
// one seed there is no range, so never).
bool differs_beyond_spread(const SeedSpread& a, const SeedSpread& b);

// "within the spread of 4 seeds", "beyond the spread of 4 seeds (lower)" / "(higher)", or
// "one seed: no spread to tell a difference from noise", for b against a.
std::string spread_words(const SeedSpread& a, const SeedSpread& b);

// "0.0123 (0.0119 to 0.0131 over 4 seeds)", or the one value with one seed.
std::string spread_text(const SeedSpread& s);

// Per-seed curves (one per seed, step by step) as figure series: with one seed its line;
// with more the mean's line and a band from the least to the largest at each step.
std::vector<Series> curve_with_band(const std::string& name, const std::vector<std::vector<float>>& curves, int colour);

}  // namespace fp8lab::labs
