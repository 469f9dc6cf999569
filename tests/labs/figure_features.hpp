// SPDX-License-Identifier: Apache-2.0
// What of a step's output the figure export draws differently: its figure and table features.
#pragma once

#include <set>
#include <string>

#include "emulator/base/enum_names.hpp"
#include "labs/framework/step_output.hpp"

namespace fp8lab::test {

// Each kind of series, axis scale, category axis, axis without ticks, annotation, dashed
// line, legend or none, table column type and column unit in the output, as names
// ("series band", "y log10", "table code"). The export and the plot layer take a code path
// per feature; the sanitizer tree exports only steps that together have every feature the
// whole catalog has (light_step_runs.hpp).
inline std::set<std::string> figure_features(const labs::StepOutput& out) {
    std::set<std::string> features;
    const auto axis = [&](const std::string& name, const labs::Axis& a) {
        features.insert(name + " " + std::string(enum_name(a.scale)));
        if (!a.categories.empty()) features.insert(name + " categories");
        if (!a.show_ticks) features.insert(name + " without ticks");
    };
    for (const labs::Figure& f : out.figures) {
        axis("x", f.x_axis);
        axis("y", f.y_axis);
        features.insert(f.legend ? "legend" : "no legend");
        if (!f.annotations.empty()) features.insert("annotations");
        for (const labs::Series& s : f.series) {
            features.insert("series " + std::string(enum_name(s.kind)));
            if (s.dashed) features.insert("dashed " + std::string(enum_name(s.kind)));
        }
    }
    for (const labs::Table& t : out.tables)
        for (const labs::Column& c : t.columns) {
            features.insert("table " + std::string(enum_name(c.type)));
            if (!c.unit.empty()) features.insert("table unit");
        }
    return features;
}

}  // namespace fp8lab::test
