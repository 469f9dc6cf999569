// SPDX-License-Identifier: Apache-2.0
// Theme colours and ImGui style. The projector theme is black on white with thick borders:
// projectors wash out mid greys, so nothing in it relies on a subtle tint.
#include "app/gui/theme.hpp"

#include <imgui.h>

namespace fp8lab::gui {

ThemeColours apply_theme(Theme theme, float scale) {
    ImGuiStyle style;
    ThemeColours c{};
    // Field colours from the Okabe-Ito palette: sign vermillion, exponent blue, mantissa green,
    // the same in every theme.
    c.field_sign = IM_COL32(213, 94, 0, 255);
    c.field_exponent = IM_COL32(0, 114, 178, 255);
    c.field_mantissa = IM_COL32(0, 158, 115, 255);
    switch (theme) {
    case Theme::Dark:
        ImGui::StyleColorsDark(&style);
        c.link = IM_COL32(86, 180, 233, 255);
        c.code_background = IM_COL32(60, 60, 66, 255);
        c.done_mark = IM_COL32(86, 180, 233, 255);
        break;
    case Theme::Light:
    case Theme::Projector:
        ImGui::StyleColorsLight(&style);
        c.link = IM_COL32(0, 90, 160, 255);
        c.code_background = IM_COL32(235, 235, 238, 255);
        c.done_mark = IM_COL32(0, 114, 178, 255);
        break;
    }
    if (theme == Theme::Projector) {
        ImVec4* col = style.Colors;
        col[ImGuiCol_Text] = ImVec4(0, 0, 0, 1);
        // Children stay transparent over the white window: an opaque child background is one
        // more fill of most of the screen, which doubled the frame time under llvmpipe.
        col[ImGuiCol_WindowBg] = col[ImGuiCol_PopupBg] = ImVec4(1, 1, 1, 1);
        col[ImGuiCol_ChildBg] = ImVec4(0, 0, 0, 0);
        col[ImGuiCol_Border] = ImVec4(0, 0, 0, 0.8f);
        col[ImGuiCol_FrameBg] = ImVec4(0.92f, 0.92f, 0.92f, 1);
        col[ImGuiCol_Button] = ImVec4(0.80f, 0.88f, 0.96f, 1);
        col[ImGuiCol_Header] = ImVec4(0.75f, 0.85f, 0.95f, 1);
        col[ImGuiCol_TextDisabled] = ImVec4(0.3f, 0.3f, 0.3f, 1);
        style.FrameBorderSize = 1.5f;
        style.WindowBorderSize = 1.5f;
        c.code_background = IM_COL32(228, 228, 228, 255);
    }
    c.plot = plot::theme_colours(theme);
    style.WindowRounding = 0;
    style.FrameRounding = 3;
    style.ScaleAllSizes(scale);
    ImGui::GetStyle() = style;
    return c;
}

}  // namespace fp8lab::gui
