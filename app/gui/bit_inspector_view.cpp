// SPDX-License-Identifier: Apache-2.0
// The bit inspector: a code as clickable bits coloured by field, its value and formula,
// its neighbours and the gaps to them, and a typed number in every format and mode.
#include <imgui.h>
#include <imgui_stdlib.h>

#include <cmath>
#include <cstdio>

#include "app/gui/app_state.hpp"
#include "app/gui/widgets.hpp"
#include "emulator/formats/rounding.hpp"
#include "labs/experiments/bit_inspection.hpp"
#include "labs/framework/exercise.hpp"
#include "labs/framework/table.hpp"

namespace fp8lab::gui {
namespace {

std::string hex(std::uint32_t code, int bits) {
    char buf[16];
    std::snprintf(buf, sizeof buf, "0x%0*X", (bits + 3) / 4, code);
    return buf;
}

ImVec4 to_vec4(ImU32 c) { return ImGui::ColorConvertU32ToFloat4(c); }

void draw_bits(InspectorState& inspector, const Looks& looks, const emu::Format& f, const labs::CodeInspection& c) {
    const float fs = ImGui::GetFontSize();
    const int bits = f.total_bits;
    const float size = std::min(fs * 2.2f, (ImGui::GetContentRegionAvail().x - fs) / float(bits) - 4);
    ImGui::PushFont(looks.fonts.mono);
    for (int i = bits - 1; i >= 0; --i) {
        const bool sign = f.has_sign && i == bits - 1;
        const bool exponent = !sign && i >= f.mantissa_bits;
        const ImU32 colour = sign       ? looks.colours.field_sign
                             : exponent ? looks.colours.field_exponent
                                        : looks.colours.field_mantissa;
        const bool set = (c.code >> i) & 1;
        ImVec4 fill = to_vec4(colour);
        if (!set) fill.w = 0.25f;
        ImGui::PushStyleColor(ImGuiCol_Button, fill);
        ImGui::PushStyleColor(ImGuiCol_Text, set ? ImVec4(1, 1, 1, 1) : ImGui::GetStyleColorVec4(ImGuiCol_Text));
        ImGui::PushID(i);
        if (ImGui::Button(set ? "1" : "0", ImVec2(size, size))) inspector.code = labs::flip_bit(f, c.code, i);
        if (ImGui::IsItemHovered())
            ImGui::SetTooltip("bit %d: %s", i, sign ? "sign" : exponent ? "exponent" : "mantissa");
        ImGui::PopID();
        ImGui::PopStyleColor(2);
        if (i > 0) ImGui::SameLine(0, (i == f.mantissa_bits || (sign && f.exponent_bits > 0)) ? fs * 0.6f : 2.0f);
    }
    ImGui::PopFont();
    ImGui::TextColored(to_vec4(looks.colours.field_sign), "sign %s",
                       c.sign_bits.empty() ? "(none)" : c.sign_bits.c_str());
    ImGui::SameLine();
    ImGui::TextColored(to_vec4(looks.colours.field_exponent), "  exponent %s = %u", c.exponent_bits.c_str(),
                       c.exponent);
    ImGui::SameLine();
    ImGui::TextColored(to_vec4(looks.colours.field_mantissa), "  mantissa %s = %u", c.mantissa_bits.c_str(),
                       c.mantissa);
}

void draw_neighbour(InspectorState& inspector, const char* label, const labs::NeighbourValue& n, int bits) {
    if (!n.exists) {
        ImGui::Text("%s: none", label);
        return;
    }
    ImGui::Text("%s: %s (%s), gap %s", label, labs::number_text(n.value).c_str(), hex(n.code, bits).c_str(),
                std::isinf(n.gap) ? "infinite" : labs::number_text(n.gap).c_str());
    ImGui::SameLine();
    ImGui::PushID(label);
    if (ImGui::SmallButton("go")) inspector.code = n.code;
    ImGui::PopID();
}

void draw_encodings(InspectorState& inspector) {
    InspectorState& s = inspector;
    section("A number in every format");
    ImGui::SetNextItemWidth(ImGui::GetFontSize() * 12);
    ImGui::InputText("number", &s.number);
    ImGui::SameLine();
    ImGui::Checkbox("saturate", &s.saturate);
    double x = 0;
    if (!labs::parse_answer_number(s.number, x)) {
        ImGui::TextDisabled("Type a number: 0.3, 1e-5, 0x1.8p+3 or 2^-9.");
        return;
    }
    const auto rows = labs::encode_in_every_format(x, s.saturate ? emu::Saturation::Finite : emu::Saturation::None);
    if (rows.empty()) return;
    const int columns = 2 + int(rows[0].modes.size()) + 1;
    const ImGuiTableFlags flags =
        ImGuiTableFlags_Borders | ImGuiTableFlags_RowBg | ImGuiTableFlags_SizingFixedFit | ImGuiTableFlags_ScrollX;
    if (!ImGui::BeginTable("encodings", columns, flags)) return;
    ImGui::TableSetupColumn("format");
    ImGui::TableSetupColumn("value (nearest-even)");
    for (const labs::ModeEncoding& m : rows[0].modes)
        ImGui::TableSetupColumn((std::string(emu::rounding_mode_name(m.mode)) + ": code, rel. error").c_str());
    ImGui::TableSetupColumn("stochastic: P(up)");
    ImGui::TableHeadersRow();
    for (const labs::FormatEncoding& e : rows) {
        ImGui::TableNextRow();
        ImGui::TableSetColumnIndex(0);
        ImGui::TextUnformatted(std::string(e.format->display_name).c_str());
        ImGui::TableSetColumnIndex(1);
        ImGui::TextUnformatted(labs::number_text(e.modes[0].value).c_str());
        for (std::size_t i = 0; i < e.modes.size(); ++i) {
            ImGui::TableSetColumnIndex(int(i) + 2);
            const labs::ModeEncoding& m = e.modes[i];
            const std::string text = hex(m.code, e.format->total_bits) + "  " +
                                     (std::isnan(m.rel_error) ? std::string("-") : labs::number_text(m.rel_error));
            ImGui::TextUnformatted(text.c_str());
            if (ImGui::IsItemHovered()) ImGui::SetTooltip("value %s", labs::number_text(m.value).c_str());
        }
        ImGui::TableSetColumnIndex(columns - 1);
        ImGui::TextUnformatted(
            std::isnan(e.stochastic_up_probability) ? "-" : labs::number_text(e.stochastic_up_probability).c_str());
    }
    ImGui::EndTable();
}

}  // namespace

void draw_bit_inspector(InspectorState& inspector, const Looks& looks) {
    InspectorState& s = inspector;
    const auto formats = emu::all_formats();
    s.format = std::clamp(s.format, 0, int(formats.size()) - 1);
    const emu::Format& f = formats[std::size_t(s.format)];
    const float fs = ImGui::GetFontSize();
    ImGui::PushFont(looks.fonts.heading[0]);
    ImGui::TextUnformatted("Bit inspector");
    ImGui::PopFont();
    ImGui::SetNextItemWidth(fs * 12);
    if (ImGui::BeginCombo("format", std::string(f.display_name).c_str())) {
        for (std::size_t i = 0; i < formats.size(); ++i)
            if (ImGui::Selectable(std::string(formats[i].display_name).c_str(), int(i) == s.format)) {
                s.format = int(i);
                s.code &= formats[i].total_bits >= 32 ? 0xFFFFFFFFu : (1u << formats[i].total_bits) - 1;
            }
        ImGui::EndCombo();
    }
    const std::uint32_t mask = f.total_bits >= 32 ? 0xFFFFFFFFu : (1u << f.total_bits) - 1;
    s.code &= mask;
    ImGui::SameLine();
    ImGui::SetNextItemWidth(fs * 9);
    ImGui::InputScalar("code", ImGuiDataType_U32, &s.code, nullptr, nullptr, "%X",
                       ImGuiInputTextFlags_CharsHexadecimal);
    s.code &= mask;
    const labs::CodeInspection c = labs::inspect_code(f, s.code);
    draw_bits(inspector, looks, f, c);
    ImGui::PushFont(looks.fonts.heading[1]);
    ImGui::Text("%s", labs::number_text(c.value).c_str());
    ImGui::PopFont();
    ImGui::Text("%s  (%s)", c.formula.c_str(), labs::value_class_name(c.value_class).c_str());
    ImGui::TextWrapped("%s", c.explanation.c_str());
    draw_neighbour(inspector, "below", c.below, f.total_bits);
    draw_neighbour(inspector, "above", c.above, f.total_bits);
    draw_encodings(inspector);
}

}  // namespace fp8lab::gui
