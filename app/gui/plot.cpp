// SPDX-License-Identifier: Apache-2.0
// The ImGui back end of the figure layout: its primitives on the window's draw list, and the
// interaction that belongs to a screen (the view, the hidden series, the tooltip).
#include "app/gui/plot.hpp"

#include <imgui_internal.h>

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <map>
#include <utility>
#include <set>
#include <string>
#include <variant>
#include <vector>

#include "app/plot/figure_layout.hpp"
#include "app/plot/hover_text.hpp"

namespace fp8lab::gui {
namespace {

struct ViewState {  // kept across frames, per plot
    bool user_view = false;
    double x_lo = 0, x_hi = 1, y_lo = 0, y_hi = 1;  // transformed units
    std::set<std::string> hidden;                   // series toggled off in the legend
};

plot::ThemeColours g_theme = plot::theme_colours(plot::Theme::Light);
ImFont* g_bold = nullptr;
std::map<ImGuiID, ViewState> g_views;
int g_clipped_titles = 0;
int g_short_plots = 0;                 // plots drawn with a frame under kShortestFrame lines
std::size_t g_overlapping_labels = 0;  // pairs of a plot's texts drawn over each other
std::size_t g_legends_over_data = 0;   // data items under a legend inside a frame
bool g_check_layouts = false;          // the tour's checks on (they cost time every frame)
bool g_tooltips = true;
bool g_tooltip_pending = false;
double g_pointer_still_since = 0;      // ImGui time at which the pointer last moved
constexpr double kTooltipDelay = 0.4;  // seconds the pointer rests on an item first

ImFont* font_for(bool bold) { return bold && g_bold ? g_bold : ImGui::GetFont(); }

class ImGuiMetrics final : public plot::TextMetrics {
  public:
    double width(std::string_view text, double size, bool bold) const override {
        return font_for(bold)->CalcTextSizeA(float(size), FLT_MAX, 0, text.data(), text.data() + text.size()).x;
    }
};

ImU32 colour(plot::Paint p) {
    return IM_COL32(p.colour.r, p.colour.g, p.colour.b, int(std::lround(std::clamp(p.alpha, 0.0, 1.0) * 255)));
}

bool finite(ImVec2 p) { return std::isfinite(p.x) && std::isfinite(p.y); }

// Draws primitives whose (0, 0) is `origin` on screen.
class Canvas {
  public:
    Canvas(ImDrawList* draw, ImVec2 origin, const plot::Rect& frame) : draw_(draw), origin_(origin), frame_(frame) {}

    // The figure's background goes inside its frame only, the window's colour around it:
    // a software renderer pays for every pixel filled (the whole box cost 2 ms a frame in
    // the tour under llvmpipe). Where it is the window's colour (the projector theme) the
    // fill is skipped altogether.
    void operator()(const plot::Clear& c) const {
        const ImU32 fill = colour({c.colour, 1});
        if (fill == ImGui::GetColorU32(ImGuiCol_WindowBg)) return;
        const ImRect r = rect(frame_);
        draw_->AddRectFilled(r.Min, r.Max, fill);
    }
    void operator()(const plot::Path& p) const {
        if (p.fill) fill(p, colour(*p.fill));
        if (p.stroke) stroke(p, *p.stroke);
    }
    void operator()(const plot::Text& t) const {
        ImFont* font = font_for(t.bold);
        const float size = float(t.size), ascent = font->Ascent * size / font->FontSize;
        const ImVec2 base = at(t.baseline_start);
        if (!t.vertical) {
            draw_->AddText(font, size, ImVec2(base.x, base.y - ascent), colour(t.paint), t.text.c_str());
            return;
        }
        // ImGui draws text upright only: laid out about the middle of the screen, where no
        // glyph is culled, then turned a quarter counter-clockwise about its baseline start.
        const ImGuiViewport* viewport = ImGui::GetMainViewport();
        const ImVec2 anchor(viewport->Pos.x + viewport->Size.x / 2, viewport->Pos.y + viewport->Size.y / 2);
        const int first = draw_->VtxBuffer.Size;
        const ImVec4 clip = draw_->_CmdHeader.ClipRect;
        draw_->PushClipRectFullScreen();
        draw_->AddText(font, size, ImVec2(anchor.x, anchor.y - ascent), colour(t.paint), t.text.c_str());
        // Turned into place, the text is clipped as the rest of the window is (the full
        // screen's clip would let it show over the widgets past a scrolled region's edge).
        draw_->CmdBuffer.back().ClipRect = clip;
        draw_->PopClipRect();
        for (int i = first; i < draw_->VtxBuffer.Size; ++i) {
            ImVec2& v = draw_->VtxBuffer[i].pos;
            const ImVec2 d(v.x - anchor.x, v.y - anchor.y);
            v = ImVec2(base.x + d.y, base.y - d.x);
        }
    }
    void operator()(const plot::ClipBegin& c) const {
        const ImVec2 a = at({c.rect.x, c.rect.y});
        draw_->PushClipRect(a, ImVec2(a.x + float(c.rect.width), a.y + float(c.rect.height)), true);
    }
    void operator()(const plot::ClipEnd&) const { draw_->PopClipRect(); }

