// SPDX-License-Identifier: Apache-2.0
// Scalar conversion to and from any format: one rounding from float32 or float64.
#pragma once

#include <cstdint>

#include "emulator/formats/format.hpp"
#include "emulator/formats/rounding.hpp"

namespace fp8lab::emu {

// Converts x to the code of `format`, rounded once with options.rounding. `index` is the
// element's position, which selects the stochastic-rounding bits (ignored otherwise).
//
// Choices where libraries disagree (checked against CUDA 13's host functions):
// - A float32 NaN gives the positive canonical NaN; in FP6/FP4, which have none, +max. A
//   float64 NaN keeps its sign in E4M3 (0x7F/0xFF) and E5M2, where the payload's bit 50
//   picks 0x7E or 0x7F (CUDA's float64 functions differ from its float32 ones here).
// - Overflow is decided after rounding. Saturation::Finite gives +-max. Saturation::None
//   follows IEEE 754 per direction: toward-zero, and up/down on the side that moves
//   toward zero, give +-max; the other modes give Inf, or NaN (sign kept) where the
//   format has no Inf. FP6/FP4 have neither, so they always saturate.
// - E8M0 has no sign and no zero: it encodes |x|, and anything that rounds below 2^-127
//   (zero included) becomes 2^-127.
std::uint32_t encode(const Format& format, double x, const ConvertOptions& options = {}, std::uint64_t index = 0);
std::uint32_t encode(const Format& format, float x, const ConvertOptions& options = {}, std::uint64_t index = 0);

// The exact value of a code (NaN, +-Inf and -0 included).
double decode(const Format& format, std::uint32_t code);

// Round-trip: the value x becomes after conversion (decode(encode(x))).
double round_to_format(const Format& format, double x, const ConvertOptions& options = {}, std::uint64_t index = 0);

}  // namespace fp8lab::emu
