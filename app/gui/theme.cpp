// Theme colours and ImGui style. The projector theme is black on white with thick borders:
// projectors wash out mid greys, so nothing in it relies on a subtle tint.
#include "app/gui/theme.hpp"

#include <imgui.h>

namespace fp8lab::gui {

std::string_view theme_name(Theme t) {
    switch (t) {
    case Theme::Dark: return "dark";
    case Theme::Light: return "light";
    case Theme::Projector: return "projector";
    }
    return "light";
}

bool parse_theme(std::string_view name, Theme& t) {
    for (Theme c : {Theme::Dark, Theme::Light, Theme::Projector})
        if (theme_name(c) == name) {
            t = c;
            return true;
        }
    return false;
}

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
        c.plot = {IM_COL32(30, 30, 34, 255), IM_COL32(150, 150, 150, 255), IM_COL32(62, 62, 68, 255),
                  IM_COL32(235, 235, 235, 255), IM_COL32(40, 40, 46, 230), true};
        c.link = IM_COL32(86, 180, 233, 255);
        c.code_background = IM_COL32(60, 60, 66, 255);
        c.done_mark = IM_COL32(86, 180, 233, 255);
        break;
    case Theme::Light:
    case Theme::Projector:
        ImGui::StyleColorsLight(&style);
        c.plot = {IM_COL32(255, 255, 255, 255), IM_COL32(70, 70, 70, 255), IM_COL32(225, 225, 225, 255),
                  IM_COL32(20, 20, 20, 255), IM_COL32(255, 255, 255, 230), false};
        c.link = IM_COL32(0, 90, 160, 255);
        c.code_background = IM_COL32(235, 235, 238, 255);
        c.done_mark = IM_COL32(0, 114, 178, 255);
        break;
    }
    if (theme == Theme::Projector) {
        ImVec4* col = style.Colors;
        col[ImGuiCol_Text] = ImVec4(0, 0, 0, 1);
        col[ImGuiCol_WindowBg] = col[ImGuiCol_ChildBg] = col[ImGuiCol_PopupBg] = ImVec4(1, 1, 1, 1);
        col[ImGuiCol_Border] = ImVec4(0, 0, 0, 0.8f);
        col[ImGuiCol_FrameBg] = ImVec4(0.92f, 0.92f, 0.92f, 1);
        col[ImGuiCol_Button] = ImVec4(0.80f, 0.88f, 0.96f, 1);
        col[ImGuiCol_Header] = ImVec4(0.75f, 0.85f, 0.95f, 1);
        col[ImGuiCol_TextDisabled] = ImVec4(0.3f, 0.3f, 0.3f, 1);
        style.FrameBorderSize = 1.5f;
        style.WindowBorderSize = 1.5f;
        c.plot.text = IM_COL32(0, 0, 0, 255);
        c.plot.frame = IM_COL32(0, 0, 0, 255);
        c.plot.grid = IM_COL32(200, 200, 200, 255);
        c.code_background = IM_COL32(228, 228, 228, 255);
    }
    style.WindowRounding = 0;
    style.FrameRounding = 3;
    style.ScaleAllSizes(scale);
    ImGui::GetStyle() = style;
    set_plot_colours(c.plot);
    return c;
}

}  // namespace fp8lab::gui
