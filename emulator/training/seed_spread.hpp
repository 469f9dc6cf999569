// SPDX-License-Identifier: Apache-2.0
// A variant trained over several seeds: its final losses' mean and range, and whether two
// variants differ beyond that range (the labs, the CLI and the Python module report these).
#pragma once

#include <vector>

namespace fp8lab::emu {

// The final losses of one variant, one per seed.
struct SeedSpread {
    int seeds = 0;
    double mean = 0, least = 0, largest = 0;
};
SeedSpread spread_of(const std::vector<double>& final_losses);

// A difference is a finding only when the two ranges over the seeds do not overlap (with
// one seed there is no range, so never).
bool differs_beyond_spread(const SeedSpread& a, const SeedSpread& b);

}  // namespace fp8lab::emu
