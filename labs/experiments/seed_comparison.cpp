// SPDX-License-Identifier: Apache-2.0
// Runs compared over the same seeds (seed_comparison.hpp).
#include "labs/experiments/seed_comparison.hpp"

#include <algorithm>
#include <cstdio>

#include "labs/framework/table.hpp"

namespace fp8lab::labs {

std::string spread_text(const SeedSpread& s) {
    if (s.seeds < 2) return number_text(s.mean);
    return number_text(s.mean) + " (" + number_text(s.least) + " to " + number_text(s.largest) + " over " +
           std::to_string(s.seeds) + " seeds)";
}

std::string lower_than_bf16_note(const std::string& name, const PairedComparison& c, const RunMeasures* bf16_measures,
                                 const RunMeasures* run_measures) {
    if (!c.differs() || c.high >= 1.0) return "";
    const std::string said = name + " ends lower than BF16: " + paired_words(c, "", "BF16") +
                             ". A lower training loss is not more accurate arithmetic. ";
    if (!bf16_measures || !run_measures)
        return said +
               "The CPU emulator measures what the two runs did differently (gradients lost to zero, how far the "
               "weights moved); run the comparison there to see it.";
    const auto percent = [](double share) {  // three significant digits
        char text[32];
        std::snprintf(text, sizeof text, "%.3g%%", 100 * share);
        return std::string(text);
    };
    return said + "Measured, as the mean of the seeds: " + percent(run_measures->zero_gradients) +
           " of this run's gradient elements reached their GEMMs as zero (BF16 flushes none), and training moved its "
           "weights by " +
           percent(run_measures->weight_change) + " of their starting size, against " +
           percent(bf16_measures->weight_change) +
           " for BF16. Fewer gradients or other step sizes change what a short run reaches as much as precision "
           "does.";
}

Figure seed_ratio_figure(const std::string& baseline, const std::string& measure,
                         const std::vector<ComparedRun>& runs) {
    // One column a run, named in the legend (which wraps long names and moves under the plot
    // when it would cover data), not under the axis, where six long names collide.
    Figure f;
    f.id = "seed-ratios";
    f.title = "Each run's " + measure + " over " + baseline +
              "'s on the same seed (dots), with the 95% interval of "
              "their mean (bar)";
    const double columns = double(runs.size());
    f.x_axis.min = -0.6;
    f.x_axis.max = columns - 0.4;
    f.x_axis.show_ticks = false;
    f.x_axis.label = "runs, in the table's order";
    f.y_axis.label = measure + " / " + baseline + "'s";
    f.series.push_back(line("", {-0.6, columns - 0.4}, {1.0, 1.0}, 0));
    f.series.back().dashed = true;
    for (std::size_t i = 0; i < runs.size(); ++i) {
        const PairedComparison& c = runs[i].comparison;
        const double x = double(i);
        // The interval as a thin filled band (a line would take the series' dash pattern).
        Series bar{SeriesKind::Band, "", int(i % 7) + 1};
        bar.x = {x - 0.06, x + 0.06};
        bar.y = {c.low, c.low};
        bar.y_upper = {c.high, c.high};
        f.series.push_back(std::move(bar));
        std::vector<double> xs;
        const std::size_t n = c.ratios.size();
        for (std::size_t k = 0; k < n; ++k) xs.push_back(x + (n > 1 ? 0.3 * (double(k) / double(n - 1) - 0.5) : 0.0));
        f.series.push_back(scatter(runs[i].name, std::move(xs), c.ratios, int(i % 7) + 1));
    }
    return f;
}

std::vector<Series> curve_with_band(const std::string& name, const std::vector<std::vector<float>>& curves,
                                    int colour) {
    if (curves.empty()) return {};
    if (curves.size() == 1)
        return {line(name, step_numbers(curves[0].size()), {curves[0].begin(), curves[0].end()}, colour)};
    std::size_t steps = curves[0].size();
    for (const auto& c : curves) steps = std::min(steps, c.size());
    Series band{SeriesKind::Band, "", colour};
    Series mean = line(name, step_numbers(steps), {}, colour);  // the figure's note says what line and band are
    for (std::size_t i = 0; i < steps; ++i) {
        double sum = 0, least = curves[0][i], largest = curves[0][i];
        for (const auto& c : curves) {
            sum += c[i];
            least = std::min(least, double(c[i]));
            largest = std::max(largest, double(c[i]));
        }
        band.x.push_back(double(i));
        band.y.push_back(least);
        band.y_upper.push_back(largest);
        mean.y.push_back(sum / double(curves.size()));
    }
    return {std::move(band), std::move(mean)};
}

}  // namespace fp8lab::labs
