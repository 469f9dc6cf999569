// SPDX-License-Identifier: Apache-2.0
// A variant trained over several seeds in a lab: whether it differs from another beyond
// their ranges, in words, and its curves as a mean with a band (the numbers: emulator).
#pragma once

#include <string>
#include <vector>

#include "emulator/training/seed_spread.hpp"
#include "labs/framework/figure.hpp"

namespace fp8lab::labs {

using emu::differs_beyond_spread;
using emu::SeedSpread;
using emu::spread_of;

// "within the spread of 4 seeds", "beyond the spread of 4 seeds (lower)" / "(higher)", or
// "one seed: no spread to tell a difference from noise", for b against a.
std::string spread_words(const SeedSpread& a, const SeedSpread& b);

// "0.0123 (0.0119 to 0.0131 over 4 seeds)", or the one value with one seed.
std::string spread_text(const SeedSpread& s);

// What the CPU emulator measured of a run, the mean over its seeds: the share of its FP8
// gradient elements that reached their GEMMs as zero, and how far it moved its weights
// (emu::TrainerResult::weight_change).
struct RunMeasures {
    double zero_gradients = 0, weight_change = 0;
};
// When `run` ends lower than BF16 beyond the spread: a note that says so, with what was
// measured of both runs (null measures: the backend measured neither, the note says where
// they are); empty otherwise. A lower training loss is a finding to explain, not a better
// format.
std::string lower_than_bf16_note(const std::string& name, const SeedSpread& bf16, const SeedSpread& run,
                                 const RunMeasures* bf16_measures, const RunMeasures* run_measures);

// Per-seed curves (one per seed, step by step) as figure series: with one seed its line;
// with more the mean's line and a band from the least to the largest at each step, named
// `name` alone (a legend on a projector has no room for more): say so in a note.
std::vector<Series> curve_with_band(const std::string& name, const std::vector<std::vector<float>>& curves, int colour);

}  // namespace fp8lab::labs
