// SPDX-License-Identifier: Apache-2.0
// The float32 -> code conversion of every bulk path, branch-free and constexpr, in C++17
// with no library beyond <cstdint>: the CPU loops and the GPU's kernels run this one code.
#pragma once

#include <cstdint>

#include "emulator/formats/rounding_mode.hpp"

namespace fp8lab::emu::detail {

// Everything the kernel needs about (format, saturation), as loop-invariant integers.
// Exponents are in float32's biased form so they compare directly with input fields.
struct Float32KernelConstants {
    std::uint32_t mantissa_bits;
    std::uint32_t min_field;           // biased float32 exponent of the format's min normal
    std::uint32_t max_magnitude;       // largest finite magnitude code
    std::uint32_t overflow_magnitude;  // Inf, NaN or max, per saturation and format
    std::uint32_t nan_code;
    std::uint32_t sign_shift;
    bool saturate_finite;
};

// The rounded magnitude code of |x| (a = its float32 bits without the sign), before any
// overflow handling: values past the largest finite code are returned as they are, so
// callers can both clamp (encode) and count overflows (statistics).
template <RoundingMode Mode>
constexpr std::uint32_t rounded_magnitude(std::uint32_t a, std::uint32_t sign, const Float32KernelConstants& k,
                                          std::uint32_t random, int random_bits) {
    const std::uint32_t field = a >> 23;
    const std::uint32_t field_eff = field ? field : 1u;
    const std::uint32_t significand = (a & 0x7FFFFFu) | (field ? 0x800000u : 0u);
    const std::uint32_t q = field_eff > k.min_field ? field_eff : k.min_field;
    const std::uint32_t shift_exact = 23u - k.mantissa_bits + (q - field_eff);

    // Integer flags, not bools joined by && and ||: short-circuits are branches, and a
    // branch per lane keeps GCC from vectorising the directed modes' loops.
    std::uint32_t n = 0;
    std::uint32_t away = 0;
    if constexpr (Mode == RoundingMode::Stochastic) {
        // Away when frac(significand / 2^shift) + random / 2^bits >= 1, in 32-bit lanes (a
        // 64-bit version did not vectorise). scaled = floor(rem * 2^bits / 2^shift) is exact:
        // the significand has 24 bits, so rem << left stays below 2^bits and a right shift
        // past 23 places gives 0; and scaled + random >= 2^bits is written as
        // random > (2^bits - 1) - scaled, which cannot overflow.
        const std::uint32_t shift = shift_exact < 31u ? shift_exact : 31u;  // past 24 places: n 0, rem all
        n = significand >> shift;
        const std::uint32_t rem = significand & ((1u << shift) - 1u);
        const std::uint32_t b = static_cast<std::uint32_t>(random_bits);
        const std::uint32_t left = b > shift_exact ? b - shift_exact : 0u;  // at most 19: shift_exact >= 13
        const std::uint32_t down = shift_exact > b ? shift_exact - b : 0u;
        const std::uint32_t scaled = (rem << left) >> (down < 31u ? down : 31u);
        const std::uint32_t all_ones = 0xFFFFFFFFu >> (32u - b);
        away = random > all_ones - scaled ? 1u : 0u;
    } else {
        // Past 31 places every significand bit is below half: clamping keeps the decision.
        const std::uint32_t shift = shift_exact < 31u ? shift_exact : 31u;
        n = significand >> shift;
        const std::uint32_t rem = significand & ((1u << shift) - 1u);
        const std::uint32_t half = 1u << (shift - 1u);
        const std::uint32_t inexact = rem != 0u ? 1u : 0u;
        if constexpr (Mode == RoundingMode::NearestEven)
            away = (rem > half ? 1u : 0u) | ((rem == half ? 1u : 0u) & n & 1u);
        else if constexpr (Mode == RoundingMode::NearestAway)
            away = rem >= half ? 1u : 0u;
        else if constexpr (Mode == RoundingMode::TowardZero)
            away = 0u;
        else if constexpr (Mode == RoundingMode::Up)
            away = inexact & (sign ^ 1u);
        else if constexpr (Mode == RoundingMode::Down)
            away = inexact & sign;
        else  // Odd: keep the bits, mark inexact results in the last place
            n |= inexact;
    }
    // Codes are monotone in value, so a mantissa carry moves into the exponent by itself.
    return ((q - k.min_field) << k.mantissa_bits) + n + away;
}

// The code of a rounded magnitude (from rounded_magnitude): overflow handled per
// saturation and direction, Inf and NaN inputs mapped, the sign put back.
template <RoundingMode Mode>
constexpr std::uint32_t code_of_magnitude(std::uint32_t magnitude, std::uint32_t u, const Float32KernelConstants& k) {
    const std::uint32_t sign = u >> 31;
    const std::uint32_t a = u & 0x7FFFFFFFu;
    // Overflow toward zero stops at max (IEEE 754 7.4); see convert.hpp.
    std::uint32_t to_max = k.saturate_finite ? 1u : 0u;
    if constexpr (Mode == RoundingMode::TowardZero) to_max = 1u;
    if constexpr (Mode == RoundingMode::Up) to_max |= sign;
    if constexpr (Mode == RoundingMode::Down) to_max |= sign ^ 1u;
    const std::uint32_t overflowed = to_max ? k.max_magnitude : k.overflow_magnitude;
    const std::uint32_t infinite = k.saturate_finite ? k.max_magnitude : k.overflow_magnitude;
    magnitude = magnitude > k.max_magnitude ? overflowed : magnitude;
    magnitude = a == 0x7F800000u ? infinite : magnitude;
    const std::uint32_t code = (sign << k.sign_shift) | magnitude;
    return a > 0x7F800000u ? k.nan_code : code;
}

// One element: float32 bits in, code out. `random` is read by stochastic rounding only.
template <RoundingMode Mode>
constexpr std::uint32_t encode_float32_bits(std::uint32_t u, const Float32KernelConstants& k, std::uint32_t random,
                                            int random_bits) {
    const std::uint32_t magnitude = rounded_magnitude<Mode>(u & 0x7FFFFFFFu, u >> 31, k, random, random_bits);
    return code_of_magnitude<Mode>(magnitude, u, k);
}

}  // namespace fp8lab::emu::detail
