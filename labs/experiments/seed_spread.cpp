// SPDX-License-Identifier: Apache-2.0
// Seed spreads (seed_spread.hpp).
#include "labs/experiments/seed_spread.hpp"

#include <algorithm>

#include "labs/framework/table.hpp"

namespace fp8lab::labs {

std::string spread_words(const SeedSpread& a, const SeedSpread& b) {
    const int seeds = std::min(a.seeds, b.seeds);
    if (seeds < 2) return "one seed: no spread to tell a difference from noise";
    const std::string of = " of " + std::to_string(seeds) + " seeds";
    if (!differs_beyond_spread(a, b)) return "within the spread" + of;
    return "beyond the spread" + of + (b.mean < a.mean ? " (lower)" : " (higher)");
}

std::string spread_text(const SeedSpread& s) {
    if (s.seeds < 2) return number_text(s.mean);
    return number_text(s.mean) + " (" + number_text(s.least) + " to " + number_text(s.largest) + " over " +
           std::to_string(s.seeds) + " seeds)";
}

std::string lower_than_bf16_note(const std::string& name, const SeedSpread& bf16, const SeedSpread& run,
                                 const RunMeasures* bf16_measures, const RunMeasures* run_measures) {
    if (std::min(bf16.seeds, run.seeds) < 2 || !differs_beyond_spread(bf16, run) || run.mean >= bf16.mean) return "";
    const std::string said = name + " ends lower than BF16, beyond the spread of " +
                             std::to_string(std::min(bf16.seeds, run.seeds)) +
                             " seeds. A lower training loss is not more accurate arithmetic: ";
    if (!bf16_measures || !run_measures)
        return said +
               "the CPU emulator measures what the two runs did differently (gradients lost to zero, how far the "
               "weights moved); run the comparison there to see it.";
    return said + "measured (mean of the seeds), " + number_text(100 * run_measures->zero_gradients) + "% of " + name +
           "'s gradient elements reached their GEMMs as zero (BF16 flushes none), and its weights moved " +
           number_text(run_measures->weight_change) + " of their starting size over the run against BF16's " +
           number_text(bf16_measures->weight_change) +
           ". Fewer gradients or other step sizes change what a short run reaches as much as precision does.";
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
