// SPDX-License-Identifier: Apache-2.0
// Fuzzes the settings file reader: any bytes give settings or a problem naming the line.
#include <cstddef>
#include <cstdint>
#include <sstream>
#include <string>

#include "app/gui/settings.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    std::istringstream in(std::string(reinterpret_cast<const char*>(data), size));
    fp8lab::gui::Settings settings;
    const std::string problem = fp8lab::gui::parse_settings(in, settings);
    if (!problem.empty() && problem.rfind("line ", 0) != 0 && problem.find("version") == std::string::npos)
        __builtin_trap();  // a problem says where
    return 0;
}
