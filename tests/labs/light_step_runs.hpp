// SPDX-License-Identifier: Apache-2.0
// Which parameters the suites that run every step give it: light iteration counts in the sanitizer tree.
#pragma once

#include <cstdint>
#include <optional>

#include "labs/framework/lab.hpp"

namespace fp8lab::test {

#ifdef FP8LAB_SANITIZER_TREE
inline constexpr bool kSanitizerTree = true;
#else
inline constexpr bool kSanitizerTree = false;
#endif

// In the sanitizer tree (FP8LAB_SANITIZER_TREE) a step with an integer "steps" parameter
// (training steps, or updates added) runs at its smallest value: the same code paths as at
// its defaults, several minutes less under AddressSanitizer on 2 cores. The release tree
// runs every step at its defaults, and the tests of the numbers the labs state.
inline std::optional<std::int64_t> light_steps(const labs::Step& step) {
    if (kSanitizerTree)
        for (const labs::ParameterSpec& spec : step.logic.parameters)
            if (spec.name == "steps" && spec.kind == labs::ParameterKind::Integer) return spec.int_min;
    return std::nullopt;
}

}  // namespace fp8lab::test