  private:
    ImVec2 at(plot::Point p) const { return ImVec2(origin_.x + float(p.x), origin_.y + float(p.y)); }
    ImRect rect(const plot::Rect& r) const {
        const ImVec2 a = at({r.x, r.y}), b = at({r.x + r.width, r.y + r.height});
        return ImRect(ImVec2(std::min(a.x, b.x), std::min(a.y, b.y)), ImVec2(std::max(a.x, b.x), std::max(a.y, b.y)));
    }
    std::vector<ImVec2> points(const std::vector<plot::Point>& ps) const {
        std::vector<ImVec2> out;
        out.reserve(ps.size());
        for (const plot::Point& p : ps) out.push_back(at(p));
        return out;
    }

    void fill(const plot::Path& p, ImU32 c) const {
        // Abutting shapes without anti-aliasing: neighbours would otherwise show seams.
        const ImDrawListFlags saved = draw_->Flags;
        if (p.abutting) draw_->Flags &= ~ImDrawListFlags_AntiAliasedFill;
        for (const plot::SubPath& part : p.parts) switch (part.kind) {
            case plot::SubPath::Kind::Rectangle: {
                const ImRect r = rect(part.rect);
                if (finite(r.Min) && finite(r.Max)) draw_->AddRectFilled(r.Min, r.Max, c);
                break;
            }
            case plot::SubPath::Kind::Circle: {
                const float radius = float(part.radius);
                draw_->AddCircleFilled(at(part.points[0]), radius, c, radius < 3 ? 8 : 0);
                break;
            }
            case plot::SubPath::Kind::Strip: {  // quad by quad: ImGui fills convex shapes only
                const std::size_t n = std::min(part.points.size(), part.lower.size());
                for (std::size_t i = 0; i + 1 < n; ++i) {
                    const ImVec2 a = at(part.lower[i]), b = at(part.points[i]);
                    const ImVec2 d = at(part.lower[i + 1]), e = at(part.points[i + 1]);
                    if (finite(a) && finite(b) && finite(d) && finite(e)) draw_->AddQuadFilled(a, b, e, d, c);
                }
                break;
            }
            case plot::SubPath::Kind::Open:
            case plot::SubPath::Kind::Closed: {
                const std::vector<ImVec2> pts = points(part.points);
                if (pts.size() >= 3) draw_->AddConvexPolyFilled(pts.data(), int(pts.size()), c);
                break;
            }
            }
        draw_->Flags = saved;
    }

    void stroke(const plot::Path& p, const plot::Stroke& s) const {
        const ImU32 c = colour(s.paint);
        const float thickness = std::max(1.0f, float(s.width));
        for (const plot::SubPath& part : p.parts) switch (part.kind) {
            case plot::SubPath::Kind::Rectangle: {
                const ImRect r = rect(part.rect);
                draw_->AddRect(r.Min, r.Max, c, 0, 0, thickness);
                break;
            }
            case plot::SubPath::Kind::Circle:
                draw_->AddCircle(at(part.points[0]), float(part.radius), c, 0, thickness);
                break;
            case plot::SubPath::Kind::Open:
            case plot::SubPath::Kind::Closed:
            case plot::SubPath::Kind::Strip: {
                std::vector<ImVec2> pts = points(part.points);
                for (std::size_t i = part.lower.size(); i-- > 0;) pts.push_back(at(part.lower[i]));
                if (part.kind != plot::SubPath::Kind::Open && !pts.empty()) pts.push_back(pts.front());
                if (s.dashed())
                    dashed(pts, c, thickness, float(s.dash_on), float(s.dash_off));
                else if (pts.size() >= 2)
                    draw_->AddPolyline(pts.data(), int(pts.size()), c, 0, thickness);
                break;
            }
            }
    }

