// SPDX-License-Identifier: Apache-2.0
// What the suites that run every step run in the sanitizer tree: light iteration counts, and the export's steps.
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <optional>
#include <string_view>

#include "labs/framework/lab.hpp"

namespace fp8lab::test {

#ifdef FP8LAB_SANITIZER_TREE
inline constexpr bool kSanitizerTree = true;
#else
inline constexpr bool kSanitizerTree = false;
#endif

// The smallest value of a step's integer "steps" parameter (training steps, or updates
// added), if it has one.
inline std::optional<std::int64_t> steps_parameter_min(const labs::Step& step) {
    for (const labs::ParameterSpec& spec : step.logic.parameters)
        if (spec.name == "steps" && spec.kind == labs::ParameterKind::Integer) return spec.int_min;
    return std::nullopt;
}

// In the sanitizer tree (FP8LAB_SANITIZER_TREE) a step with an integer "steps" parameter
// runs at its smallest value: the same code paths as at its defaults, several minutes less
// under AddressSanitizer on 2 cores. The release tree runs every step at its defaults, and
// the tests of the numbers the labs state.
inline std::optional<std::int64_t> light_steps(const labs::Step& step) {
    if (kSanitizerTree) return steps_parameter_min(step);
    return std::nullopt;
}

// The steps with a "steps" parameter that the sanitizer tree's catalog export runs: with
// every step that has none, their figures and tables have every feature that the whole
// catalog's have (figure_features.hpp), which the labs suite's every-step test checks in
// both trees. The other such steps' computations run under the sanitizers in that test.
inline constexpr std::array<std::string_view, 1> kStepsParameterStepsExported = {"training/loss-curves"};

// Whether the catalog export in the sanitizer tree runs step `id` (LAB/STEP).
inline bool exported_under_sanitizers(std::string_view id, const labs::Step& step) {
    return !steps_parameter_min(step) ||
           std::find(kStepsParameterStepsExported.begin(), kStepsParameterStepsExported.end(), id) !=
               kStepsParameterStepsExported.end();
}

}  // namespace fp8lab::test
