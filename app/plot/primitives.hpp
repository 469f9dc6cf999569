// SPDX-License-Identifier: Apache-2.0
// The positioned shapes a laid-out figure is made of: what a renderer back end draws, in
// order, knowing nothing of axes, series or legends.
#pragma once

#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "labs/framework/figure.hpp"

namespace fp8lab::plot {

struct Point {
    double x = 0, y = 0;
};

// x, y is the top-left corner when width and height are positive; they are kept as
// computed (a reversed axis gives a negative width) so that every back end draws the same
// rectangle from the same numbers.
struct Rect {
    double x = 0, y = 0, width = 0, height = 0;
    bool contains(Point p) const;
};

struct Paint {
    labs::Rgb colour;
    double alpha = 1;
};

struct Stroke {
    Paint paint = {};
    double width = 1;
    double dash_on = 0, dash_off = 0;  // both 0: a solid line
    bool dashed() const { return dash_on > 0; }
};

// One piece of a path.
struct SubPath {
    enum class Kind {
        Open,       // a polyline through `points` (one point draws nothing)
        Closed,     // a polygon
        Rectangle,  // `rect`
        Circle,     // `points[0]` with `radius`
        Strip,      // the band between `points` (upper edge) and `lower`, point by point
    };
    Kind kind = Kind::Open;
    std::vector<Point> points = {};
    std::vector<Point> lower = {};  // Strip only
    Rect rect = {};                 // Rectangle only
    double radius = 0;              // Circle only
};

// Subpaths filled, stroked, or both (the fill first), as one shape.
struct Path {
    std::vector<SubPath> parts;
    std::optional<Paint> fill = {};
    std::optional<Stroke> stroke = {};
    // The shape's edges meet a neighbour's (bars, cells): a renderer that would leave a
    // seam where two anti-aliased edges meet may draw it without anti-aliasing.
    bool abutting = false;
};

struct Text {
    std::string text;
    Point baseline_start;  // the left end of the baseline (the bottom end when vertical)
    double size = 1;
    bool bold = false;
    Paint paint = {};
    bool vertical = false;  // turned a quarter counter-clockwise: reads bottom to top
};

struct Clear {  // the whole figure, in one colour
    labs::Rgb colour;
};
struct ClipBegin {  // until the matching ClipEnd, nothing is drawn outside `rect`
    Rect rect;
};
struct ClipEnd {};

using Primitive = std::variant<Clear, Path, Text, ClipBegin, ClipEnd>;

}  // namespace fp8lab::plot
