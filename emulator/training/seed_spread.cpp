// SPDX-License-Identifier: Apache-2.0
// Seed spreads (seed_spread.hpp).
#include "emulator/training/seed_spread.hpp"

#include <algorithm>

namespace fp8lab::emu {

SeedSpread spread_of(const std::vector<double>& finals) {
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

bool differs_beyond_spread(const SeedSpread& a, const SeedSpread& b) {
    if (a.seeds < 2 || b.seeds < 2) return false;
    return b.least > a.largest || b.largest < a.least;
}

}  // namespace fp8lab::emu
