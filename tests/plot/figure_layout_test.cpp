// SPDX-License-Identifier: Apache-2.0
// The figure layout without a renderer: margins, legend placement, wrapping, every series
// kind's shapes, hidden series, the colour bar, hit targets and hover text.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <variant>
#include <vector>

#include "app/plot/figure_layout.hpp"
#include "app/plot/hover_text.hpp"
#include "tests/plot/fixed_metrics.hpp"

using namespace fp8lab;
using fp8lab::test::FixedMetrics;
using plot::SubPath;

namespace {

plot::FigureLayout lay_out(const labs::Figure& f, plot::LayoutRequest r = {}) {
    if (r.width == 0) {
        r.width = 800;
        r.height = 500;
        r.unit = 12;
    }
    return plot::layout_figure(f, r, FixedMetrics());
}

std::vector<plot::Text> texts(const plot::FigureLayout& l) {
    std::vector<plot::Text> out;
    for (const plot::Primitive& p : l.primitives)
        if (const auto* t = std::get_if<plot::Text>(&p)) out.push_back(*t);
    return out;
}

// A pointer into `ts`, which must outlive it (a temporary cannot bind here).
const plot::Text* text_named(const std::vector<plot::Text>& ts, const std::string& s) {
    for (const plot::Text& t : ts)
        if (t.text == s) return &t;
    return nullptr;
}
const plot::Text* text_named(std::vector<plot::Text>&&, const std::string&) = delete;

// The paths drawn between the frame's clip and its end: the series' shapes, in order.
std::vector<plot::Path> series_paths(const plot::FigureLayout& l) {
    std::vector<plot::Path> out;
    bool inside = false;
    for (const plot::Primitive& p : l.primitives) {
        if (std::holds_alternative<plot::ClipBegin>(p)) inside = true;
        if (std::holds_alternative<plot::ClipEnd>(p)) inside = false;
        if (const auto* path = std::get_if<plot::Path>(&p); path && inside) out.push_back(*path);
    }
    return out;
}

labs::Figure figure_of(std::vector<labs::Series> series) {
    return labs::Figure{"f", "A title", labs::Axis{"x"}, labs::Axis{"y"}, std::move(series), {}, true};
}

}  // namespace

TEST_CASE("the frame sits inside the figure, ticks at their mapped place, one clip around the series") {
    labs::Figure f = figure_of({labs::line("a", {0, 10, 20, 30}, {0, 1, 4, 9}, 0)});
    const plot::FigureLayout l = lay_out(f);
    const plot::Rect& fr = l.mapping.frame;
    CHECK(fr.x > 0);
    CHECK(fr.y > 0);
    CHECK(fr.x + fr.width < 800);
    CHECK(fr.y + fr.height < 500);
    CHECK(std::holds_alternative<plot::Clear>(l.primitives.front()));
    int clips = 0;
    for (const plot::Primitive& p : l.primitives)
        clips += std::holds_alternative<plot::ClipBegin>(p) - std::holds_alternative<plot::ClipEnd>(p);
    CHECK(clips == 0);
    // The x tick "20" is centred on the data's x = 20, under the frame.
    const std::vector<plot::Text> ts = texts(l);
    const plot::Text* twenty = nullptr;
    for (const plot::Text& t : ts)
        if (t.text == "20" && t.baseline_start.y > fr.y + fr.height) twenty = &t;
    REQUIRE(twenty);
    CHECK(twenty->baseline_start.x + 2 * 0.6 * 12 * 0.85 / 2 == doctest::Approx(l.mapping.px(20)));
    // The y label reads upward at the left edge; the title is bold.
    const plot::Text* y = text_named(ts, "y");
    REQUIRE(y);
    CHECK(y->vertical);
    CHECK(y->baseline_start.x < fr.x);
    REQUIRE(text_named(ts, "A title"));
    CHECK(text_named(ts, "A title")->bold);
}

