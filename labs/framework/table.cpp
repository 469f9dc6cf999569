// SPDX-License-Identifier: Apache-2.0
// Cell text: exact short numbers exact (448, 1.0625, 0.001953125), float64 noise dropped
// (464), measured ones with 6 significant digits.
#include "labs/framework/table.hpp"

#include <charconv>
#include <cmath>
#include <cstdio>

namespace fp8lab::labs {

std::string shortest_text(double v) {
    char buf[64];
    const auto r = std::to_chars(buf, buf + sizeof buf, v);
    return std::string(buf, r.ptr);
}

namespace {

// Significant digits of a number's text: "0.001953125" has 7, "1.5e-05" 2.
int significant_digits(const std::string& text) {
    int digits = 0;
    bool leading = true;
    for (char c : text) {
        if (c == 'e') break;
        if (c < '0' || c > '9') continue;
        if (leading && c == '0') continue;
        leading = false;
        ++digits;
    }
    return digits;
}

}  // namespace

std::string number_text(double v) {
    if (std::isnan(v)) return "NaN";
    if (std::isinf(v)) return v > 0 ? "Inf" : "-Inf";
    // Exact short values keep every digit (448, 1.0625, 0.001953125); float64 noise goes
    // when float32 reads the value back in 6 digits (464.00000000000006 is 464, 0.1 + 0.2
    // is 0.3); anything else is a measurement: 6 significant digits (0.109313).
    const std::string exact = shortest_text(v);
    if (significant_digits(exact) <= 7) return exact;
    const float f = static_cast<float>(v);
    if (std::isfinite(f) && f != 0.0f) {
        char buf[64];
        const auto r = std::to_chars(buf, buf + sizeof buf, f);
        const std::string single(buf, r.ptr);
        if (significant_digits(single) <= 6) return single;
    }
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.6g", v);
    return buf;
}

std::string cell_text(const Column& column, const Cell& cell) {
    if (const auto* s = std::get_if<std::string>(&cell)) return *s;
    if (const auto* i = std::get_if<std::int64_t>(&cell)) {
        if (column.type != ColumnType::Code) return std::to_string(*i);
        char buf[32];
        std::snprintf(buf, sizeof buf, "0x%02llx", static_cast<unsigned long long>(*i));
        return buf;
    }
    return number_text(std::get<double>(cell));
}

}  // namespace fp8lab::labs

namespace fp8lab {

template <>
std::span<const EnumName<labs::ColumnType>> enum_names<labs::ColumnType>() {
    static constexpr EnumName<labs::ColumnType> table[] = {{labs::ColumnType::Text, "text"},
                                                           {labs::ColumnType::Integer, "integer"},
                                                           {labs::ColumnType::Number, "number"},
                                                           {labs::ColumnType::Code, "code"}};
    return table;
}

}  // namespace fp8lab
