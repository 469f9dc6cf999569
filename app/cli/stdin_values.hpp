// SPDX-License-Identifier: Apache-2.0
// Reads one number per line from standard input, all of it, before anything is printed.
#pragma once

#include <string>
#include <vector>

namespace fp8lab::cli {

struct StdinValue {
    std::string text;  // as given, trimmed
    double value;
};

// Throws UsageError naming the first line that is empty or not a number (exit 2: the
// commands that use this print nothing half-way).
std::vector<StdinValue> read_stdin_values(const char* command);

}  // namespace fp8lab::cli