TEST_CASE("lines break at values the axis cannot show; stairs add their corners") {
    labs::Figure f = figure_of({labs::line("a", {1, 2, 3, 4, 5}, {1, 2, NAN, 4, 5}, 0)});
    f.series.push_back(labs::line("s", {1, 2, 3}, {1, 3, 2}, 1));
    f.series.back().kind = labs::SeriesKind::Stairs;
    const std::vector<plot::Path> paths = series_paths(lay_out(f));
    REQUIRE(paths.size() == 2);
    REQUIRE(paths[0].parts.size() == 2);
    CHECK(paths[0].parts[0].points.size() == 2);
    CHECK(paths[0].parts[1].points.size() == 2);
    CHECK(paths[0].stroke.has_value());
    CHECK_FALSE(paths[0].fill.has_value());
    REQUIRE(paths[1].parts.size() == 1);
    const std::vector<plot::Point>& st = paths[1].parts[0].points;
    REQUIRE(st.size() == 5);  // 3 points, 2 corners
    CHECK(st[1].x == st[2].x);
    CHECK(st[1].y == st[0].y);
}

TEST_CASE("each series kind becomes its shapes") {
    labs::Series bars;
    bars.kind = labs::SeriesKind::Bars;
    bars.x = {0, 1, 2};
    bars.y = {1, 2, 3};
    labs::Series hist;
    hist.kind = labs::SeriesKind::Histogram;
    hist.x = {0, 1, 2, 3};
    hist.y = {3, 1, 2};
    labs::Series band;
    band.kind = labs::SeriesKind::Band;
    band.x = {0, 1, 2};
    band.y = {0, 0, 0};
    band.y_upper = {1, 2, 1};
    labs::Series vlines;
    vlines.kind = labs::SeriesKind::VerticalLines;
    vlines.x = {0.5, 1.5};
    vlines.dashed = true;
    const std::vector<plot::Path> paths =
        series_paths(lay_out(figure_of({bars, hist, band, vlines, labs::scatter("p", {0, 1}, {1, 2}, 2)})));
    REQUIRE(paths.size() == 5);
    REQUIRE(paths[0].parts.size() == 3);
    CHECK(paths[0].parts[0].kind == SubPath::Kind::Rectangle);
    CHECK(paths[0].abutting);
    CHECK(paths[1].parts.size() == 3);  // three bins from four edges
    REQUIRE(paths[2].parts.size() == 1);
    CHECK(paths[2].parts[0].kind == SubPath::Kind::Strip);
    CHECK(paths[2].parts[0].points.size() == 3);
    CHECK(paths[2].parts[0].lower.size() == 3);
    REQUIRE(paths[3].parts.size() == 2);
    CHECK(paths[3].stroke->dashed());
    REQUIRE(paths[4].parts.size() == 2);
    CHECK(paths[4].parts[0].kind == SubPath::Kind::Circle);
    // A bar rises from y = 0 to its value.
    const plot::FigureLayout l = lay_out(figure_of({bars}));
    const plot::Rect r = series_paths(l)[0].parts[2].rect;
    CHECK(r.y + r.height == doctest::Approx(l.mapping.py(0)));
    CHECK(r.y == doctest::Approx(l.mapping.py(3)));
}

TEST_CASE("the legend takes a corner free of data, or goes under the plot, which gives up its room") {
    // Data only towards the bottom left: the legend goes to the top right.
    labs::Figure f = figure_of({labs::line("rising", {0, 1, 2, 3, 10}, {0, 0.1, 0.2, 0.3, 0}, 0)});
    f.y_axis.max = 10.0;
    plot::FigureLayout l = lay_out(f);
    REQUIRE(l.legend.size() == 1);
    CHECK(l.legend_below == 0);
    CHECK(l.legend[0].area.x > l.mapping.frame.x + l.mapping.frame.width / 2);
    CHECK(l.legend[0].area.y < l.mapping.frame.y + l.mapping.frame.height / 2);

    // A point in every corner: the legend goes under the frame.
    labs::Figure full = figure_of({labs::scatter("corners", {0, 0, 1, 1}, {0, 1, 0, 1}, 0)});
    const plot::FigureLayout below = lay_out(full);
    CHECK(below.legend_below > 0);
    REQUIRE(below.legend.size() == 1);
    CHECK(below.legend[0].area.y > below.mapping.frame.y + below.mapping.frame.height);
    // It took its height from the frame: with it the frame is as tall as it is without.
    full.legend = false;
    const plot::FigureLayout none = lay_out(full);
    CHECK(below.mapping.frame.height + below.legend_below == doctest::Approx(none.mapping.frame.height));
    CHECK(none.legend.empty());
}

