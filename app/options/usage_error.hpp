// SPDX-License-Identifier: Apache-2.0
// An error in how the program was called: main() prints it and exits with status 2.
#pragma once

#include <stdexcept>

namespace fp8lab::options {

struct UsageError : std::runtime_error {
    using std::runtime_error::runtime_error;
};

}  // namespace fp8lab::options
