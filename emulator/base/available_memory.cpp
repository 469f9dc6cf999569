// SPDX-License-Identifier: Apache-2.0
// MemAvailable from /proc/meminfo, and the sentence that refuses a run that would not fit.
#include "emulator/base/available_memory.hpp"

#include <cstdio>
#include <fstream>

namespace fp8lab::emu {
namespace {

std::string gib(std::uint64_t bytes) {
    char text[32];
    std::snprintf(text, sizeof text, "%.1f GiB", double(bytes) / double(1ull << 30));
    return text;
}

}  // namespace

std::uint64_t available_memory_bytes() {
    std::ifstream meminfo("/proc/meminfo");
    std::string key;
    std::uint64_t kib = 0;
    while (meminfo >> key >> kib) {
        if (key == "MemAvailable:") return kib << 10;
        meminfo.ignore(1 << 10, '\n');
    }
    return 0;
}

std::string memory_shortfall(std::uint64_t needed, std::string_view what) {
    const std::uint64_t available = available_memory_bytes();
    if (!available || needed <= available) return "";
    return std::string(what) + " need about " + gib(needed) + "; this machine has " + gib(available) + " available";
}

}  // namespace fp8lab::emu
