// SPDX-License-Identifier: Apache-2.0
// E8M0 codes of float32 inputs by integer arithmetic on the float's bits: the bulk loops'
// path for MX scales (the reference encoder widens to float64 and rounds in 128 bits, about
// 30 times slower). Equal to encode() for every float32 and every deterministic mode; the
// exhaustive test against CUDA checks both.
#pragma once

#include <bit>
#include <cstddef>
#include <cstdint>

#include "emulator/formats/rounding.hpp"

namespace fp8lab::emu::detail {

// E8M0 code c is 2^(c - 127), as float32's exponent field; 255 is NaN, there is no zero
// (|x| below 2^-127 clips to code 0) and the sign is ignored. Branch-free, with the mode a
// template argument, so that a loop of it vectorises.
template <RoundingMode Mode>
constexpr std::uint32_t e8m0_code_in_mode(std::uint32_t bits, bool saturate_finite) {
    constexpr std::uint32_t kNan = 255, kMax = 254;
    const std::uint32_t field = (bits >> 23) & 0xFFu, mantissa = bits & 0x7FFFFFu;
    // Normal: the code truncated is the exponent field, the mantissa is what is dropped.
    // Subnormal: [2^-127, 2^-126) truncates to code 0 dropping the 22 bits below bit 22;
    // anything smaller truncates to "code -1", which clips to 0 however it rounds.
    const std::uint32_t rem = field ? mantissa : mantissa & 0x3FFFFFu;
    const std::uint32_t half = field ? 1u << 22 : 1u << 21;
    const std::uint32_t odd = field & 1u;
    const std::uint32_t inexact = rem != 0 ? 1u : 0u;
    std::uint32_t away = 0;
    if constexpr (Mode == RoundingMode::NearestEven)
        away = (rem > half ? 1u : 0u) | ((rem == half ? 1u : 0u) & odd);
    else if constexpr (Mode == RoundingMode::NearestAway)
        away = rem >= half ? 1u : 0u;
    else if constexpr (Mode == RoundingMode::Up)  // E8M0 encodes |x|: rounding up is away from zero
        away = inexact;
    else if constexpr (Mode == RoundingMode::Odd)
        away = inexact & (odd ^ 1u);
    // TowardZero and Down truncate; Stochastic is not taken here (the caller sends it to encode()).
    std::uint32_t code = field + away;
    // Below 2^-127 the code is 0 however it rounds: a mask, since as a select of an `&&`
    // GCC left the round-up loop scalar.
    const std::uint32_t tiny = (field == 0 ? 1u : 0u) & (mantissa < (1u << 22) ? 1u : 0u);
    code &= tiny - 1u;
    // Past the max: only 2^127 x (1 + f) rounding up, and Inf; the downward modes keep the max.
    code = code > kMax ? (saturate_finite ? kMax : kNan) : code;
    return field == 0xFFu && mantissa != 0 ? kNan : code;  // NaN stays NaN
}

inline std::uint8_t e8m0_code_of_float32(std::uint32_t bits, RoundingMode mode, Saturation saturation) {
    const bool finite = saturation == Saturation::Finite;
    switch (mode) {
    case RoundingMode::NearestEven:
        return std::uint8_t(e8m0_code_in_mode<RoundingMode::NearestEven>(bits, finite));
    case RoundingMode::NearestAway:
        return std::uint8_t(e8m0_code_in_mode<RoundingMode::NearestAway>(bits, finite));
    case RoundingMode::Up:
        return std::uint8_t(e8m0_code_in_mode<RoundingMode::Up>(bits, finite));
    case RoundingMode::Odd:
        return std::uint8_t(e8m0_code_in_mode<RoundingMode::Odd>(bits, finite));
    case RoundingMode::TowardZero:
    case RoundingMode::Down:
    case RoundingMode::Stochastic:
        break;
    }
    return std::uint8_t(e8m0_code_in_mode<RoundingMode::TowardZero>(bits, finite));
}

// Codes of in[i] * scale for i < n (a deterministic mode; Stochastic is not taken here),
// the mode's switch taken once for the loop, which is compiled per CPU level
// (e8m0_loops.cpp).
void e8m0_codes_of_float32(const float* in, float scale, std::uint8_t* out, std::size_t n, RoundingMode mode,
                           Saturation saturation);

}  // namespace fp8lab::emu::detail
