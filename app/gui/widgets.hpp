// SPDX-License-Identifier: Apache-2.0
// Small widgets the views share (ImGui 1.86 has no SeparatorText).
#pragma once

#include <imgui.h>

namespace fp8lab::gui {

inline void section(const char* title) {
    ImGui::Spacing();
    ImGui::TextUnformatted(title);
    ImGui::Separator();
}

}  // namespace fp8lab::gui
