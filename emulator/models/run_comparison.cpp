// SPDX-License-Identifier: Apache-2.0
// Variants trained over the same seeds and compared, paired (run_comparison.hpp).
#include "emulator/models/run_comparison.hpp"

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <stdexcept>

#include "emulator/base/quoted_input.hpp"
#include "emulator/io/json_writer.hpp"
#include "emulator/models/cpu_training.hpp"
#include "emulator/scaling/recipe.hpp"

namespace fp8lab::emu {

std::vector<RunVariant> variants_from_list(const Experiment& base, std::string_view list) {
    std::vector<RunVariant> variants;
    std::size_t start = 0;
    while (start <= list.size()) {
        const std::size_t comma = std::min(list.find(',', start), list.size());
        // Names as typed, without the spaces around them and in lower case (the tables print
        // "BF16"; the names are "bf16").
        std::string name(list.substr(start, comma - start));
        start = comma + 1;
        name.erase(0, name.find_first_not_of(" \t"));
        name.erase(name.find_last_not_of(" \t") + 1);
        for (char& ch : name) ch = char(std::tolower(static_cast<unsigned char>(ch)));
        if (name.empty())
            throw std::invalid_argument("--compare: an empty name in " + quoted_input(list) +
                                        " (two commas, or one at an end?)");
        Experiment e = base;
        if (const std::optional<Precision> p = parse_enum<Precision>(name); p && *p != Precision::Fp8) {
            e = with_precision(base, *p);
        } else if (const std::optional<Fp8Recipe> r = parse_enum<Fp8Recipe>(name)) {
            e = with_precision(base, Precision::Fp8);
            set_recipe(e, *r);  // with the element formats the recipe takes, as --recipe sets them
        } else {
            throw std::invalid_argument("--compare: " + quoted_input(name) +
                                        " is neither fp32 nor bf16 nor an FP8 recipe (" + enum_choices<Fp8Recipe>() +
                                        ")");
        }
        for (const RunVariant& v : variants)
            if (v.name == name) throw std::invalid_argument("--compare: " + quoted_input(name) + " is named twice");
        variants.push_back({name, e});
    }
    if (variants.size() < 2)
        throw std::invalid_argument("--compare: name at least two variants, the baseline first (bf16,delayed)");
    return variants;
}

RunComparison compare_runs(const std::vector<RunVariant>& variants, int seeds, const ComparisonProgress& progress) {
    if (seeds < 1) throw std::invalid_argument("a comparison needs at least one seed");
    RunComparison out;
    out.seeds = seeds;
    out.measure = "final loss";
    const double runs = double(variants.size()) * seeds;
    for (std::size_t i = 0; i < variants.size(); ++i) {
        ComparedVariant v{variants[i].name, {}, {}};
        for (int k = 0; k < seeds; ++k) {
            const TrainerResult r = train_on_cpu(with_seed(variants[i].experiment, k));
            v.finals.push_back(compared_loss(r));
            if (r.text && !r.text->validation.empty()) out.measure = "validation loss";
            const double done = (double(i) * seeds + k + 1) / runs;
            if (progress && !progress(done, v.name + ", seed " + std::to_string(k + 1) + " of " +
                                                std::to_string(seeds) + ": " + std::to_string(v.finals.back())))
                throw std::runtime_error("cancelled");
        }
        v.against_baseline = compare_paired(i == 0 ? v.finals : out.variants[0].finals, v.finals);
        out.variants.push_back(std::move(v));
    }
    return out;
}

std::string comparison_table(const RunComparison& c) {
    // Cells first, then columns padded to their widest cell: a table that lines up in a
    // terminal, the finding last (it may run long).
    std::vector<std::vector<std::string>> rows = {{"variant", "mean " + c.measure, "over " + c.variants.at(0).name,
                                                   "95% interval", "seeds worse", "seeds better", "finding"}};
    int decimals = 1;  // shared by the rows, so that neighbours read alike
    for (std::size_t i = 1; i < c.variants.size(); ++i)
        decimals = std::max(decimals, percent_decimals(c.variants[i].against_baseline));
    for (std::size_t i = 0; i < c.variants.size(); ++i) {
        const ComparedVariant& v = c.variants[i];
        const PairedComparison& p = v.against_baseline;
        char mean[64], ratio[64];
        std::snprintf(mean, sizeof mean, "%.6g", spread_of(v.finals).mean);
        std::snprintf(ratio, sizeof ratio, "%.4f", p.mean_ratio);
        rows.push_back({v.name, mean, ratio,
                        i == 0 || !p.has_interval()
                            ? std::string("-")
                            : percent_text(p.low, decimals) + " to " + percent_text(p.high, decimals),
                        std::to_string(p.worse), std::to_string(p.better),
                        i == 0 ? std::string("baseline") : paired_words(p, "", c.variants[0].name, decimals)});
    }
    std::vector<std::size_t> widths(rows[0].size(), 0);
    for (const auto& row : rows)
        for (std::size_t k = 0; k < row.size(); ++k) widths[k] = std::max(widths[k], row[k].size());
    std::string text;
    for (const auto& row : rows) {
        for (std::size_t k = 0; k < row.size(); ++k) {
            text += row[k];
            if (k + 1 < row.size()) text += std::string(widths[k] - row[k].size() + 2, ' ');
        }
        text += "\n";
    }
    return text;
}

std::string comparison_json(const RunComparison& c) {
    json::JsonWriter w;
    w.begin_object().key("measure").value(c.measure).key("seeds").value(c.seeds);
    w.key("baseline").value(c.variants.at(0).name);
    w.key("interval").value("95%, Student's t on the per-seed log-ratios");
    w.key("variants").begin_array();
    for (std::size_t i = 0; i < c.variants.size(); ++i) {
        const ComparedVariant& v = c.variants[i];
        const PairedComparison& p = v.against_baseline;
        w.begin_object().key("name").value(v.name).key("finals").begin_array();
        for (double f : v.finals) w.value(f);
        w.end_array().key("ratios").begin_array();
        for (double r : p.ratios) w.value(r);
        w.end_array();
        w.key("mean_ratio").value(p.mean_ratio).key("low").value(p.low).key("high").value(p.high);
        w.key("worse").value(p.worse).key("better").value(p.better).key("differs").value(p.differs());
        w.key("finding").value(i == 0 ? std::string("baseline") : paired_words(p, v.name, c.variants[0].name));
        w.end_object();
    }
    w.end_array().end_object();
    return w.text() + "\n";
}

}  // namespace fp8lab::emu
