// SPDX-License-Identifier: Apache-2.0
// Runs of a lab compared over the same seeds: the paired finding in words and as a figure
// (per-seed ratios with their interval), and curves as a mean with a band (the numbers:
// emulator/training/paired_comparison.hpp).
#pragma once

#include <string>
#include <vector>

#include "emulator/training/paired_comparison.hpp"
#include "labs/framework/figure.hpp"

namespace fp8lab::labs {

using emu::compare_paired;
using emu::paired_words;
using emu::PairedComparison;
using emu::SeedSpread;
using emu::spread_of;

// "0.0123 (0.0119 to 0.0131 over 4 seeds)", or the one value with one seed.
std::string spread_text(const SeedSpread& s);

// What the CPU emulator measured of a run, the mean over its seeds: the share of its FP8
// gradient elements that reached their GEMMs as zero, and how far it moved its weights
// (emu::TrainerResult::weight_change).
struct RunMeasures {
    double zero_gradients = 0, weight_change = 0;
};
// When `run` ends lower than BF16 (a paired difference whose interval lies below 1): a note
// that says so, with what was measured of both runs (null measures: the backend measured
// neither, the note says where they are); empty otherwise. A lower training loss is a
// finding to explain, not a better format.
std::string lower_than_bf16_note(const std::string& name, const PairedComparison& against_bf16,
                                 const RunMeasures* bf16_measures, const RunMeasures* run_measures);

// One compared run: its name and its paired comparison with the baseline.
struct ComparedRun {
    std::string name;
    PairedComparison comparison;
};
// Each run's per-seed ratios to the baseline (a dot a seed) and the 95% interval of their
// mean (a bar), one column a run named in the legend, with a dashed line at 1 (no
// difference). Its id is
// "seed-ratios"; its title names the baseline and the measure (`measure`: "final loss",
// "validation loss").
Figure seed_ratio_figure(const std::string& baseline, const std::string& measure, const std::vector<ComparedRun>& runs);

// Per-seed curves (one per seed, step by step) as figure series: with one seed its line;
// with more the mean's line and a band from the least to the largest at each step, named
// `name` alone (a legend on a projector has no room for more): say so in a note.
std::vector<Series> curve_with_band(const std::string& name, const std::vector<std::vector<float>>& curves, int colour);

}  // namespace fp8lab::labs
