// SPDX-License-Identifier: Apache-2.0
// Strict integer parsing (integer_text.hpp).
#include "emulator/base/integer_text.hpp"

namespace fp8lab::emu {

std::optional<std::uint64_t> parse_unsigned(std::string_view text) {
    const bool hex = text.size() > 2 && text[0] == '0' && (text[1] == 'x' || text[1] == 'X');
    if (hex) text.remove_prefix(2);
    if (text.empty()) return std::nullopt;
    const std::uint64_t base = hex ? 16 : 10;
    std::uint64_t value = 0;
    for (char c : text) {
        std::uint64_t digit;
        if (c >= '0' && c <= '9')
            digit = std::uint64_t(c - '0');
        else if (hex && c >= 'a' && c <= 'f')
            digit = std::uint64_t(c - 'a' + 10);
        else if (hex && c >= 'A' && c <= 'F')
            digit = std::uint64_t(c - 'A' + 10);
        else
            return std::nullopt;
        if (value > (UINT64_MAX - digit) / base) return std::nullopt;  // would wrap
        value = value * base + digit;
    }
    return value;
}

std::optional<std::int64_t> parse_signed(std::string_view text) {
    const bool negative = !text.empty() && text[0] == '-';
    if (negative) text.remove_prefix(1);
    if (negative && text.size() > 1 && (text[1] == 'x' || text[1] == 'X')) return std::nullopt;
    const std::optional<std::uint64_t> magnitude = parse_unsigned(text);
    if (!magnitude) return std::nullopt;
    if (negative) {
        if (*magnitude > std::uint64_t(INT64_MAX) + 1) return std::nullopt;
        return std::int64_t(0 - *magnitude);
    }
    if (*magnitude > std::uint64_t(INT64_MAX)) return std::nullopt;
    return std::int64_t(*magnitude);
}

}  // namespace fp8lab::emu
