// SPDX-License-Identifier: Apache-2.0
// The step output view: each figure drawn by the plot layer, tables as ImGui tables.
#include "app/gui/output_view.hpp"

#include <algorithm>
#include <numeric>
#include <string>
#include <vector>

#include "app/gui/plot.hpp"

namespace fp8lab::gui {

void draw_figure(const labs::Figure& f, const char* id, float height) {
    ImGui::PushID(id);
    draw_plot(f, f.id.c_str(), ImVec2(-1, height));
    ImGui::PopID();
}

namespace {

std::string column_header(const labs::Column& c) { return c.unit.empty() ? c.name : c.name + " (" + c.unit + ")"; }

// Each column's width as the table lays it out: its header or its widest cell of the first
// 64 rows, with the cell padding and a border.
std::vector<float> column_widths(const labs::Table& t) {
    const ImGuiStyle& style = ImGui::GetStyle();
    std::vector<float> widths;
    for (std::size_t c = 0; c < t.columns.size(); ++c) {
        float w = ImGui::CalcTextSize(column_header(t.columns[c]).c_str()).x;
        for (std::size_t r = 0; r < std::min<std::size_t>(t.rows.size(), 64); ++r)
            if (c < t.rows[r].size())
                w = std::max(w, ImGui::CalcTextSize(labs::cell_text(t.columns[c], t.rows[r][c]).c_str()).x);
        widths.push_back(w + style.CellPadding.x * 2 + 1);
    }
    return widths;
}

// The columns that start past the right edge of `width`, by name. A table scrolls sideways,
// but its scroll bar sits under its last row, often below what a projector shows: the
// names above the table say that there is more.
std::vector<std::string> columns_past_edge(const labs::Table& t, const std::vector<float>& widths, float width) {
    const float padding = ImGui::GetStyle().CellPadding.x * 2 + 1;
    std::vector<std::string> past;
    float x = 0;
    for (std::size_t c = 0; c < widths.size(); ++c) {
        if (x + (widths[c] - padding) / 2 > width) past.push_back(t.columns[c].name);  // less than half of it shows
        x += widths[c];
    }
    return past;
}

int g_tables_not_fitted = 0;  // tables of up to kTableRowsShown rows not sized to them

}  // namespace

void draw_table(const labs::Table& t) {
    if (!t.title.empty()) ImGui::TextWrapped("%s", t.title.c_str());  // a long title wraps, never cut
    if (t.columns.empty()) return;
    const float available = ImGui::GetContentRegionAvail().x;
    const std::vector<float> widths = column_widths(t);
    if (const std::vector<std::string> past = columns_past_edge(t, widths, available); !past.empty()) {
        std::string names;
        for (const std::string& n : past) names += (names.empty() ? "" : ", ") + n;
        ImGui::PushStyleColor(ImGuiCol_Text, ImGui::GetStyleColorVec4(ImGuiCol_TextDisabled));
        ImGui::TextWrapped("More columns to the right (Shift + wheel scrolls the table): %s", names.c_str());
        ImGui::PopStyleColor();
    }
    const ImGuiTableFlags flags = ImGuiTableFlags_Borders | ImGuiTableFlags_RowBg | ImGuiTableFlags_SizingFixedFit |
                                  ImGuiTableFlags_ScrollX | ImGuiTableFlags_NoHostExtendY;
    // The header and up to kTableRowsShown rows (more scroll), each a line and its cell
    // padding, the outer borders, and the horizontal scroll bar only where the columns are
    // wider than the space: a bar's worth of room left empty read as a blank last row.
    const ImGuiStyle& style = ImGui::GetStyle();
    const std::size_t rows_shown = std::min<std::size_t>(t.rows.size(), kTableRowsShown) + 1;
    const float row_height = ImGui::GetFontSize() + 2 * style.CellPadding.y;
    const bool scrolls_sideways = std::accumulate(widths.begin(), widths.end(), 0.0f) > available;
    const float height = row_height * float(rows_shown) + 2 + (scrolls_sideways ? style.ScrollbarSize : 0);
    if (!ImGui::BeginTable(t.id.c_str(), int(t.columns.size()), flags | ImGuiTableFlags_ScrollY, ImVec2(0, height)))
        return;
    ImGui::TableSetupScrollFreeze(0, 1);
    for (const labs::Column& c : t.columns) ImGui::TableSetupColumn(column_header(c).c_str());
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
    // A table that fits must show all of itself and nothing more: no vertical scrolling,
    // and no room below its last row. Inside the table's scrolling region the cursor stands
    // one item spacing below the last row's text; the row ends one cell padding below it.
    if (t.rows.size() <= kTableRowsShown) {
        const float last_row_bottom = ImGui::GetCursorPosY() - style.ItemSpacing.y + style.CellPadding.y;
        const float rows_area = ImGui::GetWindowHeight() - (scrolls_sideways ? style.ScrollbarSize : 0);
        if (ImGui::GetScrollMaxY() > 0 || rows_area - last_row_bottom > row_height / 2) ++g_tables_not_fitted;
    }
    ImGui::EndTable();
}

int tables_not_fitted() { return g_tables_not_fitted; }

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
