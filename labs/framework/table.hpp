// SPDX-License-Identifier: Apache-2.0
// Tables and metrics of a step's output: typed cells with units.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <variant>
#include <vector>

#include "emulator/base/enum_names.hpp"

namespace fp8lab::labs {

enum class ColumnType { Text, Integer, Number, Code };  // Code: an integer shown in hex

struct Column {
    std::string name;
    ColumnType type = ColumnType::Text;
    std::string unit = {};  // e.g. "ms", "%", empty when unitless
};

using Cell = std::variant<std::string, std::int64_t, double>;

struct Table {
    std::string id;  // file-name safe, unique within a step
    // Filled as a figure's is (figure.hpp), from the "table KEY" sentence.
    std::string title;
    std::vector<Column> columns;
    std::vector<std::vector<Cell>> rows;  // each row has one cell per column
    std::string title_key = {};
    std::map<std::string, std::string> title_values = {};
};

struct Metric {
    std::string name;
    double value = 0;
    std::string unit;
};

// How a cell reads in text (tables on the terminal, CSV, the GUI): exact short numbers
// whole (1.0625, 0.001953125), float64 noise dropped (464.00000000000006 is 464), anything
// else in 6 significant digits (0.109313); codes as 0x.. with the column's width.
std::string cell_text(const Column& column, const Cell& cell);
std::string number_text(double value);  // the same rule for a bare number
// The shortest decimal that reads back as exactly `value` (finite values): CSV, JSON, text.
std::string shortest_text(double value);

}  // namespace fp8lab::labs

// The names JSON and the tests give them (enum_name): "text", "integer", "number", "code".
namespace fp8lab {
template <>
std::span<const EnumName<labs::ColumnType>> enum_names<labs::ColumnType>();
}  // namespace fp8lab