    void dashed(const std::vector<ImVec2>& pts, ImU32 c, float thickness, float on, float off) const {
        float phase = 0;  // carried across segments, so the dashes run on around corners
        for (std::size_t i = 1; i < pts.size(); ++i) {
            const ImVec2 a = pts[i - 1], b = pts[i];
            const float len = std::hypot(b.x - a.x, b.y - a.y);
            if (!(len > 0)) continue;
            const ImVec2 u((b.x - a.x) / len, (b.y - a.y) / len);
            for (float done = 0; done < len;) {
                const float step = std::min(phase < on ? on - phase : on + off - phase, len - done);
                if (phase < on)
                    draw_->AddLine(ImVec2(a.x + u.x * done, a.y + u.y * done),
                                   ImVec2(a.x + u.x * (done + step), a.y + u.y * (done + step)), c, thickness);
                done += step;
                phase = std::fmod(phase + step, on + off);
            }
        }
    }

    ImDrawList* draw_;
    ImVec2 origin_;
    plot::Rect frame_;
};

// Drag pans, the wheel zooms about the pointer, a double-click returns to the fitted view.
void move_view(ViewState& v, const ImRect& frame, ImVec2 mouse) {
    const ImGuiIO& io = ImGui::GetIO();
    if (ImGui::IsMouseDoubleClicked(ImGuiMouseButton_Left)) {
        v.user_view = false;
        return;
    }
    if (ImGui::IsMouseDragging(ImGuiMouseButton_Left, 1.0f) && ImGui::IsItemActive()) {
        const double sx = (v.x_hi - v.x_lo) / frame.GetWidth(), sy = (v.y_hi - v.y_lo) / frame.GetHeight();
        v.x_lo -= io.MouseDelta.x * sx;
        v.x_hi -= io.MouseDelta.x * sx;
        v.y_lo += io.MouseDelta.y * sy;
        v.y_hi += io.MouseDelta.y * sy;
        v.user_view = true;
    }
    if (io.MouseWheel != 0) {
        const double factor = std::pow(0.85, io.MouseWheel);
        const double fx = (mouse.x - frame.Min.x) / frame.GetWidth(), fy = (frame.Max.y - mouse.y) / frame.GetHeight();
        const double cx = v.x_lo + fx * (v.x_hi - v.x_lo), cy = v.y_lo + fy * (v.y_hi - v.y_lo);
        v.x_lo = cx - (cx - v.x_lo) * factor;
        v.x_hi = cx + (v.x_hi - cx) * factor;
        v.y_lo = cy - (cy - v.y_lo) * factor;
        v.y_hi = cy + (v.y_hi - cy) * factor;
        v.user_view = true;
    }
}

}  // namespace

void set_plot_looks(const plot::ThemeColours& colours, ImFont* bold) {
    g_theme = colours;
    g_bold = bold;
}

int clipped_plot_titles() { return g_clipped_titles; }
int short_plots() { return g_short_plots; }
std::size_t overlapping_plot_labels() { return g_overlapping_labels; }
std::size_t legends_over_data() { return g_legends_over_data; }
void check_plot_layouts(bool on) { g_check_layouts = on; }

void set_plot_tooltips(bool enabled) { g_tooltips = enabled; }

bool take_plot_tooltip_pending() { return std::exchange(g_tooltip_pending, false); }

void draw_plot(const labs::Figure& f, const char* id, ImVec2 size) {
    ImGuiWindow* window = ImGui::GetCurrentWindow();
    if (window->SkipItems) return;
    if (size.x <= 0) size.x = ImGui::GetContentRegionAvail().x;
    const ImVec2 pos = window->DC.CursorPos;
    const ImGuiID item = window->GetID(id);
    ViewState& v = g_views[item];
    const float fs = ImGui::GetFontSize();

    plot::LayoutRequest request;
    request.width = size.x;
    request.height = size.y;
    request.unit = fs;
    // Every text at the font's own size: scaled off the atlas it would blur.
    request.text = {1, 1, 1, 1, 1, 1, 1, true};
    request.theme = g_theme;
    request.x_ticks = std::clamp(int(size.x / (fs * 7)), 2, 10);
    request.y_ticks = std::clamp(int(size.y / (fs * 3)), 2, 8);
    const plot::AxisTransform tx{f.x_axis.scale, f.x_axis.linear_threshold};
    const plot::AxisTransform ty{f.y_axis.scale, f.y_axis.linear_threshold};
    if (v.user_view) {
        request.x_range = plot::AxisRange{tx.inverse(v.x_lo), tx.inverse(v.x_hi)};
        request.y_range = plot::AxisRange{ty.inverse(v.y_lo), ty.inverse(v.y_hi)};
    }
    request.hidden = v.hidden;
    request.hit_targets = ImGui::IsMouseHoveringRect(pos, ImVec2(pos.x + size.x, pos.y + size.y * 2));
    const ImGuiMetrics metrics;
    plot::FigureLayout layout = plot::layout_figure(f, request, metrics);
    if (layout.legend_below > 0) {
        request.height += layout.legend_below;
        layout = plot::layout_figure(f, request, metrics);
    }
    // A legend under the frame, or a small window, never squashes the data below a readable
    // height: the plot grows instead (its column scrolls).
    // (Growing can move the legend, so a few rounds.)
    for (int round = 0; round < 4; ++round) {
        const double deficit = kShortestFrame * fs - layout.mapping.frame.height;
        if (deficit <= 0) break;
        request.height += deficit + layout.legend_below;
        layout = plot::layout_figure(f, request, metrics);
    }
    if (layout.title_overflows) ++g_clipped_titles;
    // What the tour checks beside cut titles: a frame too short to read, labels on labels.
    if (layout.mapping.frame.height < kShortestFrame * fs) ++g_short_plots;
    if (g_check_layouts) {
        g_overlapping_labels += plot::overlapping_texts(layout, metrics);
        g_legends_over_data += plot::legend_covers_data(f, layout, request.hidden);
    }

    const ImRect total(pos, ImVec2(pos.x + size.x, pos.y + float(request.height)));
    ImGui::ItemSize(total);
    if (!ImGui::ItemAdd(total, item)) return;
    bool hovered = false, held = false;
    ImGui::ButtonBehavior(total, item, &hovered, &held, ImGuiButtonFlags_MouseButtonLeft);
    hovered = ImGui::IsItemHovered();
    const ImVec2 mouse = ImGui::GetIO().MousePos;
    const plot::Point local{mouse.x - pos.x, mouse.y - pos.y};

    const plot::FrameMapping& m = layout.mapping;
    if (!v.user_view) {
        v.x_lo = m.tx_lo;
        v.x_hi = m.tx_hi;
        v.y_lo = m.ty_lo;
        v.y_hi = m.ty_hi;
    }
    const Canvas canvas(window->DrawList, pos, m.frame);
    for (const plot::Primitive& p : layout.primitives) std::visit(canvas, p);

    // A click on a legend entry shows or hides its series from the next frame on.
    bool over_legend = false;
    for (const plot::LegendEntry& e : layout.legend) {
        if (!hovered || !e.area.contains(local)) continue;
        over_legend = true;
        const std::string& name = f.series[e.series].name;
        if (ImGui::IsMouseClicked(ImGuiMouseButton_Left) && !v.hidden.erase(name)) v.hidden.insert(name);
    }
    const ImRect frame(ImVec2(pos.x + float(m.frame.x), pos.y + float(m.frame.y)),
                       ImVec2(pos.x + float(m.frame.x + m.frame.width), pos.y + float(m.frame.y + m.frame.height)));
    if (!hovered || over_legend || !frame.Contains(mouse)) return;
    move_view(v, frame, mouse);
    // A tooltip only once the pointer has rested on an item: one that follows every
    // movement across a plot covers the data it describes.
    const ImGuiIO& io = ImGui::GetIO();
    if (io.MouseDelta.x != 0 || io.MouseDelta.y != 0) g_pointer_still_since = ImGui::GetTime();
    if (!g_tooltips) return;
    if (const auto target = plot::nearest_target(layout.hit_targets, local, fs * 1.5)) {
        if (ImGui::GetTime() - g_pointer_still_since < kTooltipDelay) {
            g_tooltip_pending = true;
            return;
        }
        if (const std::string text = plot::hover_text(f, *target); !text.empty()) ImGui::SetTooltip("%s", text.c_str());
    }
}

}  // namespace fp8lab::gui
