// SPDX-License-Identifier: Apache-2.0
// The step output view: each figure drawn by the plot layer, tables as ImGui tables.
#include "app/gui/output_view.hpp"

#include <algorithm>
#include <string>

#include "app/gui/plot.hpp"

namespace fp8lab::gui {

void draw_figure(const labs::Figure& f, const char* id, float height) {
    ImGui::PushID(id);
    draw_plot(f, f.id.c_str(), ImVec2(-1, height));
    ImGui::PopID();
}

void draw_table(const labs::Table& t) {
    if (!t.title.empty()) ImGui::TextWrapped("%s", t.title.c_str());  // a long title wraps, never cut
    if (t.columns.empty()) return;
    const ImGuiTableFlags flags = ImGuiTableFlags_Borders | ImGuiTableFlags_RowBg | ImGuiTableFlags_SizingFixedFit |
                                  ImGuiTableFlags_ScrollX | ImGuiTableFlags_NoHostExtendY;
    const float rows_shown = float(std::min<std::size_t>(t.rows.size(), 16) + 1);
    const float height = ImGui::GetTextLineHeightWithSpacing() * (rows_shown + 0.8f) + ImGui::GetStyle().ScrollbarSize;
    if (!ImGui::BeginTable(t.id.c_str(), int(t.columns.size()), flags | ImGuiTableFlags_ScrollY, ImVec2(0, height)))
        return;
    ImGui::TableSetupScrollFreeze(0, 1);
    for (const labs::Column& c : t.columns)
        ImGui::TableSetupColumn((c.unit.empty() ? c.name : c.name + " (" + c.unit + ")").c_str());
    ImGui::TableHeadersRow();
    ImGuiListClipper clipper;
    clipper.Begin(int(t.rows.size()));
    while (clipper.Step())
        for (int r = clipper.DisplayStart; r < clipper.DisplayEnd; ++r) {
            ImGui::TableNextRow();
            const auto& row = t.rows[std::size_t(r)];
            for (std::size_t c = 0; c < t.columns.size() && c < row.size(); ++c) {
                ImGui::TableSetColumnIndex(int(c));
                ImGui::TextUnformatted(labs::cell_text(t.columns[c], row[c]).c_str());
            }
        }
    ImGui::EndTable();
}

void draw_metrics(const std::vector<labs::Metric>& metrics) {
    if (metrics.empty()) return;
    if (!ImGui::BeginTable("metrics", 2, ImGuiTableFlags_SizingFixedFit | ImGuiTableFlags_RowBg)) return;
    for (const labs::Metric& m : metrics) {
        ImGui::TableNextRow();
        ImGui::TableSetColumnIndex(0);
        ImGui::TextUnformatted(m.name.c_str());
        ImGui::TableSetColumnIndex(1);
        const std::string value = labs::number_text(m.value) + (m.unit.empty() ? "" : " " + m.unit);
        ImGui::TextUnformatted(value.c_str());
    }
    ImGui::EndTable();
}

// A listing: its title, a Copy button, and the code, read-only and selectable, in `mono`.
void draw_listing(const labs::CodeListing& listing, ImFont* mono) {
    ImGui::PushID(listing.id.c_str());
    ImGui::TextUnformatted(listing.title.c_str());
    ImGui::SameLine();
    if (ImGui::SmallButton("Copy")) ImGui::SetClipboardText(listing.code.c_str());
    const int lines = int(std::count(listing.code.begin(), listing.code.end(), '\n')) + 1;
    if (mono) ImGui::PushFont(mono);
    const float height = ImGui::GetTextLineHeight() * float(std::min(lines, 24)) +
                         2 * ImGui::GetStyle().FramePadding.y + ImGui::GetStyle().ScrollbarSize;
    // ReadOnly: ImGui never writes through the pointer, so the string's own buffer serves.
    ImGui::InputTextMultiline("##code", const_cast<char*>(listing.code.c_str()), listing.code.size() + 1,
                              ImVec2(-1, height), ImGuiInputTextFlags_ReadOnly);
    if (mono) ImGui::PopFont();
    ImGui::PopID();
}

void draw_step_output(const labs::StepOutput& out, const char* id, float figure_height, ImFont* mono) {
    ImGui::PushID(id);
    for (std::size_t i = 0; i < out.figures.size(); ++i) {
        draw_figure(out.figures[i], std::to_string(i).c_str(), figure_height);
        ImGui::Spacing();
    }
    draw_metrics(out.metrics);
    for (const labs::Table& t : out.tables) {
        ImGui::Spacing();
        draw_table(t);
    }
    for (const labs::CodeListing& listing : out.listings) {
        ImGui::Spacing();
        draw_listing(listing, mono);
    }
    for (const std::string& note : out.notes) ImGui::TextWrapped("%s", note.c_str());
    ImGui::PopID();
}

}  // namespace fp8lab::gui
