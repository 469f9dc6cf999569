// SPDX-License-Identifier: Apache-2.0
// Cell text: numbers at float32's precision, exact ones exact (448, 1.0625, 0.001953125).
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

std::string number_text(double v) {
    if (std::isnan(v)) return "NaN";
    if (std::isinf(v)) return v > 0 ? "Inf" : "-Inf";
    // At float32's precision, the precision every tensor value here has: exact grid values
    // keep every digit (1.0625, 0.001953125) and float64 noise goes (464.00000000000006 is
    // 464, 97.119140625 is 97.11914).
    const float f = static_cast<float>(v);
    if (std::isfinite(f) && (f != 0.0f || v == 0.0)) {
        char buf[64];
        const auto r = std::to_chars(buf, buf + sizeof buf, f);
        return std::string(buf, r.ptr);
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