TEST_CASE("a hidden series is not drawn and its legend entry is dimmed") {
    labs::Figure f = figure_of({labs::line("a", {0, 1}, {0, 1}, 0), labs::line("b", {0, 1}, {1, 0}, 1)});
    plot::LayoutRequest r;
    r.width = 800;
    r.height = 500;
    r.unit = 12;
    r.hidden = {"b"};
    const plot::FigureLayout l = lay_out(f, r);
    CHECK(series_paths(l).size() == 1);
    REQUIRE(l.legend.size() == 2);
    const std::vector<plot::Text> ts = texts(l);
    const plot::Text* b = text_named(ts, "b");
    REQUIRE(b);
    CHECK(b->paint.alpha < 1);
    REQUIRE(text_named(ts, "a"));
    CHECK(text_named(ts, "a")->paint.alpha == 1);
}

TEST_CASE("a long title wraps onto lines that fit; a word wider than the figure is reported") {
    labs::Figure f = figure_of({labs::line("", {0, 1}, {0, 1}, 0)});
    f.title = "one two three four five six seven eight nine ten eleven twelve";
    plot::LayoutRequest r;
    r.width = 300;
    r.height = 300;
    r.unit = 10;
    const plot::FigureLayout l = lay_out(f, r);
    int title_lines = 0;
    for (const plot::Text& t : texts(l))
        if (t.bold) {
            ++title_lines;
            CHECK(t.baseline_start.x + FixedMetrics().width(t.text, t.size, true) <= r.width);
        }
    CHECK(title_lines >= 2);
    CHECK_FALSE(l.title_overflows);
    f.title = std::string(80, 'w');
    CHECK(lay_out(f, r).title_overflows);
}

TEST_CASE("category names that would run into their neighbours go on two lines") {
    labs::Series bars;
    bars.kind = labs::SeriesKind::Bars;
    bars.x = {0, 1, 2};
    bars.y = {1, 2, 3};
    labs::Figure f = figure_of({bars});
    f.x_axis.categories = {"short", "a much longer category name", "b"};
    plot::LayoutRequest r;
    r.width = 250;
    r.height = 300;
    r.unit = 10;
    const std::vector<plot::Text> narrow = texts(lay_out(f, r));
    CHECK(text_named(narrow, "a much longer"));
    CHECK(text_named(narrow, "category name"));
    CHECK(text_named(narrow, "short"));
    r.width = 2000;
    const std::vector<plot::Text> wide = texts(lay_out(f, r));
    CHECK(text_named(wide, "a much longer category name"));
}

