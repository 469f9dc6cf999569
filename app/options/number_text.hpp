// SPDX-License-Identifier: Apache-2.0
// Parsing numbers as the CLI accepts them and printing values as it reports them.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "emulator/formats/format.hpp"

namespace fp8lab::options {

enum class InputPrecision { Float32, Float64 };

// Decimal, C99 hex float (0x1.8p+3), inf, -inf, nan (any case). Rounds to the nearest
// value of the precision; the whole text must be a number (surrounding blanks allowed).
std::optional<double> parse_number(std::string_view text, InputPrecision precision);

// The same text as a double made for one more rounding: the value itself when a double
// holds it exactly, else whichever of the two doubles around it has an odd last bit
// ("round to odd"). Rounding that double to any format of at most 51 significant bits, in
// any mode (stochastic too), gives what rounding the exact text would: a decimal is rounded
// once, never first to the nearest double (1.9999999999999999999 toward zero in E4M3 is
// 1.875, not 2). Text past the double range gives the largest double or the least
// subnormal, which round as the exact value does.
std::optional<double> parse_number_round_to_odd(std::string_view text);

// Unsigned integer in decimal or 0x-hex; the whole text must be the number.
std::optional<std::uint64_t> parse_code(std::string_view text);

std::string hex_float(double v);                                      // %a, with nan / inf / -inf for specials
std::string decimal_float(double v);                                  // %.17g, with nan / inf / -inf for specials
std::string hex_code(const emu::Format& format, std::uint32_t code);  // 0x7e, 0x7, 0x7fff

std::string_view trim(std::string_view s);

}  // namespace fp8lab::options
