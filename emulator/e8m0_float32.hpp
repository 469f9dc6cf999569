// SPDX-License-Identifier: Apache-2.0
// E8M0 codes of float32 inputs by integer arithmetic on the float's bits: the bulk loops'
// path for MX scales (the reference encoder widens to float64 and rounds in 128 bits, about
// 30 times slower). Equal to encode() for every float32 and every deterministic mode; the
// exhaustive test against CUDA checks both.
#pragma once

#include <cstdint>

#include "emulator/rounding.hpp"

namespace fp8lab::emu::detail {

// E8M0 code c is 2^(c - 127), as float32's exponent field; 255 is NaN, there is no zero
// (|x| below 2^-127 clips to code 0) and the sign is ignored.
inline std::uint8_t e8m0_code_of_float32(std::uint32_t bits, RoundingMode mode, Saturation saturation) {
    constexpr std::uint32_t kNan = 255, kMax = 254;
    const std::uint32_t field = (bits >> 23) & 0xFFu, mantissa = bits & 0x7FFFFFu;
    if (field == 0xFFu) return std::uint8_t(mantissa != 0 || saturation == Saturation::None ? kNan : kMax);
    // Normal: the code truncated is the exponent field, the mantissa is what is dropped.
    // Subnormal: [2^-127, 2^-126) truncates to code 0 dropping the 22 bits below bit 22;
    // anything smaller truncates to "code -1", which clips to 0 however it rounds.
    if (field == 0 && mantissa < (1u << 22)) return 0;
    const std::uint32_t truncated = field;  // 0 for the subnormal binade, as its exponent field
    const std::uint32_t rem = field ? mantissa : mantissa & 0x3FFFFFu;
    const std::uint32_t half = field ? 1u << 22 : 1u << 21;
    const bool odd = (truncated & 1u) != 0;
    bool away = false;
    switch (mode) {
    case RoundingMode::NearestEven:
        away = rem > half || (rem == half && odd);
        break;
    case RoundingMode::NearestAway:
        away = rem >= half;
        break;
    case RoundingMode::Up:  // E8M0 encodes |x|: rounding up is away from zero
        away = rem != 0;
        break;
    case RoundingMode::Odd:
        away = rem != 0 && !odd;
        break;
    case RoundingMode::TowardZero:
    case RoundingMode::Down:
    case RoundingMode::Stochastic:  // not taken here: the caller sends it to encode()
        break;
    }
    const std::uint32_t code = truncated + (away ? 1u : 0u);
    if (code > kMax)  // only 2^127 x (1 + f) rounding up; the downward modes keep the max
        return std::uint8_t(saturation == Saturation::Finite ? kMax : kNan);
    return std::uint8_t(code);
}

}  // namespace fp8lab::emu::detail
