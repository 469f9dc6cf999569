// SPDX-License-Identifier: Apache-2.0
// Stating and checking the ranges of bounds.hpp.
#include "emulator/base/bounds.hpp"

#include <charconv>
#include <cmath>

namespace fp8lab::emu {
namespace {

std::string shortest(double v) {
    char buffer[32];
    const auto r = std::to_chars(buffer, buffer + sizeof buffer, v);
    return std::string(buffer, r.ptr);
}

}  // namespace

std::string describe(IntegerBounds b) { return std::to_string(b.min) + " to " + std::to_string(b.max); }

std::string describe(RealBounds b) {
    return (b.min_excluded ? "above " : "") + shortest(b.min) + " to " + shortest(b.max);
}

// Built by appending: GCC 12 at -O3 reports a false -Wrestrict overlap inside
// operator+(const char*, std::string&&) (its bug 105651).
std::string interval(IntegerBounds b) {
    std::string s(1, '[');
    ((s += std::to_string(b.min)) += ", ") += std::to_string(b.max);
    return s += ']';
}

std::string interval(RealBounds b) {
    std::string s(1, b.min_excluded ? '(' : '[');
    ((s += shortest(b.min)) += ", ") += shortest(b.max);
    return s += ']';
}

bool contains(IntegerBounds b, long long v) { return v >= b.min && v <= b.max; }

bool contains(RealBounds b, double v) {
    return std::isfinite(v) && (b.min_excluded ? v > b.min : v >= b.min) && v <= b.max;
}

}  // namespace fp8lab::emu
