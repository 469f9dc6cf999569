// SPDX-License-Identifier: Apache-2.0
// What the bit inspector shows, computed by the emulator: a code's fields, value, formula,
// neighbours and gaps, and a number's encoding in every format and rounding mode.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "emulator/formats/format.hpp"
#include "emulator/formats/rounding.hpp"

namespace fp8lab::labs {

enum class ValueClass { Zero, Subnormal, Normal, MaxFinite, Infinity, NaN };
std::string value_class_name(ValueClass c);  // "zero", "subnormal", ...

struct NeighbourValue {
    bool exists = false;  // false past either end of the grid
    std::uint32_t code = 0;
    double value = 0;
    double gap = 0;  // |value - the inspected value|
};

struct CodeInspection {
    std::uint32_t code = 0;
    int total_bits = 0;
    std::uint32_t sign = 0, exponent = 0, mantissa = 0;
    std::string sign_bits, exponent_bits, mantissa_bits;
    double value = 0;
    ValueClass value_class = ValueClass::Normal;
    std::string formula;          // "(-1)^0 x 2^(15-7) x 1.75 = 448"
    std::string explanation;      // what this kind of code means in this format
    NeighbourValue below, above;  // the adjacent values on the number line (finite codes)
};

// Throws std::invalid_argument when the code does not fit the format.
CodeInspection inspect_code(const emu::Format& format, std::uint32_t code);

// The code with one bit flipped (bit 0 is the lowest mantissa bit).
std::uint32_t flip_bit(const emu::Format& format, std::uint32_t code, int bit);

struct ModeEncoding {
    emu::RoundingMode mode;
    std::uint32_t code = 0;
    double value = 0;
    double abs_error = 0, rel_error = 0;  // NaN when the result is not finite
};

struct FormatEncoding {
    const emu::Format* format = nullptr;
    std::vector<ModeEncoding> modes;  // every deterministic rounding mode
    // Stochastic rounding: the probability of rounding to the value above x (0 or 1 when
    // x is representable or outside the finite range), as the exact fraction of the gap.
    double stochastic_up_probability = 0;
};

// x converted to every format (the E8M0 scale format encodes |x|) in every deterministic
// rounding mode, with the given saturation.
std::vector<FormatEncoding> encode_in_every_format(double x, emu::Saturation saturation);

}  // namespace fp8lab::labs
