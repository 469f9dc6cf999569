// SPDX-License-Identifier: Apache-2.0
// The bit inspector's state: the format, the code being edited and the number typed.
#pragma once

#include <cstdint>
#include <string>

namespace fp8lab::gui {

struct InspectorState {
    int format = 0;  // index into emu::all_formats()
    std::uint32_t code = 0x7E;
    std::string number = "0.3";
    bool saturate = true;
};

}  // namespace fp8lab::gui
