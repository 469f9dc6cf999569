// SPDX-License-Identifier: Apache-2.0
// How every message quotes what a user typed or a file held: in single quotes, at most a
// short prefix (a 100 MB line is not echoed), control and non-ASCII bytes as \xNN, so a
// message is one readable line of valid UTF-8 whatever the input was.
#pragma once

#include <string>
#include <string_view>

namespace fp8lab::emu {

std::string quoted_input(std::string_view text, std::size_t max_bytes = 40);

}  // namespace fp8lab::emu
