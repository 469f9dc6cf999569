// SPDX-License-Identifier: Apache-2.0
// What the machine can give a run without swapping, so that a model too large is refused
// before it is allocated (the CLI and the Python module ask the same question).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace fp8lab::emu {

// MemAvailable from /proc/meminfo in bytes; 0 when it cannot be read (then nothing is refused).
std::uint64_t available_memory_bytes();

// "" when `needed` bytes fit what is available (or that is unknown), else a sentence saying
// how much is needed and how much is there: "WHAT need about 9.3 GiB; this machine has 2.1
// GiB available".
std::string memory_shortfall(std::uint64_t needed, std::string_view what);

}  // namespace fp8lab::emu
