// SPDX-License-Identifier: Apache-2.0
// The flushed-to-zero heatmap of a run's per-tensor numerics.
#include "labs/experiments/numerics_heatmap.hpp"

#include <algorithm>
#include <cstdint>
#include <map>
#include <utility>

namespace fp8lab::labs {

std::string short_tensor_name(const std::string& tensor) {
    std::string n = tensor.rfind("blocks.", 0) == 0 ? tensor.substr(7) : tensor;
    for (const auto& [from, to] :
         {std::pair<std::string, std::string>{".grad_output", " grad"}, {".input", " in"}, {".weight", " weight"}})
        if (n.size() >= from.size() && n.compare(n.size() - from.size(), from.size(), from) == 0)
            return n.substr(0, n.size() - from.size()) + to;
    return n;
}

Figure flushed_heatmap(const std::string& id, const std::vector<emu::TensorNumerics>& numerics, int steps) {
    // The tensors in the order of the first casts, each with one value per step.
    std::vector<std::string> names;
    std::map<std::string, std::vector<double>> flushed;
    for (const emu::TensorNumerics& n : numerics) {
        std::vector<double>& row = flushed[n.tensor];
        if (row.empty()) {
            names.push_back(n.tensor);
            row.assign(std::size_t(steps), 0.0);
        }
        if (n.step < std::uint64_t(steps))
            row[n.step] = 100.0 * double(n.flushed) / double(std::max<std::uint64_t>(1, n.elements));
    }
    Figure f;
    f.id = id;
    // Cell i spans [i - 0.5, i + 0.5]: each label and each step number at its cell's centre.
    f.x_axis = {"step (from 0)", AxisScale::Linear, -0.5, double(steps) - 0.5};
    f.y_axis = {"", AxisScale::Linear, -0.5, double(names.size()) - 0.5};
    Series heat;
    heat.kind = SeriesKind::Heatmap;
    heat.x = {-0.5, double(steps) - 0.5};  // the cells' extents
    heat.y = {-0.5, double(names.size()) - 0.5};
    heat.rows = int(names.size());
    heat.columns = steps;
    heat.value_label = "flushed (%)";  // short: the colour bar's label runs along the plot's height
    for (const std::string& n : names) {
        f.y_axis.categories.push_back(short_tensor_name(n));
        heat.values.insert(heat.values.end(), flushed[n].begin(), flushed[n].end());
    }
    f.series.push_back(std::move(heat));
    f.legend = false;
    return f;
}

}  // namespace fp8lab::labs
