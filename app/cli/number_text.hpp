// Parsing numbers as the CLI accepts them and printing values as it reports them.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "emulator/format.hpp"

namespace fp8lab::cli {

enum class InputPrecision { Float32, Float64 };

// Decimal, C99 hex float (0x1.8p+3), inf, -inf, nan (any case). Rounds to the nearest
// value of the precision; the whole text must be a number (surrounding blanks allowed).
std::optional<double> parse_number(std::string_view text, InputPrecision precision);

// Unsigned integer in decimal or 0x-hex; the whole text must be the number.
std::optional<std::uint64_t> parse_code(std::string_view text);

std::string hex_float(double v);                                      // %a, with nan / inf / -inf for specials
std::string decimal_float(double v);                                  // %.17g, with nan / inf / -inf for specials
std::string hex_code(const emu::Format& format, std::uint32_t code);  // 0x7e, 0x7, 0x7fff

std::string_view trim(std::string_view s);

}  // namespace fp8lab::cli
