// SPDX-License-Identifier: Apache-2.0
// Whole-input parsing of stdin for the recipe commands.
#include "app/cli/stdin_values.hpp"

#include <iostream>

#include "app/options/number_text.hpp"
#include "app/options/usage_error.hpp"
#include "emulator/base/quoted_input.hpp"

namespace fp8lab::cli {
using options::InputPrecision;
using options::parse_number;
using options::trim;
using options::UsageError;

namespace {

// The longest line read: a number is far shorter, and a longer line (a binary file, /dev/zero)
// is refused at once instead of being gathered until memory runs out.
constexpr std::size_t kMaxLine = 4096;

}  // namespace

std::vector<StdinValue> read_stdin_values(const char* command) {
    std::vector<StdinValue> values;
    char buffer[kMaxLine + 1];
    std::size_t number = 0;
    while (std::cin.getline(buffer, sizeof buffer) || (std::cin.gcount() > 0 && !std::cin.bad())) {
        ++number;
        if (std::cin.fail() && !std::cin.eof())  // the buffer filled before the line ended
            throw UsageError(std::string(command) + ": standard input line " + std::to_string(number) +
                             " is longer than " + std::to_string(kMaxLine) +
                             " bytes: one number per line is expected; nothing was printed");
        // gcount counts the newline it took, except on a last line that has none; a NUL byte
        // stays part of the line (and makes it no number).
        const std::size_t taken = std::size_t(std::cin.gcount());
        const std::string line(buffer, std::cin.eof() ? taken : taken - 1);
        const std::string_view token = trim(line);
        const auto v = parse_number(token, InputPrecision::Float32);
        if (!v)
            throw UsageError(
                std::string(command) + ": standard input line " + std::to_string(number) +
                (token.empty() ? ": empty line" : ": " + emu::quoted_input(std::string(token)) + " is not a number") +
                "; nothing was printed");
        values.push_back({std::string(token), *v});
    }
    if (values.empty()) throw UsageError(std::string(command) + ": no values on standard input");
    return values;
}

}  // namespace fp8lab::cli
