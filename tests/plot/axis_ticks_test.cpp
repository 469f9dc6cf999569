// SPDX-License-Identifier: Apache-2.0
// Tick placement: nice linear steps, powers on log axes, inside one decade, symlog.
#include <doctest/doctest.h>

#include <algorithm>

#include "app/plot/axis_ticks.hpp"

using namespace fp8lab;

namespace {

std::vector<double> values(const std::vector<plot::Tick>& ticks) {
    std::vector<double> v;
    for (const plot::Tick& t : ticks) v.push_back(t.value);
    return v;
}

labs::Axis axis(labs::AxisScale scale) {
    labs::Axis a;
    a.scale = scale;
    return a;
}

}  // namespace

TEST_CASE("linear axes get 1/2/5 steps with labels as precise as the step") {
    const auto t = plot::make_ticks(axis(labs::AxisScale::Linear), {0, 255}, 6);
    CHECK(values(t) == std::vector<double>{0, 50, 100, 150, 200, 250});
    const auto f = plot::make_ticks(axis(labs::AxisScale::Linear), {0.1, 0.32}, 5);
    REQUIRE(!f.empty());
    CHECK(f.front().label == "0.10");
    CHECK(f[1].label == "0.15");
    // A step of 2.5 x 10^k needs one more decimal than 10^k: 1.025, not 1.03.
    const auto q = plot::make_ticks(axis(labs::AxisScale::Linear), {1.0, 1.125}, 6);
    REQUIRE(q.size() >= 3);
    CHECK(q[1].value == doctest::Approx(1.025));
    CHECK(q[1].label == "1.025");
}

TEST_CASE("log axes: powers of ten or two, with 2 and 5 added near one decade") {
    const auto t = plot::make_ticks(axis(labs::AxisScale::Log10), {1e-6, 1}, 7);
    CHECK(t.front().label == "10");
    CHECK(t.front().superscript == "-6");
    CHECK(t.back().label == "1");
    const auto two = plot::make_ticks(axis(labs::AxisScale::Log2), {1.0 / 512, 448}, 7);
    CHECK(two.front().label == "2");
    CHECK(std::stoi(two.front().superscript) >= -9);  // thinned to every other power
    CHECK(std::stoi(two.front().superscript) <= -7);
    CHECK(two.size() >= 4);
    const auto decade = plot::make_ticks(axis(labs::AxisScale::Log10), {0.03, 1}, 6);
    CHECK(values(decade) == std::vector<double>{0.05, 0.1, 0.2, 0.5, 1});
    // More than a decade wide with only one power of ten inside: ticks reach the bottom too.
    const auto wide = plot::make_ticks(axis(labs::AxisScale::Log10), {0.02, 0.85}, 6);
    CHECK(values(wide) == std::vector<double>{0.02, 0.05, 0.1, 0.2, 0.5});
    const auto inside = plot::make_ticks(axis(labs::AxisScale::Log10), {20, 80}, 6);
    CHECK(inside.size() >= 3);  // no power of ten inside: nice linear values instead
    CHECK(inside.front().value >= 20);
    CHECK(inside.back().value <= 80);
}

TEST_CASE("symlog axes put 0 in the middle and keep labels apart") {
    labs::Axis a = axis(labs::AxisScale::SymLog);
    a.linear_threshold = 0.01;
    const auto t = plot::make_ticks(a, {-60000, 60000}, 6);
    const auto v = values(t);
    CHECK(std::find(v.begin(), v.end(), 0.0) != v.end());
    CHECK(std::find(v.begin(), v.end(), 0.01) == v.end());  // too close to 0 to label
    CHECK(std::find(v.begin(), v.end(), 10000.0) != v.end());
    CHECK(std::find(v.begin(), v.end(), -10000.0) != v.end());
}

TEST_CASE("fitted ranges ignore what a log axis cannot show, and honour limits") {
    const plot::AxisRange r = plot::fit_range(axis(labs::AxisScale::Log2), {0, -1, 1, 1024}, 0);
    CHECK(r.lo == doctest::Approx(1));
    CHECK(r.hi == doctest::Approx(1024));
    labs::Axis limited = axis(labs::AxisScale::Linear);
    limited.min = 0;
    limited.max = 2;
    const plot::AxisRange l = plot::fit_range(limited, {5, 6});
    CHECK(l.lo == 0);
    CHECK(l.hi == 2);
}
