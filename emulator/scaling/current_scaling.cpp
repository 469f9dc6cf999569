// SPDX-License-Identifier: Apache-2.0
// Current scaling in the exact float32 operation order of docs/numerics.md §4.
#include "emulator/scaling/current_scaling.hpp"

#include <bit>
#include <cfloat>
#include <cmath>
#include <cstdint>

namespace fp8lab::emu {

float power_of_two_floor(float x) { return std::bit_cast<float>(std::bit_cast<std::uint32_t>(x) & 0xFF800000u); }

ScalePair current_scale(float amax, const Format& format, bool power_of_two) {
    if (amax == 0.0f || !std::isfinite(amax)) return {1.0f, 1.0f};
    float scale = static_cast<float>(format.max_finite) / amax;
    if (std::isinf(scale)) scale = FLT_MAX;
    if (power_of_two) scale = power_of_two_floor(scale);
    return with_inverse(scale);
}

}  // namespace fp8lab::emu
