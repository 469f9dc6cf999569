// SPDX-License-Identifier: Apache-2.0
// How labs spell out a code: its fields in binary and the formula that gives its value.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "emulator/formats/format.hpp"

namespace fp8lab::labs {

struct CodeFields {
    std::uint32_t sign = 0, exponent = 0, mantissa = 0;
    std::string sign_bits, exponent_bits, mantissa_bits;  // "0", "1111", "110"
};
CodeFields code_fields(const emu::Format& format, std::uint32_t code);

// "(-1)^0 x 2^(15-7) x 1.75 = 448", "subnormal: 2^(1-7) x 0.25 = 0.00390625", "NaN".
std::string value_formula(const emu::Format& format, std::uint32_t code);

// n points spread evenly in log2 between lo and hi (both > 0), shifted by an irrational
// fraction of a step so that few of them land exactly on a representable value.
std::vector<double> log_spaced(double lo, double hi, int n);

}  // namespace fp8lab::labs