TEST_CASE("category names still too wide once wrapped take two rows; an annotation stays in the frame") {
    labs::Series bars;
    bars.kind = labs::SeriesKind::Bars;
    bars.x = {0, 1, 2, 3, 4, 5};
    bars.y = {1, 2, 3, 4, 5, 6};
    labs::Figure f = figure_of({bars});
    f.x_axis.categories = {"per tensor", "MX floor", "MX RCEIL", "blockwise", "NVFP4", "rowwise"};
    f.annotations.push_back({2, 3, "the training panel trains mx-rceil"});
    plot::LayoutRequest r;
    r.width = 260;
    r.height = 300;
    r.unit = 10;
    const plot::FigureLayout l = lay_out(f, r);
    const std::vector<plot::Text> ts = texts(l);
    const plot::Text* blockwise = text_named(ts, "blockwise");
    const plot::Text* nvfp4 = text_named(ts, "NVFP4");
    const plot::Text* rowwise = text_named(ts, "rowwise");
    REQUIRE(blockwise);
    REQUIRE(nvfp4);
    REQUIRE(rowwise);
    // The 4th and 6th are a row below the 5th, and the 5th clears its neighbours' row.
    CHECK(blockwise->baseline_start.y > nvfp4->baseline_start.y);
    CHECK(rowwise->baseline_start.y == blockwise->baseline_start.y);
    CHECK(rowwise->baseline_start.x >
          blockwise->baseline_start.x + FixedMetrics().width("blockwise", blockwise->size, false));
    const plot::Text* note = text_named(ts, "the training panel trains mx-rceil");
    REQUIRE(note);
    CHECK(note->baseline_start.x >= l.mapping.frame.x);
    // Wide enough for every name on one row: no stagger.
    r.width = 2000;
    const std::vector<plot::Text> wide = texts(lay_out(f, r));
    CHECK(text_named(wide, "blockwise")->baseline_start.y == text_named(wide, "NVFP4")->baseline_start.y);
}

TEST_CASE("a heatmap has a colour bar beside the frame; its cells are hit targets") {
    labs::Series h;
    h.kind = labs::SeriesKind::Heatmap;
    h.rows = 2;
    h.columns = 3;
    h.values = {0, 1, 2, 3, 4, 5};
    h.value_label = "error";
    h.x = {0, 3};
    h.y = {0, 2};
    plot::LayoutRequest r;
    r.width = 800;
    r.height = 500;
    r.unit = 12;
    r.hit_targets = true;
    labs::Figure f = figure_of({h});
    const plot::FigureLayout l = lay_out(f, r);
    const double frame_right = l.mapping.frame.x + l.mapping.frame.width;
    int bar_steps = 0;
    for (const plot::Primitive& p : l.primitives)
        if (const auto* path = std::get_if<plot::Path>(&p))
            bar_steps += path->abutting && path->parts.size() == 1 && path->parts[0].rect.x > frame_right;
    CHECK(bar_steps == 64);
    const std::vector<plot::Text> ts = texts(l);
    const plot::Text* label = text_named(ts, "error");
    REQUIRE(label);
    CHECK(label->vertical);
    REQUIRE(l.hit_targets.size() == 6);
    // The cell of row 1, column 2 holds 5.
    const plot::HitTarget& cell = l.hit_targets[5];
    const plot::Point centre{cell.area.x + cell.area.width / 2, cell.area.y + cell.area.height / 2};
    const auto found = plot::nearest_target(l.hit_targets, centre, 1);
    REQUIRE(found);
    // Row and column by their axes: the cell's centre on each (a category where there are some).
    CHECK(plot::hover_text(f, *found) == "y = 1.5, x = 2.5\nerror = 5");
    f.y_axis.categories = {"weight", "input"};
    CHECK(plot::hover_text(f, *found) == "input, x = 2.5\nerror = 5");
}

TEST_CASE("the hover text names the nearest point within reach, with the axes' labels") {
    labs::Figure f = figure_of({labs::line("loss", {0, 1, 2}, {5, 6, 7}, 0)});
    plot::LayoutRequest r;
    r.width = 800;
    r.height = 500;
    r.unit = 12;
    r.hit_targets = true;
    const plot::FigureLayout l = lay_out(f, r);
    REQUIRE(l.hit_targets.size() == 3);
    const plot::Point near{l.mapping.px(1) + 3, l.mapping.py(6) - 2};
    const auto t = plot::nearest_target(l.hit_targets, near, 12);
    REQUIRE(t);
    CHECK(t->index == 1);
    CHECK(plot::hover_text(f, *t) == "loss\nx = 1\ny = 6");  // the axes' labels are "x" and "y"
    f.x_axis.label = "step";
    f.y_axis.label = "";
    CHECK(plot::hover_text(f, *t) == "loss\nstep = 1\ny = 6");
    // A bar on a category axis names its category, not its position.
    labs::Series bars;
    bars.kind = labs::SeriesKind::Bars;
    bars.name = "FP8";
    bars.x = {0.2, 1.2};
    bars.y = {1.5, 1.7};
    labs::Figure b = figure_of({bars});
    b.x_axis.categories = {"1 token", "8192 tokens"};
    b.y_axis.label = "speedup";
    CHECK(plot::hover_text(b, plot::HitTarget{{}, 0, 1}) == "FP8\n8192 tokens\nspeedup = 1.7");
    CHECK_FALSE(plot::nearest_target(l.hit_targets, {near.x + 200, near.y}, 12));
}

