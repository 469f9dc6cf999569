// Whole-input parsing of stdin for the recipe commands.
#include "app/cli/stdin_values.hpp"

#include <iostream>

#include "app/cli/number_text.hpp"
#include "app/cli/usage_error.hpp"
#include "emulator/quoted_input.hpp"

namespace fp8lab::cli {

std::vector<StdinValue> read_stdin_values(const char* command) {
    std::vector<StdinValue> values;
    std::string line;
    std::size_t number = 0;
    while (std::getline(std::cin, line)) {
        ++number;
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
