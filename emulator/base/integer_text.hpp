// SPDX-License-Identifier: Apache-2.0
// Integers as people type them: decimal (leading zeros are still decimal: 010 is ten, not
// C's octal eight) or 0x-hex; the whole text is the number, nothing wraps or saturates.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

namespace fp8lab::emu {

std::optional<std::uint64_t> parse_unsigned(std::string_view text);  // no sign
std::optional<std::int64_t> parse_signed(std::string_view text);     // an optional '-' before decimal

}  // namespace fp8lab::emu
