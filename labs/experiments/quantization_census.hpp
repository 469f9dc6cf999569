// SPDX-License-Identifier: Apache-2.0
// Where a tensor's values land when multiplied by a scale and converted to a format:
// overflow, flushed to zero, subnormal, normal, and the error this costs.
#pragma once

#include <span>

#include "emulator/formats/format.hpp"

namespace fp8lab::labs {

struct QuantizationCensus {
    double overflow = 0;            // fraction of values past the largest (NaN/Inf without saturation)
    double flushed = 0;             // fraction of non-zero values that became zero
    double subnormal = 0;           // fraction landing on a subnormal value
    double normal = 0;              // the rest (zeros that were zero count here)
    double rms_relative_error = 0;  // over non-zero values, with saturation, after dividing the scale back out
};

// Round to nearest even; the error is measured on the saturated result.
QuantizationCensus census(const emu::Format& format, std::span<const float> x, float scale);

}  // namespace fp8lab::labs
