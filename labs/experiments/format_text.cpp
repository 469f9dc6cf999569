// SPDX-License-Identifier: Apache-2.0
// Field extraction and value formulas for the bit-level tables of the labs.
#include "labs/experiments/format_text.hpp"

#include <cmath>

#include "emulator/formats/convert.hpp"
#include "labs/framework/table.hpp"

namespace fp8lab::labs {
namespace {

std::string bits(std::uint32_t value, int width) {
    std::string s;
    for (int i = width - 1; i >= 0; --i) s += (value >> i) & 1 ? '1' : '0';
    return s;
}

}  // namespace

CodeFields code_fields(const emu::Format& f, std::uint32_t code) {
    CodeFields c;
    c.mantissa = code & ((1u << f.mantissa_bits) - 1);
    c.exponent = (code >> f.mantissa_bits) & ((1u << f.exponent_bits) - 1);
    c.sign = f.has_sign ? (code >> (f.total_bits - 1)) & 1 : 0;
    c.sign_bits = f.has_sign ? bits(c.sign, 1) : "";
    c.exponent_bits = bits(c.exponent, f.exponent_bits);
    c.mantissa_bits = bits(c.mantissa, f.mantissa_bits);
    return c;
}

std::string value_formula(const emu::Format& f, std::uint32_t code) {
    const double value = emu::decode(f, code);
    if (std::isnan(value)) return "NaN";
    if (std::isinf(value)) return value > 0 ? "+Inf" : "-Inf";
    const CodeFields c = code_fields(f, code);
    const bool subnormal = c.exponent == 0 && f.has_subnormals;
    const double fraction = std::ldexp(double(c.mantissa), -f.mantissa_bits);
    const int field = subnormal ? 1 : int(c.exponent);
    std::string s = f.has_sign ? "(-1)^" + std::to_string(c.sign) + " x " : "";
    s += "2^(" + std::to_string(field) + "-" + std::to_string(f.bias) + ") x ";
    s += number_text((subnormal ? 0.0 : 1.0) + fraction);
    s += " = " + number_text(value);
    return subnormal ? "subnormal: " + s : s;
}

std::vector<double> log_spaced(double lo, double hi, int n) {
    std::vector<double> x(static_cast<std::size_t>(n));
    const double a = std::log2(lo), b = std::log2(hi);
    const double shift = 0.5 * (std::sqrt(5.0) - 1.0);  // golden-ratio offset
    for (int i = 0; i < n; ++i) x[std::size_t(i)] = std::exp2(a + (b - a) * (i + shift) / n);
    return x;
}

}  // namespace fp8lab::labs
