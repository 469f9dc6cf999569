// SPDX-License-Identifier: Apache-2.0
// Number parsing (strtod/strtof, correctly rounded) and C99 formatting for the CLI.
#include "app/options/number_text.hpp"

#include <cfenv>

#include <bit>

#include "emulator/base/integer_text.hpp"

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace fp8lab::options {

std::string_view trim(std::string_view s) {
    const char* blanks = " \t\r\n\v\f";
    const auto first = s.find_first_not_of(blanks);
    if (first == std::string_view::npos) return {};
    const auto last = s.find_last_not_of(blanks);
    return s.substr(first, last - first + 1);
}

namespace {

// The trimmed text as a C string for strtod, which needs one; false when it is empty or
// longer than any number (then it is none).
struct NumberText {
    char text[1024];
    std::size_t size = 0;
    bool read(std::string_view s) {
        s = trim(s);
        if (s.empty() || s.size() > 1000) return false;
        std::memcpy(text, s.data(), s.size());
        text[s.size()] = '\0';
        size = s.size();
        return true;
    }
    bool whole(const char* end) const { return end == text + size; }
};

}  // namespace

std::optional<double> parse_number(std::string_view s, InputPrecision precision) {
    NumberText t;
    if (!t.read(s)) return std::nullopt;
    char* end = nullptr;
    // The program never calls setlocale, so the decimal point is always '.'.
    const double value = precision == InputPrecision::Float32 ? static_cast<double>(std::strtof(t.text, &end))
                                                              : std::strtod(t.text, &end);
    if (!t.whole(end)) return std::nullopt;
    return value;  // out-of-range text rounds to Inf or zero, as IEEE nearest rounding does
}

std::optional<double> parse_number_round_to_odd(std::string_view text) {
#ifdef __clang__
#pragma STDC FENV_ACCESS ON
#endif
    NumberText t;
    if (!t.read(text)) return std::nullopt;
    // glibc's strtod rounds correctly in the current rounding mode: the doubles below and
    // above the text, equal when it is one.
    char* end = nullptr;
    const int mode = std::fegetround();
    std::fesetround(FE_DOWNWARD);
    const double below = std::strtod(t.text, &end);
    std::fesetround(FE_UPWARD);
    const double above = std::strtod(t.text, nullptr);
    std::fesetround(mode);
    if (!t.whole(end)) return std::nullopt;
    if (std::isnan(below) || below == above) return below;
    return (std::bit_cast<std::uint64_t>(below) & 1) ? below : above;  // adjacent: one of them is odd
}

std::optional<std::uint64_t> parse_code(std::string_view text) { return emu::parse_unsigned(trim(text)); }

namespace {

std::string special_name(double v) {
    if (std::isnan(v)) return "nan";
    return v < 0 ? "-inf" : "inf";
}

}  // namespace

std::string hex_float(double v) {
    if (!std::isfinite(v)) return special_name(v);
    char buffer[64];
    std::snprintf(buffer, sizeof buffer, "%a", v);
    return buffer;
}

std::string decimal_float(double v) {
    if (!std::isfinite(v)) return special_name(v);
    char buffer[64];
    std::snprintf(buffer, sizeof buffer, "%.17g", v);
    return buffer;
}

std::string hex_code(const emu::Format& format, std::uint32_t code) {
    char buffer[16];
    std::snprintf(buffer, sizeof buffer, "0x%0*x", (format.total_bits + 3) / 4, code);
    return buffer;
}

}  // namespace fp8lab::options
