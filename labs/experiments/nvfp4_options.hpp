// SPDX-License-Identifier: Apache-2.0
// What NVFP4 training's three options do, measured on fixed synthetic tensors without
// training: stochastic rounding on sums of gradients, 16x16 weight tiles on a weight and
// its transpose, the random Hadamard transform on a weight-gradient GEMM with outlier tokens.
#pragma once

#include <string>
#include <vector>

#include "labs/framework/placeholders.hpp"

namespace fp8lab::labs {

// One measurement: the option, what was measured (in %), without the option and with it.
struct Nvfp4OptionEffect {
    std::string option, measure;
    double without = 0, with = 0;
};

// Deterministic (fixed seeds): the same rows on every machine and thread count.
std::vector<Nvfp4OptionEffect> measure_nvfp4_options();

// The experiments' sizes for the step's prose ({{options.tokens}}, {{options.weight}},
// ...), so that the text states what the code measures.
PlaceholderValues nvfp4_options_text_values();

}  // namespace fp8lab::labs