TEST_CASE("a view range replaces the fitted one") {
    labs::Figure f = figure_of({labs::line("a", {0, 10}, {0, 10}, 0)});
    plot::LayoutRequest r;
    r.width = 800;
    r.height = 500;
    r.unit = 12;
    r.x_range = plot::AxisRange{2, 4};
    const plot::FigureLayout l = lay_out(f, r);
    CHECK(l.mapping.tx_lo == 2);
    CHECK(l.mapping.tx_hi == 4);
    CHECK(l.mapping.px(2) == doctest::Approx(l.mapping.frame.x));
    CHECK(l.mapping.px(4) == doctest::Approx(l.mapping.frame.x + l.mapping.frame.width));
}

TEST_CASE("row names on the y axis closer than a line apart are thinned to every k-th, never overlapping") {
    labs::Series h;
    h.kind = labs::SeriesKind::Heatmap;
    h.rows = 18;
    h.columns = 4;
    h.values.assign(18 * 4, 1.0);
    h.x = {0, 4};
    h.y = {-0.5, 17.5};
    labs::Figure f = figure_of({h});
    for (int i = 0; i < 18; ++i) f.y_axis.categories.push_back("row " + std::to_string(i));
    const auto row_labels = [&](double height) {
        plot::LayoutRequest r;
        r.width = 600;
        r.height = height;
        r.unit = 12;
        std::vector<plot::Text> rows;
        for (const plot::Text& t : texts(lay_out(f, r)))
            if (t.text.starts_with("row ")) rows.push_back(t);
        return rows;
    };
    CHECK(row_labels(900).size() == 18);  // room for all
    const std::vector<plot::Text> thinned = row_labels(200);
    CHECK(thinned.size() < 18);
    CHECK(thinned.size() >= 4);
    REQUIRE(thinned.size() >= 2);
    CHECK(thinned.front().text == "row 0");
    for (std::size_t i = 1; i < thinned.size(); ++i)
        CHECK(std::abs(thinned[i].baseline_start.y - thinned[i - 1].baseline_start.y) >= thinned[i].size * 1.1);
}

TEST_CASE("a zero on a log axis is an open circle on the axis' floor with a tooltip, not a made-up tiny value") {
    labs::Figure f = figure_of({labs::line("error", {1, 2, 3}, {0.01, 0.0, 0.001}, 0)});
    f.y_axis.scale = labs::AxisScale::Log10;
    plot::LayoutRequest r;
    r.width = 800;
    r.height = 500;
    r.unit = 12;
    r.hit_targets = true;
    const plot::FigureLayout l = lay_out(f, r);
    REQUIRE(l.hit_targets.size() == 3);  // the zero is a target too
    const plot::HitTarget& zero = l.hit_targets[1];
    const double floor = l.mapping.frame.y + l.mapping.frame.height;
    CHECK(zero.area.y <= floor);
    CHECK(zero.area.y > floor - r.unit);  // on the floor, inside the frame
    int circles = 0;
    for (const plot::Path& p : series_paths(l))
        for (const auto& part : p.parts) circles += part.kind == SubPath::Kind::Circle && !p.fill;
    CHECK(circles == 1);
    CHECK(plot::hover_text(f, zero).find("exactly zero") != std::string::npos);
    CHECK(plot::hover_text(f, l.hit_targets[0]).find("zero") == std::string::npos);
}

