// SPDX-License-Identifier: Apache-2.0
// Picking labs and steps from the command line: "LAB", "LAB/STEP", backends.
#pragma once

#include <string>
#include <vector>

#include "labs/framework/catalog.hpp"

namespace fp8lab::cli {

struct SelectedStep {
    const labs::Lab* lab;
    const labs::Step* step;
};

// The catalog; its errors are printed to stderr (the labs that loaded stay usable).
const labs::Catalog& lab_catalog();

// "LAB" -> its steps; "LAB/STEP" -> that step; a comma-separated list of those -> their
// union, in the list's order. Throws UsageError naming the unknown lab or step and listing
// the known ones, and for an empty selection (which would otherwise read as "all").
std::vector<SelectedStep> select_steps(const labs::Catalog& catalog, const std::string& selector);
// Every step of every lab.
std::vector<SelectedStep> all_steps(const labs::Catalog& catalog);

// "cpu" or "gpu"; for gpu, throws UsageError with the probe's reason when no GPU is usable.
labs::Backend backend_option(const std::string& text);

// Throws UsageError when the step does not run on the backend.
void require_backend(const SelectedStep& s, labs::Backend backend);

// Each selected step's parameters, its defaults with every --set NAME=VALUE applied to the
// steps that have NAME (a single selected step must have it). Throws UsageError for a
// malformed or refused setting and for a name no selected step has.
std::vector<labs::Parameters> step_parameters(const std::vector<SelectedStep>& steps,
                                              const std::vector<std::string>& sets);

}  // namespace fp8lab::cli
