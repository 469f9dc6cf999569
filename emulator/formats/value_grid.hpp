// SPDX-License-Identifier: Apache-2.0
// Questions about a format's grid of values: all of them, neighbours, ulp, error of x.
#pragma once

#include <cstdint>
#include <vector>

#include "emulator/formats/format.hpp"
#include "emulator/formats/rounding.hpp"

namespace fp8lab::emu {

struct RepresentableValue {
    std::uint32_t code;
    double value;
};

// Every finite value in increasing order, one entry per value (+0 only; -0 is the same
// value). Formats of at most 16 bits; FP32 has too many to list and throws.
std::vector<RepresentableValue> representable_values(const Format& format);

// The representable values around x: below <= x <= above. Where x is past the largest
// finite value, `above` is +-Inf if the format has it, else NaN (nothing is above).
struct Neighbours {
    double below;
    double above;
    std::uint32_t below_code;
    std::uint32_t above_code;
};
Neighbours neighbours(const Format& format, double x);

// Spacing of the grid at x: 2^(max(floor(log2|x|), emin) - mantissa bits), the distance
// from |x| to the next value away from zero. For E8M0 the gap to the next power of two.
double ulp(const Format& format, double x);

struct RoundingError {
    double result;
    double abs_error;  // |result - x|
    double rel_error;  // |result - x| / |x|, 0 for x = 0
};
RoundingError rounding_error(const Format& format, double x, const ConvertOptions& options = {});

}  // namespace fp8lab::emu