TEST_CASE("six solid lines differ in style as well as colour; four keep colour alone") {
    const auto styles = [](int lines) {
        std::vector<labs::Series> series;
        for (int i = 0; i < lines; ++i)
            series.push_back(labs::line("run " + std::to_string(i), {0, 1}, {double(i), double(i + 1)}, i));
        std::vector<double> dash_on;
        for (const plot::Path& p : series_paths(lay_out(figure_of(series))))
            if (p.stroke) dash_on.push_back(p.stroke->dash_on);
        return dash_on;
    };
    const std::vector<double> four = styles(4);
    CHECK(std::count(four.begin(), four.end(), 0.0) == 4);
    const std::vector<double> six = styles(6);
    REQUIRE(six.size() == 6);
    CHECK(std::count(six.begin(), six.end(), 0.0) == 2);  // solid, dotted, dashed, solid, dotted, dashed
    CHECK(six[1] != six[2]);
    CHECK(six[1] > 0);
    CHECK(six[2] > 0);
}

TEST_CASE("texts drawn over each other are counted; a legend under a narrow plot wraps its names inside the figure") {
    plot::FigureLayout two;
    two.primitives.push_back(plot::Text{"label", {10, 20}, 12});
    two.primitives.push_back(plot::Text{"label", {12, 21}, 12});
    two.primitives.push_back(plot::Text{"far away", {300, 200}, 12});
    CHECK(plot::overlapping_texts(two, FixedMetrics()) == 1);

    labs::Figure f;
    f.title = "Many long names";
    f.x_axis = {"step", labs::AxisScale::Linear};
    f.y_axis = {"loss", labs::AxisScale::Linear};
    for (int k = 0; k < 6; ++k) {
        labs::Series s =
            labs::line("a series name long enough to run far past a narrow figure's edge " + std::to_string(k),
                       {0, 1, 2, 3}, {1, 2, 3, 4}, k);
        f.series.push_back(s);
    }
    plot::LayoutRequest r;
    r.width = 300;
    r.height = 700;
    r.unit = 12;
    const plot::FigureLayout l = plot::layout_figure(f, r, FixedMetrics());
    REQUIRE(l.legend.size() == 6);
    for (const plot::Text& t : texts(l))
        CHECK(t.baseline_start.x + FixedMetrics().width(t.text, t.size, t.bold) <= 300 + 1e-9);
    CHECK(plot::overlapping_texts(l, FixedMetrics()) == 0);
}

TEST_CASE("a legend avoids a corner that a line crosses with no point inside it, and the check counts such a line") {
    labs::Figure f;
    f.title = "Crossings";
    f.x_axis = {"x", labs::AxisScale::Linear};
    f.y_axis = {"y", labs::AxisScale::Linear};
    // Two lines whose points lie outside the shown range: one cuts the top-right corner,
    // the other the bottom-left; the top-left corner is free.
    f.series.push_back(labs::line("top right", {7, 12}, {12, 7}, 0));    // x + y = 19
    f.series.push_back(labs::line("bottom left", {-2, 3}, {3, -2}, 1));  // x + y = 1
    plot::LayoutRequest r;
    r.width = 600;
    r.height = 400;
    r.unit = 12;
    r.x_range = plot::AxisRange{0, 10};
    r.y_range = plot::AxisRange{0, 10};
    plot::FigureLayout l = plot::layout_figure(f, r, FixedMetrics());
    REQUIRE(l.legend.size() == 2);
    CHECK(l.legend_below == 0);
    const plot::Rect& frame = l.mapping.frame;
    CHECK(l.legend_box.x < frame.x + frame.width / 2);   // the left half
    CHECK(l.legend_box.y < frame.y + frame.height / 2);  // the top half
    CHECK(plot::legend_covers_data(f, l) == 0);
    // The same box moved to the top-right corner covers a segment of the first line.
    l.legend_box.x = frame.x + frame.width - l.legend_box.width - 6;
    CHECK(plot::legend_covers_data(f, l) == 1);
    CHECK(plot::legend_covers_data(f, l, {"top right"}) == 0);  // a hidden series is not drawn
}
