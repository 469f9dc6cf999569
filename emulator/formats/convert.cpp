// SPDX-License-Identifier: Apache-2.0
// The reference scalar encoder: exact integer rounding of a float64 significand.
#include "emulator/formats/convert.hpp"

#include <algorithm>
#include <bit>
#include <cmath>
#include <limits>

#include "emulator/base/stochastic_bits.hpp"

namespace fp8lab::emu {
namespace {

using u128 = unsigned __int128;

// True when the magnitude must move one step away from zero. `truncated` is the code
// with the discarded bits dropped: "even" and "odd" are about its last bit, which for
// E8M0 (no mantissa) is the exponent's, not the significand's. `rem` holds the discarded
// bits, `shift` their count (>= 1).
bool rounds_away(RoundingMode mode, bool negative, std::int64_t truncated, u128 rem, int shift,
                 const ConvertOptions& options, std::uint64_t index) {
    const u128 half = u128(1) << (shift - 1);
    const bool odd = (truncated & 1) != 0;
    switch (mode) {
    case RoundingMode::NearestEven:
        return rem > half || (rem == half && odd);
    case RoundingMode::NearestAway:
        return rem >= half;
    case RoundingMode::TowardZero:
        return false;
    case RoundingMode::Up:
        return rem != 0 && !negative;
    case RoundingMode::Down:
        return rem != 0 && negative;
    case RoundingMode::Odd:
        return rem != 0 && !odd;  // an inexact result lands on odd
    case RoundingMode::Stochastic: {
        // Away iff floor(f * 2^n) + r >= 2^n, f = rem / 2^shift (docs/numerics.md §3).
        const int bits = options.random_bits;
        const u128 scaled = bits >= shift ? rem << (bits - shift) : rem >> (shift - bits);
        const u128 r = stochastic_bits(options.seed, index, bits);
        return scaled + r >= (u128(1) << bits);
    }
    }
    return false;
}

// Overflow past max goes to max for the directions that move toward zero (IEEE 754 7.4).
bool overflow_goes_to_max(RoundingMode mode, bool negative) {
    return mode == RoundingMode::TowardZero || (mode == RoundingMode::Up && negative) ||
           (mode == RoundingMode::Down && !negative);
}

// Magnitude code of an overflow (or of an infinite input, with to_max false).
std::uint32_t overflow_magnitude(const Format& f, Saturation saturation, bool to_max) {
    if (saturation == Saturation::Finite || to_max) return f.max_magnitude_code;
    if (f.has_inf) return f.inf_code;
    if (f.has_nan) return f.nan_code;
    return f.max_magnitude_code;
}

// The code of a float64 NaN: CUDA's float64 conversions keep the NaN's sign in the 8-bit
// formats, and E5M2 keeps the payload's top bit below the quiet bit (0x7E or 0x7F: a
// signalling NaN comes out quiet); other formats give their one NaN (or +max).
std::uint32_t float64_nan_code(const Format& f, std::uint64_t bits) {
    if (f.total_bits != 8 || f.encoding == Encoding::ScaleE8M0 || !f.has_nan) return f.nan_code;
    const std::uint32_t sign = (bits >> 63) ? f.sign_mask() : 0u;
    if (f.encoding == Encoding::Ieee) return sign | 0x7Eu | std::uint32_t((bits >> 50) & 1u);
    return sign | f.nan_code;
}

// Both overloads: a float32 input arrives widened exactly, with its NaN rule.
enum class NanRule { Float32, Float64 };

std::uint32_t encode_value(const Format& f, double x, const ConvertOptions& options, std::uint64_t index, NanRule nan) {
    const std::uint64_t bits = std::bit_cast<std::uint64_t>(x);
    const bool is_scale = f.encoding == Encoding::ScaleE8M0;
    const bool negative = !is_scale && (bits >> 63);  // E8M0 encodes |x|
    const std::uint32_t sign = negative ? f.sign_mask() : 0u;
    const std::uint64_t magnitude = bits & 0x7FFFFFFFFFFFFFFFull;

    if (magnitude > 0x7FF0000000000000ull) return nan == NanRule::Float64 ? float64_nan_code(f, bits) : f.nan_code;
    if (magnitude == 0x7FF0000000000000ull) return sign | overflow_magnitude(f, options.saturation, false);
    if (magnitude == 0) return f.has_negative_zero ? sign : 0u;  // E8M0 code 0 is its floor, 2^-127

    // x = significand * 2^exponent2 exactly.
    const int field = static_cast<int>(magnitude >> 52);
    const std::uint64_t significand = (magnitude & 0xFFFFFFFFFFFFFull) | (field ? 1ull << 52 : 0ull);
    const int exponent2 = (field ? field : 1) - 1075;
    const int floor_log2 = exponent2 + static_cast<int>(std::bit_width(significand)) - 1;

    // Quantum of the target grid at x: subnormals share the smallest normal exponent.
    const int m = f.mantissa_bits;
    const int q = std::max(floor_log2, f.min_exponent);
    const int shift = std::min(q - m - exponent2, 120);  // >= 29: doubles have more bits
    const u128 wide = significand;
    const auto n = static_cast<std::int64_t>(shift >= 64 ? 0 : wide >> shift);
    const u128 rem = wide & ((u128(1) << shift) - 1);

    // Codes are monotone in value: one binade is 2^m codes, and a carry out of the
    // mantissa moves into the exponent. E8M0 has no code for zero, hence the -1.
    const std::int64_t truncated = (std::int64_t(q - f.min_exponent) << m) + n - (is_scale ? 1 : 0);
    std::int64_t code =
        truncated + (rounds_away(options.rounding, negative, truncated, rem, shift, options, index) ? 1 : 0);
    if (is_scale) code = std::max<std::int64_t>(code, 0);  // below 2^-127: clipped to it
    if (code > std::int64_t(f.max_magnitude_code))
        return sign | overflow_magnitude(f, options.saturation, overflow_goes_to_max(options.rounding, negative));
    if (code == 0 && !f.has_negative_zero) return 0u;  // FNUZ: -0's code is NaN, so a negative rounds to +0
    return sign | static_cast<std::uint32_t>(code);
}

}  // namespace

std::uint32_t encode(const Format& format, double x, const ConvertOptions& options, std::uint64_t index) {
    return encode_value(format, x, options, index, NanRule::Float64);
}

std::uint32_t encode(const Format& format, float x, const ConvertOptions& options, std::uint64_t index) {
    return encode_value(format, static_cast<double>(x), options, index, NanRule::Float32);  // exact widening
}

double decode(const Format& f, std::uint32_t code) {
    code = static_cast<std::uint32_t>(code & (f.code_count() - 1));
    if (f.is_nan_code(code)) return std::numeric_limits<double>::quiet_NaN();
    const bool negative = (code & f.sign_mask()) != 0;
    const std::uint32_t magnitude = code & ~f.sign_mask();
    double value;
    if (f.is_inf_code(code)) {
        value = std::numeric_limits<double>::infinity();
    } else if (f.encoding == Encoding::ScaleE8M0) {
        value = std::ldexp(1.0, static_cast<int>(magnitude) - f.bias);
    } else {
        const int field = static_cast<int>(magnitude >> f.mantissa_bits);
        const std::uint32_t mantissa = magnitude & ((1u << f.mantissa_bits) - 1);
        value = field == 0 ? std::ldexp(double(mantissa), f.min_exponent - f.mantissa_bits)
                           : std::ldexp(double(mantissa | (1u << f.mantissa_bits)), field - f.bias - f.mantissa_bits);
    }
    return negative ? -value : value;
}

double round_to_format(const Format& format, double x, const ConvertOptions& options, std::uint64_t index) {
    return decode(format, encode(format, x, options, index));
}

}  // namespace fp8lab::emu
