// The screen plot renderer: layout, interaction, ticks, every series kind, legend, tooltip.
#include "app/gui/plot.hpp"

#include "app/plot/figure_theme.hpp"

#include <imgui_internal.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <map>
#include <set>
#include <vector>

#include "app/plot/colour_map.hpp"
#include "labs/framework/table.hpp"

namespace fp8lab::gui {
namespace {

using labs::Series;
using labs::SeriesKind;

struct ViewState {  // kept across frames, per plot
    bool user_view = false;
    double x_lo = 0, x_hi = 1, y_lo = 0, y_hi = 1;  // transformed units
    std::set<std::string> hidden;                   // series toggled off in the legend
    ImRect legend_rect;                             // last frame's, so a click there does not pan
    // Room under the plot for a legend that would cover data in every corner (0: the legend
    // sits inside): found while drawing one frame, given to the frame after.
    float legend_below = 0;
    int legend_columns = 1;  // kept with it, so that a scroll bar appearing cannot make it taller
};

struct LegendEntry {
    std::string name;
    int colour;
    SeriesKind kind;
    bool dashed;
};

struct Hover {
    float distance = 1e30f;
    std::string text;
};

// The plot being drawn (one at a time, like ImPlot's current plot).
struct Current {
    ImGuiID id = 0;
    ViewState* view = nullptr;
    int flags = 0;
    std::string title;
    ImRect total, frame;
    ImDrawList* draw = nullptr;
    labs::Axis x_axis, y_axis;
    plot::AxisTransform tx, ty;
    bool hovered = false;
    ImVec2 mouse;
    std::vector<LegendEntry> legend;
    std::array<int, 64> occupancy{};  // 8x8 bins of drawn points, to place the legend
    Hover hover;
    const Series* heatmap = nullptr;
    double heat_lo = 0, heat_hi = 1;
};

PlotColours g_colours{IM_COL32(255, 255, 255, 255), IM_COL32(64, 64, 64, 255),    IM_COL32(225, 225, 225, 255),
                      IM_COL32(20, 20, 20, 255),    IM_COL32(255, 255, 255, 225), false};
std::map<ImGuiID, ViewState> g_views;
int g_clipped_titles = 0;
Current g;

float font_size() { return ImGui::GetFontSize(); }

ImU32 series_colour(int index, float alpha = 1) {
    const labs::Rgb c = plot::series_colour(g_colours.dark, labs::palette_colour(index));
    return IM_COL32(c.r, c.g, c.b, int(alpha * 255));
}

float px(double x) {
    return g.frame.Min.x + float((g.tx.forward(x) - g.view->x_lo) / (g.view->x_hi - g.view->x_lo)) * g.frame.GetWidth();
}
float py(double y) {
    return g.frame.Max.y -
           float((g.ty.forward(y) - g.view->y_lo) / (g.view->y_hi - g.view->y_lo)) * g.frame.GetHeight();
}
bool finite(ImVec2 p) { return std::isfinite(p.x) && std::isfinite(p.y); }

void occupy(ImVec2 p) {
    if (!g.frame.Contains(p)) return;
    const int bx = std::clamp(int((p.x - g.frame.Min.x) / g.frame.GetWidth() * 8), 0, 7);
    const int by = std::clamp(int((p.y - g.frame.Min.y) / g.frame.GetHeight() * 8), 0, 7);
    ++g.occupancy[std::size_t(by * 8 + bx)];
}

void consider_hover(ImVec2 p, const Series& s, double x, double y) {
    if (!g.hovered) return;
    const float dx = p.x - g.mouse.x, dy = p.y - g.mouse.y;
    const float d = std::sqrt(dx * dx + dy * dy);
    if (d < g.hover.distance && d < font_size() * 1.5f) {
        g.hover.distance = d;
        g.hover.text = (s.name.empty() ? std::string() : s.name + "\n") + g.x_axis.label +
                       (g.x_axis.label.empty() ? "" : " ") + "x = " + labs::number_text(x) + "\n" + g.y_axis.label +
                       (g.y_axis.label.empty() ? "" : " ") + "y = " + labs::number_text(y);
    }
}

// Text with the tick's superscript raised and smaller.
float tick_width(const plot::Tick& t) {
    float w = ImGui::CalcTextSize(t.label.c_str()).x;
    if (!t.superscript.empty())
        w += ImGui::GetFont()->CalcTextSizeA(font_size() * 0.7f, 1e9f, 0, t.superscript.c_str()).x;
    return w;
}
void draw_tick(const plot::Tick& t, ImVec2 at) {
    if (const std::size_t nl = t.label.find('\n'); nl != std::string::npos) {  // a wrapped category: centred lines
        const float centre = at.x + tick_width(t) / 2;
        for (const std::string& part : {t.label.substr(0, nl), t.label.substr(nl + 1)}) {
            g.draw->AddText(ImVec2(centre - ImGui::CalcTextSize(part.c_str()).x / 2, at.y), g_colours.text,
                            part.c_str());
            at.y += font_size();
        }
        return;
    }
    g.draw->AddText(at, g_colours.text, t.label.c_str());
    if (t.superscript.empty()) return;
    const float w = ImGui::CalcTextSize(t.label.c_str()).x;
    g.draw->AddText(ImGui::GetFont(), font_size() * 0.7f, ImVec2(at.x + w, at.y - font_size() * 0.3f), g_colours.text,
                    t.superscript.c_str());
}

// Text turned a quarter counter-clockwise about its centre (ImGui draws text upright only).
// It is laid out around the middle of the screen, where no glyph is culled, then turned and
// moved: laid out in place, a label near the window's edge would lose its far end.
void draw_vertical_text(const std::string& text, ImVec2 centre) {
    const ImVec2 size = ImGui::CalcTextSize(text.c_str());
    const ImGuiViewport* viewport = ImGui::GetMainViewport();
    const ImVec2 anchor(viewport->Pos.x + viewport->Size.x / 2, viewport->Pos.y + viewport->Size.y / 2);
    const int first = g.draw->VtxBuffer.Size;
    g.draw->PushClipRectFullScreen();
    g.draw->AddText(ImVec2(anchor.x - size.x / 2, anchor.y - size.y / 2), g_colours.text, text.c_str());
    g.draw->PopClipRect();
    for (int i = first; i < g.draw->VtxBuffer.Size; ++i) {
        ImVec2& p = g.draw->VtxBuffer[i].pos;
        const ImVec2 d(p.x - anchor.x, p.y - anchor.y);
        p = ImVec2(centre.x + d.y, centre.y - d.x);
    }
}

void dashed_polyline(const std::vector<ImVec2>& pts, ImU32 colour, float thickness) {
    const float on = font_size() * 0.5f, off = font_size() * 0.3f;
    float phase = 0;  // carried across segments, so the dashes run on around corners
    for (std::size_t i = 1; i < pts.size(); ++i) {
        const ImVec2 a = pts[i - 1], b = pts[i];
        const float len = std::sqrt((b.x - a.x) * (b.x - a.x) + (b.y - a.y) * (b.y - a.y));
        if (len <= 0) continue;
        const ImVec2 unit((b.x - a.x) / len, (b.y - a.y) / len);
        for (float done = 0; done < len;) {
            const float step = std::min(phase < on ? on - phase : on + off - phase, len - done);
            if (phase < on)
                g.draw->AddLine(ImVec2(a.x + unit.x * done, a.y + unit.y * done),
                                ImVec2(a.x + unit.x * (done + step), a.y + unit.y * (done + step)), colour, thickness);
            done += step;
            phase = std::fmod(phase + step, on + off);
        }
    }
}

void stroke(const std::vector<ImVec2>& pts, const Series& s) {
    if (pts.size() < 2) return;
    const float thickness = std::max(1.0f, font_size() * 0.12f * float(s.line_width));
    if (s.dashed)
        dashed_polyline(pts, series_colour(s.colour), thickness);
    else
        g.draw->AddPolyline(pts.data(), int(pts.size()), series_colour(s.colour), 0, thickness);
}

void plot_lines(const Series& s) {
    std::vector<ImVec2> run;
    const std::size_t n = std::min(s.x.size(), s.y.size());
    for (std::size_t i = 0; i < n; ++i) {
        const ImVec2 p(px(s.x[i]), py(s.y[i]));
        if (!finite(p)) {
            stroke(run, s);
            run.clear();
            continue;
        }
        if (s.kind == SeriesKind::Stairs && !run.empty()) run.emplace_back(p.x, run.back().y);
        if (!run.empty()) {  // long segments count along their length, so the legend avoids them
            const ImVec2 a = run.back();
            const float len = std::hypot(p.x - a.x, p.y - a.y), step = font_size();
            for (float t = step; t < len; t += step)
                occupy(ImVec2(a.x + (p.x - a.x) * t / len, a.y + (p.y - a.y) * t / len));
        }
        run.push_back(p);
        occupy(p);
        consider_hover(p, s, s.x[i], s.y[i]);
    }
    stroke(run, s);
}

void plot_filled(const Series& s) {
    // Fills without anti-aliasing: neighbouring quads would otherwise show seams.
    const ImDrawListFlags saved = g.draw->Flags;
    g.draw->Flags &= ~ImDrawListFlags_AntiAliasedFill;
    const ImU32 colour = series_colour(s.colour, s.kind == SeriesKind::Band ? 0.3f : 0.9f);
    if (s.kind == SeriesKind::Band) {
        const std::size_t n = std::min({s.x.size(), s.y.size(), s.y_upper.size()});
        for (std::size_t i = 0; i + 1 < n; ++i) {
            const ImVec2 a(px(s.x[i]), py(s.y[i])), b(px(s.x[i]), py(s.y_upper[i]));
            const ImVec2 c(px(s.x[i + 1]), py(s.y_upper[i + 1])), d(px(s.x[i + 1]), py(s.y[i + 1]));
            if (finite(a) && finite(b) && finite(c) && finite(d)) g.draw->AddQuadFilled(a, b, c, d, colour);
        }
    } else {
        const bool bars = s.kind == SeriesKind::Bars;
        const float base = std::isfinite(py(0)) ? py(0) : g.frame.Max.y;
        const std::size_t n =
            bars ? std::min(s.x.size(), s.y.size()) : std::min(s.x.size() ? s.x.size() - 1 : 0, s.y.size());
        for (std::size_t i = 0; i < n; ++i) {
            const double x0 = bars ? s.x[i] - s.bar_width / 2 : s.x[i];
            const double x1 = bars ? s.x[i] + s.bar_width / 2 : s.x[i + 1];
            const float left = px(x0), right = px(x1), top = py(s.y[i]);
            if (!std::isfinite(left) || !std::isfinite(right) || !std::isfinite(top)) continue;
            const ImRect r(ImVec2(std::min(left, right), std::min(top, base)),
                           ImVec2(std::max(left, right), std::max(top, base)));
            g.draw->AddRectFilled(r.Min, r.Max, colour);
            occupy(ImVec2(r.GetCenter().x, top));
            if (g.hovered && r.Contains(g.mouse)) {
                g.hover.distance = 0;
                // Appended piece by piece: GCC 12 at -O3 reports a false -Wrestrict
                // overlap inside operator+(const char*, std::string&&) (its bug 105651).
                std::string& text = g.hover.text;
                text = s.name.empty() ? "" : s.name + "\n";
                if (bars)
                    (text += "x = ") += labs::number_text(s.x[i]);
                else
                    ((((text += "[") += labs::number_text(x0)) += ", ") += labs::number_text(x1)) += ")";
                (text += "\ny = ") += labs::number_text(s.y[i]);
            }
        }
    }
    g.draw->Flags = saved;
}

void plot_heatmap(const Series& s) {
    if (s.rows <= 0 || s.columns <= 0 || s.values.size() < std::size_t(s.rows) * std::size_t(s.columns)) return;
    const auto [lo, hi] = plot::value_range(s.values);
    g.heatmap = &s;
    g.heat_lo = lo;
    g.heat_hi = hi;
    const double x0 = s.x.size() >= 2 ? s.x[0] : 0, x1 = s.x.size() >= 2 ? s.x[1] : s.columns;
    const double y0 = s.y.size() >= 2 ? s.y[0] : 0, y1 = s.y.size() >= 2 ? s.y[1] : s.rows;
    for (int r = 0; r < s.rows; ++r)
        for (int c = 0; c < s.columns; ++c) {
            const double v = s.values[std::size_t(r) * std::size_t(s.columns) + std::size_t(c)];
            const labs::Rgb rgb = plot::sequential_colour(hi > lo ? (v - lo) / (hi - lo) : 0.5);
            const ImVec2 a(px(x0 + (x1 - x0) * c / s.columns), py(y0 + (y1 - y0) * r / s.rows));
            const ImVec2 b(px(x0 + (x1 - x0) * (c + 1) / s.columns), py(y0 + (y1 - y0) * (r + 1) / s.rows));
            const ImRect cell(ImVec2(std::min(a.x, b.x), std::min(a.y, b.y)),
                              ImVec2(std::max(a.x, b.x), std::max(a.y, b.y)));
            g.draw->AddRectFilled(cell.Min, cell.Max, IM_COL32(rgb.r, rgb.g, rgb.b, 255));
            if (g.hovered && cell.Contains(g.mouse)) {
                g.hover.distance = 0;
                g.hover.text = "row " + std::to_string(r) + ", column " + std::to_string(c) + "\n" +
                               (s.value_label.empty() ? "value" : s.value_label) + " = " + labs::number_text(v);
            }
        }
}

void handle_input() {
    ViewState& v = *g.view;
    ImGuiIO& io = ImGui::GetIO();
    const bool over_legend = v.legend_rect.Contains(g.mouse);
    if (!g.hovered) return;
    if (ImGui::IsMouseDoubleClicked(ImGuiMouseButton_Left)) {
        v.user_view = false;  // back to the fitted ranges, applied by SetupAxes next frame
        return;
    }
    if (!over_legend && ImGui::IsMouseDragging(ImGuiMouseButton_Left, 1.0f) && ImGui::IsItemActive()) {
        const double sx = (v.x_hi - v.x_lo) / g.frame.GetWidth(), sy = (v.y_hi - v.y_lo) / g.frame.GetHeight();
        v.x_lo -= io.MouseDelta.x * sx;
        v.x_hi -= io.MouseDelta.x * sx;
        v.y_lo += io.MouseDelta.y * sy;
        v.y_hi += io.MouseDelta.y * sy;
        v.user_view = true;
    }
    if (io.MouseWheel != 0) {
        const double factor = std::pow(0.85, io.MouseWheel);
        const double fx = (g.mouse.x - g.frame.Min.x) / g.frame.GetWidth();
        const double fy = (g.frame.Max.y - g.mouse.y) / g.frame.GetHeight();
        const double cx = v.x_lo + fx * (v.x_hi - v.x_lo), cy = v.y_lo + fy * (v.y_hi - v.y_lo);
        v.x_lo = cx - (cx - v.x_lo) * factor;
        v.x_hi = cx + (v.x_hi - cx) * factor;
        v.y_lo = cy - (cy - v.y_lo) * factor;
        v.y_hi = cy + (v.y_hi - cy) * factor;
        v.user_view = true;
    }
}

void draw_legend() {
    if (g.legend.empty() || (g.flags & PlotFlags_NoLegend)) {
        g.view->legend_rect = ImRect();
        return;
    }
    const float fs = font_size(), row = fs * 1.3f, swatch = fs * 1.6f;
    float w = 0;
    for (const LegendEntry& e : g.legend) w = std::max(w, ImGui::CalcTextSize(e.name.c_str()).x);
    const float entry_w = w + swatch + fs * 1.2f;
    ImVec2 size(entry_w, row * float(g.legend.size()) + fs * 0.4f);
    // The corner whose 8x8 bins hold the fewest drawn points; when each holds some, the
    // legend moves under the plot, in columns, from the next frame on.
    ImVec2 best_pos;
    int best = INT32_MAX;
    int columns = 1;
    if (g.view->legend_below > 0) {
        columns = g.view->legend_columns;
        const int rows = (int(g.legend.size()) + columns - 1) / columns;
        size = ImVec2(entry_w * float(columns), row * float(rows) + fs * 0.4f);
        best_pos = ImVec2(g.frame.Min.x, g.total.Max.y - g.view->legend_below + fs * 0.3f);
        best = 0;
        g.view->legend_below = row * float(rows) + fs * 0.7f;  // the font may have changed since
    }
    for (int corner = 0; corner < 4 && g.view->legend_below == 0; ++corner) {
        const ImVec2 pos(corner % 2 == 0 ? g.frame.Max.x - size.x - fs * 0.4f : g.frame.Min.x + fs * 0.4f,
                         corner < 2 ? g.frame.Min.y + fs * 0.4f : g.frame.Max.y - size.y - fs * 0.4f);
        int count = 0;
        for (int b = 0; b < 64; ++b) {
            const ImVec2 centre(g.frame.Min.x + (float(b % 8) + 0.5f) * g.frame.GetWidth() / 8,
                                g.frame.Min.y + (float(b / 8) + 0.5f) * g.frame.GetHeight() / 8);
            if (ImRect(pos, ImVec2(pos.x + size.x, pos.y + size.y)).Contains(centre))
                count += g.occupancy[std::size_t(b)];
        }
        if (count < best) {
            best = count;
            best_pos = pos;
        }
    }
    if (best > 0 && g.view->legend_below == 0) {
        const int c = std::clamp(int(g.total.GetWidth() / entry_w), 1, int(g.legend.size()));
        g.view->legend_columns = c;
        g.view->legend_below = row * float((int(g.legend.size()) + c - 1) / c) + fs * 0.7f;
    }
    const ImRect box(best_pos, ImVec2(best_pos.x + size.x, best_pos.y + size.y));
    g.view->legend_rect = box;
    g.draw->AddRectFilled(box.Min, box.Max, g_colours.legend_background);
    g.draw->AddRect(box.Min, box.Max, g_colours.grid);
    for (std::size_t i = 0; i < g.legend.size(); ++i) {
        const LegendEntry& e = g.legend[i];
        const bool hidden = g.view->hidden.count(e.name) > 0;
        const int rows = (int(g.legend.size()) + columns - 1) / columns;
        const float x0 = box.Min.x + entry_w * float(int(i) / rows);
        const float y = box.Min.y + fs * 0.2f + row * float(int(i) % rows);
        const ImRect entry(ImVec2(x0, y), ImVec2(x0 + entry_w, y + row));
        const ImU32 colour = series_colour(e.colour, hidden ? 0.25f : 1.0f);
        const float cy = y + row / 2, sx = x0 + fs * 0.4f;
        if (e.kind == SeriesKind::Scatter)
            g.draw->AddCircleFilled(ImVec2(sx + swatch / 2 - fs * 0.2f, cy), fs * 0.28f, colour);
        else if (e.kind == SeriesKind::Bars || e.kind == SeriesKind::Histogram || e.kind == SeriesKind::Band)
            g.draw->AddRectFilled(ImVec2(sx, cy - fs * 0.3f), ImVec2(sx + swatch - fs * 0.4f, cy + fs * 0.3f), colour);
        else
            g.draw->AddLine(ImVec2(sx, cy), ImVec2(sx + swatch - fs * 0.4f, cy), colour, std::max(1.0f, fs * 0.14f));
        ImU32 text = g_colours.text;
        if (hidden) text = (text & 0x00FFFFFF) | 0x60000000;
        g.draw->AddText(ImVec2(sx + swatch, y + (row - fs) / 2), text, e.name.c_str());
        if (entry.Contains(ImGui::GetIO().MousePos) && ImGui::IsMouseClicked(ImGuiMouseButton_Left) &&
            ImGui::IsWindowHovered()) {
            if (hidden)
                g.view->hidden.erase(e.name);
            else
                g.view->hidden.insert(e.name);
        }
    }
}

void draw_colour_bar() {
    if (!g.heatmap) return;
    const float fs = font_size();
    const float x = g.frame.Max.x + fs * 0.8f, top = g.frame.Min.y, h = g.frame.GetHeight();
    const int steps = 48;
    for (int i = 0; i < steps; ++i) {
        const labs::Rgb c = plot::sequential_colour((i + 0.5) / steps);
        g.draw->AddRectFilled(ImVec2(x, top + h * (1 - float(i + 1) / steps)),
                              ImVec2(x + fs * 0.8f, top + h * (1 - float(i) / steps) + 0.5f),
                              IM_COL32(c.r, c.g, c.b, 255));
    }
    labs::Axis axis;
    for (const plot::Tick& t : plot::make_ticks(axis, {g.heat_lo, g.heat_hi}, 5)) {
        const float y =
            g.heat_hi > g.heat_lo ? top + h * float(1 - (t.value - g.heat_lo) / (g.heat_hi - g.heat_lo)) : top + h / 2;
        draw_tick(t, ImVec2(x + fs * 1.1f, y - fs / 2));
    }
    if (!g.heatmap->value_label.empty()) draw_vertical_text(g.heatmap->value_label, ImVec2(x + fs * 5.2f, top + h / 2));
}

}  // namespace

void set_plot_colours(const PlotColours& colours) { g_colours = colours; }

int clipped_plot_titles() { return g_clipped_titles; }

bool BeginPlot(const char* id, const std::string& title, ImVec2 size, int flags) {
    ImGuiWindow* window = ImGui::GetCurrentWindow();
    if (window->SkipItems) return false;
    if (size.x <= 0) size.x = ImGui::GetContentRegionAvail().x;
    const ImVec2 pos = window->DC.CursorPos;
    g = Current{};
    g.id = window->GetID(id);
    g.view = &g_views[g.id];
    // A legend under the plot adds its height: the plot itself keeps its size.
    g.total = ImRect(pos, ImVec2(pos.x + size.x, pos.y + size.y + g.view->legend_below));
    g.flags = flags;
    g.title = title;
    ImGui::ItemSize(g.total);
    if (!ImGui::ItemAdd(g.total, g.id)) return false;
    bool hovered = false, held = false;
    ImGui::ButtonBehavior(g.total, g.id, &hovered, &held, ImGuiButtonFlags_MouseButtonLeft);
    g.draw = window->DrawList;
    g.hovered = ImGui::IsItemHovered();
    g.mouse = ImGui::GetIO().MousePos;
    return true;
}

void SetupAxes(const labs::Axis& x, plot::AxisRange x_fit, const labs::Axis& y, plot::AxisRange y_fit) {
    ViewState& v = *g.view;
    g.x_axis = x;
    g.y_axis = y;
    g.tx = {x.scale, x.linear_threshold};
    g.ty = {y.scale, y.linear_threshold};
    if (!v.user_view) {
        v.x_lo = g.tx.forward(x_fit.lo);
        v.x_hi = g.tx.forward(x_fit.hi);
        v.y_lo = g.ty.forward(y_fit.lo);
        v.y_hi = g.ty.forward(y_fit.hi);
        if (!(v.x_hi > v.x_lo)) v.x_hi = v.x_lo + 1;
        if (!(v.y_hi > v.y_lo)) v.y_hi = v.y_lo + 1;
    }
    const plot::AxisRange xr{g.tx.inverse(v.x_lo), g.tx.inverse(v.x_hi)};
    const plot::AxisRange yr{g.ty.inverse(v.y_lo), g.ty.inverse(v.y_hi)};
    const float fs = font_size();
    const int x_target = std::clamp(int(g.total.GetWidth() / (fs * 7)), 2, 10);
    const int y_target = std::clamp(int(g.total.GetHeight() / (fs * 3)), 2, 8);
    std::vector<plot::Tick> xt = x.show_ticks ? plot::make_ticks(x, xr, x_target) : std::vector<plot::Tick>{};
    // Category names wider than their slot go on two lines, split at the middle space.
    bool wrapped = false;
    if (!x.categories.empty())
        for (plot::Tick& t : xt) {
            const float slot = g.total.GetWidth() / float(x.categories.size());
            if (tick_width(t) <= slot * 0.9f) continue;
            std::size_t best = std::string::npos;
            for (std::size_t i = t.label.find(' '); i != std::string::npos; i = t.label.find(' ', i + 1))
                if (best == std::string::npos ||
                    std::abs(int(i) - int(t.label.size() / 2)) < std::abs(int(best) - int(t.label.size() / 2)))
                    best = i;
            if (best == std::string::npos) continue;
            t.label[best] = '\n';
            wrapped = true;
        }
    const std::vector<plot::Tick> yt = y.show_ticks ? plot::make_ticks(y, yr, y_target) : std::vector<plot::Tick>{};
    float y_tick_w = 0;
    for (const plot::Tick& t : yt) y_tick_w = std::max(y_tick_w, tick_width(t));

    // A title wider than the plot wraps at spaces instead of running past its edge.
    const float frame_left = g.total.Min.x + y_tick_w + fs * (y.label.empty() ? 0.8f : 2.2f);
    const float title_wrap = std::max(fs * 8, g.total.Max.x - frame_left - fs * 0.4f);
    const ImVec2 title_size =
        g.title.empty() ? ImVec2() : ImGui::CalcTextSize(g.title.c_str(), nullptr, false, title_wrap);
    if (title_size.x > g.total.Max.x - frame_left + 0.5f) ++g_clipped_titles;
    const float title_h = g.title.empty() ? fs * 0.5f : title_size.y + fs * 0.6f;
    g.frame.Min = ImVec2(frame_left, g.total.Min.y + title_h);
    g.frame.Max =
        ImVec2(g.total.Max.x - fs * ((g.flags & PlotFlags_ColourBar) ? 7.0f : 0.8f),
               g.total.Max.y - v.legend_below - fs * ((x.label.empty() ? 1.8f : 3.0f) + (wrapped ? 1.2f : 0.0f)));
    g.hovered = g.hovered && g.frame.Contains(g.mouse);
    handle_input();

    ImDrawList* d = g.draw;
    // Where the plot's background is the window's (the projector theme), the fill would
    // repaint the same colour: skipped, since each large fill costs about a millisecond
    // under a software renderer.
    if (g_colours.background != ImGui::GetColorU32(ImGuiCol_WindowBg))
        d->AddRectFilled(g.frame.Min, g.frame.Max, g_colours.background);
    if (!g.title.empty())
        d->AddText(ImGui::GetFont(), fs, ImVec2(g.frame.Min.x, g.total.Min.y + fs * 0.2f), g_colours.text,
                   g.title.c_str(), nullptr, title_wrap);
    for (const plot::Tick& t : xt) {
        const float x_px = px(t.value);
        if (!std::isfinite(x_px) || x_px < g.frame.Min.x - 1 || x_px > g.frame.Max.x + 1) continue;
        d->AddLine(ImVec2(x_px, g.frame.Min.y), ImVec2(x_px, g.frame.Max.y), g_colours.grid);
        draw_tick(t, ImVec2(x_px - tick_width(t) / 2, g.frame.Max.y + fs * 0.25f));
    }
    for (const plot::Tick& t : yt) {
        const float y_px = py(t.value);
        if (!std::isfinite(y_px) || y_px < g.frame.Min.y - 1 || y_px > g.frame.Max.y + 1) continue;
        d->AddLine(ImVec2(g.frame.Min.x, y_px), ImVec2(g.frame.Max.x, y_px), g_colours.grid);
        draw_tick(t, ImVec2(g.frame.Min.x - fs * 0.3f - tick_width(t), y_px - fs / 2));
    }
    if (!x.label.empty()) {
        const float w = ImGui::CalcTextSize(x.label.c_str()).x;
        d->AddText(ImVec2((g.frame.Min.x + g.frame.Max.x - w) / 2, g.frame.Max.y + fs * (wrapped ? 2.7f : 1.5f)),
                   g_colours.text, x.label.c_str());
    }
    if (!y.label.empty())
        draw_vertical_text(y.label, ImVec2(g.total.Min.x + fs * 0.6f, (g.frame.Min.y + g.frame.Max.y) / 2));
    d->PushClipRect(g.frame.Min, g.frame.Max, true);
}

void PlotSeries(const labs::Series& s) {
    if (!s.name.empty() && s.kind != SeriesKind::Heatmap) g.legend.push_back({s.name, s.colour, s.kind, s.dashed});
    if (!s.name.empty() && g.view->hidden.count(s.name)) return;
    switch (s.kind) {
    case SeriesKind::Line:
    case SeriesKind::Stairs:
        plot_lines(s);
        break;
    case SeriesKind::Scatter: {
        const std::size_t n = std::min(s.x.size(), s.y.size());
        const float r = std::max(1.5f, font_size() * 0.2f);
        for (std::size_t i = 0; i < n; ++i) {
            const ImVec2 p(px(s.x[i]), py(s.y[i]));
            if (!finite(p)) continue;
            g.draw->AddCircleFilled(p, r, series_colour(s.colour, 0.85f), 8);
            occupy(p);
            consider_hover(p, s, s.x[i], s.y[i]);
        }
        break;
    }
    case SeriesKind::VerticalLines:
        for (double x : s.x) {
            const float x_px = px(x);
            if (!std::isfinite(x_px)) continue;
            g.draw->AddLine(ImVec2(x_px, g.frame.Min.y), ImVec2(x_px, g.frame.Max.y), series_colour(s.colour, 0.8f));
            if (g.hovered && std::fabs(x_px - g.mouse.x) < g.hover.distance &&
                std::fabs(x_px - g.mouse.x) < font_size() * 0.5f) {
                g.hover.distance = std::fabs(x_px - g.mouse.x);
                g.hover.text = (s.name.empty() ? "" : s.name + "\n") + "x = " + labs::number_text(x);
            }
        }
        break;
    case SeriesKind::Band:
    case SeriesKind::Bars:
    case SeriesKind::Histogram:
        plot_filled(s);
        break;
    case SeriesKind::Heatmap:
        plot_heatmap(s);
        break;
    }
}

void PlotAnnotation(const labs::Annotation& a) {
    const ImVec2 p(px(a.x), py(a.y));
    if (!finite(p)) return;
    const float fs = font_size();
    g.draw->AddCircleFilled(p, fs * 0.22f, g_colours.text);
    const ImVec2 size = ImGui::CalcTextSize(a.text.c_str());
    float tx = p.x + fs * 0.5f;
    if (tx + size.x > g.frame.Max.x - fs * 0.3f) tx = p.x - fs * 0.5f - size.x;
    const float ty = std::clamp(p.y - fs * 1.2f, g.frame.Min.y + fs * 0.2f, g.frame.Max.y - fs * 1.2f);
    g.draw->AddRectFilled(ImVec2(tx - fs * 0.15f, ty), ImVec2(tx + size.x + fs * 0.15f, ty + size.y),
                          g_colours.legend_background);
    g.draw->AddText(ImVec2(tx, ty), g_colours.text, a.text.c_str());
}

void EndPlot() {
    g.draw->PopClipRect();
    g.draw->AddRect(g.frame.Min, g.frame.Max, g_colours.frame);
    draw_legend();
    draw_colour_bar();
    if (g.hovered && !g.hover.text.empty()) ImGui::SetTooltip("%s", g.hover.text.c_str());
    g.view = nullptr;
}

}  // namespace fp8lab::gui
