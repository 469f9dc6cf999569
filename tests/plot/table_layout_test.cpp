// SPDX-License-Identifier: Apache-2.0
// A table laid out as a slide image: inside its box, numbers right-aligned, long text and
// heads wrapped, shrunk to fit when it would not.
#include <doctest/doctest.h>

#include <string>
#include <variant>
#include <vector>

#include "app/plot/table_layout.hpp"
#include "tests/plot/fixed_metrics.hpp"

using namespace fp8lab;
using fp8lab::test::FixedMetrics;

namespace {

std::vector<plot::Text> texts(const plot::TableLayout& l) {
    std::vector<plot::Text> out;
    for (const plot::Primitive& p : l.primitives)
        if (const auto* t = std::get_if<plot::Text>(&p)) out.push_back(*t);
    return out;
}

const plot::Text& find(const std::vector<plot::Text>& all, const std::string& text) {
    for (const plot::Text& t : all)
        if (t.text == text) return t;
    FAIL("no text '" << text << "'");
    return all.front();
}

labs::Table small_table() {
    labs::Table t{"final", "Final losses", {}, {}};
    t.columns = {{"run"}, {"final loss", labs::ColumnType::Number}, {"over BF16", labs::ColumnType::Number, "x"}};
    t.rows = {{std::string("BF16"), 0.5, 1.0}, {std::string("FP8, delayed"), 0.25, 0.5}};
    return t;
}

}  // namespace

TEST_CASE("a table's text stays in its box; numbers end at their column's right edge, text starts at its left") {
    const FixedMetrics m;
    const plot::TableLayout l = plot::layout_table(small_table(), {1280, 720, 18}, m);
    CHECK(l.scale == 1);
    const std::vector<plot::Text> all = texts(l);
    for (const plot::Text& t : all) {
        CHECK(t.baseline_start.x >= 0);
        CHECK(t.baseline_start.x + m.width(t.text, t.size, t.bold) <= 1280 + 1e-9);
        CHECK(t.baseline_start.y <= 720);
    }
    const plot::Text &half = find(all, "0.5"), &quarter = find(all, "0.25");
    CHECK(half.baseline_start.x + m.width("0.5", half.size, false) ==
          doctest::Approx(quarter.baseline_start.x + m.width("0.25", quarter.size, false)));
    CHECK(find(all, "BF16").baseline_start.x == doctest::Approx(find(all, "FP8, delayed").baseline_start.x));
    CHECK(find(all, "(x)").bold);  // the head names its unit (wrapped under its name here)
    CHECK(find(all, "Final losses").bold);
}

TEST_CASE("long text cells wrap to several lines and make their row taller; a table too big is shrunk to fit") {
    const FixedMetrics m;
    labs::Table t = small_table();
    t.columns.push_back({"note"});
    const std::string sentence = "a sentence long enough that no slide column would hold it on one line of text";
    for (auto& row : t.rows) row.push_back(sentence);
    const plot::TableLayout wide = plot::layout_table(t, {1280, 720, 18}, m);
    int pieces = 0;
    for (const plot::Text& x : texts(wide)) pieces += sentence.find(x.text) != std::string::npos && x.text != sentence;
    CHECK(pieces >= 4);  // each row's note on two lines or more
    for (int k = 0; k < 60; ++k) t.rows.push_back({std::string("row"), double(k), 1.0, std::string("short")});
    const plot::TableLayout tall = plot::layout_table(t, {1280, 720, 18}, m);
    CHECK(tall.scale < 1);
    CHECK(tall.extent.y >= 0);
    CHECK(tall.extent.height <= 720 + 1e-9);
    CHECK(tall.extent.width <= 1280 + 1e-9);
    for (const plot::Text& x : texts(tall)) CHECK(x.baseline_start.y <= 720);
}
