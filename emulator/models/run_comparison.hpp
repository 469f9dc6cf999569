// SPDX-License-Identifier: Apache-2.0
// Several variants of one experiment trained on the CPU emulator over the same seeds, each
// compared with the first, seed by seed (`fp8lab train --compare`, the Python module's
// compare()): the paired table of docs/numerics.md, "How fp8lab compares two runs".
#pragma once

#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "emulator/training/experiment.hpp"
#include "emulator/training/paired_comparison.hpp"

namespace fp8lab::emu {

struct RunVariant {
    std::string name;  // as the list named it: "bf16", "delayed", "mx-rceil"
    Experiment experiment;
};

// "bf16,delayed,mx-rceil": each name a precision without a recipe (fp32, bf16) or an FP8
// recipe (delayed, current, mx-floor, mx-rceil, blockwise, rowwise, nvfp4), applied to
// `base` (a recipe with the element formats it takes, as `train --recipe` sets them). The first is the baseline. Throws std::invalid_argument naming a name that is
// neither, a repeated name, or a list of fewer than two.
std::vector<RunVariant> variants_from_list(const Experiment& base, std::string_view list);

struct ComparedVariant {
    std::string name;
    std::vector<double> finals;         // per seed
    PairedComparison against_baseline;  // the baseline's own: every ratio 1
};
struct RunComparison {
    // "final loss" (the mean of a run's last 10 training losses) or "validation loss" (bits
    // per byte at the end, where the task holds text out).
    std::string measure;
    int seeds = 0;
    std::vector<ComparedVariant> variants;  // the baseline first
};

// Called after each run with the fraction done and what ran; returning false cancels
// (compare_runs then throws std::runtime_error "cancelled").
using ComparisonProgress = std::function<bool(double fraction, const std::string& what)>;

// Every variant on seeds 0 .. seeds-1 (with_seed), each run with all the machine's threads.
RunComparison compare_runs(const std::vector<RunVariant>& variants, int seeds, const ComparisonProgress& progress = {});

// The paired table as text (one row a variant: mean, ratio, interval, seeds each way and the
// finding in words) and as JSON (the same, with every seed's final loss).
std::string comparison_table(const RunComparison& comparison);
std::string comparison_json(const RunComparison& comparison);

}  // namespace fp8lab::emu
