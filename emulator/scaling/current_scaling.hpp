// SPDX-License-Identifier: Apache-2.0
// Current (per-tensor) scaling: the scale that maps this tensor's amax onto the format's max.
#pragma once

#include "emulator/formats/format.hpp"

namespace fp8lab::emu {

struct ScalePair {
    float scale = 1.0f;      // q = cvt(x * scale)
    float scale_inv = 1.0f;  // x ~ value(q) * scale_inv
};

// amax 0, Inf or NaN gives scale 1; else max / amax (float32 division), Inf becoming
// FLT_MAX; optionally only the sign and exponent bits are kept (a power of two).
ScalePair current_scale(float amax, const Format& format, bool power_of_two = false);

// The power of two at or below a positive float: its sign and exponent bits.
float power_of_two_floor(float x);

// 1/scale in float32, the dequantisation factor stored with a tensor.
inline ScalePair with_inverse(float scale) { return {scale, 1.0f / scale}; }

}  // namespace fp8lab::emu
