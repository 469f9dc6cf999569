// SPDX-License-Identifier: Apache-2.0
// Lab and step selection with messages that list what exists.
#include "app/cli/lab_selection.hpp"

#include <algorithm>
#include <cstdio>

#include "app/options/usage_error.hpp"
#include "gpu/probe.hpp"
#include "emulator/base/quoted_input.hpp"
#include "labs/logic/curriculum.hpp"

namespace fp8lab::cli {
using options::UsageError;

const labs::Catalog& lab_catalog() {
    static const labs::Catalog catalog = [] {
        labs::Catalog c = labs::load_curriculum();
        for (const labs::TextError& e : c.errors) std::fprintf(stderr, "fp8lab: lab text: %s\n", e.describe().c_str());
        return c;
    }();
    return catalog;
}

namespace {

std::vector<SelectedStep> select_one(const labs::Catalog& catalog, const std::string& selector) {
    std::vector<SelectedStep> selected;
    const auto slash = selector.find('/');
    const std::string lab_id = selector.substr(0, slash);
    const std::string step_id = slash == std::string::npos ? "" : selector.substr(slash + 1);
    for (const labs::Lab& lab : catalog.labs) {
        if (!lab_id.empty() && lab.id != lab_id) continue;
        for (const labs::Step& step : lab.steps)
            if (step_id.empty() || step.logic.id == step_id) selected.push_back({&lab, &step});
        if (!step_id.empty() && selected.empty()) {
            std::string known;
            for (const labs::Step& s : lab.steps) known += (known.empty() ? "" : ", ") + s.logic.id;
            throw UsageError("lab " + emu::quoted_input(lab_id) + " has no step " + emu::quoted_input(step_id) +
                             " (its steps: " + known + ")");
        }
    }
    if (selected.empty()) {
        std::string known;
        for (const labs::Lab& l : catalog.labs) known += (known.empty() ? "" : ", ") + l.id;
        throw UsageError("no lab " + emu::quoted_input(lab_id) + " (labs: " + (known.empty() ? "none loaded" : known) +
                         ")");
    }
    return selected;
}

}  // namespace

std::vector<SelectedStep> all_steps(const labs::Catalog& catalog) { return select_one(catalog, ""); }

std::vector<SelectedStep> select_steps(const labs::Catalog& catalog, const std::string& selectors) {
    // An empty selection was typed (`--lab ''`, a variable that was not set): not "all".
    if (selectors.empty()) throw UsageError("an empty selection names no lab or step (see 'fp8lab labs')");
    if (selectors.find(',') == std::string::npos) return select_one(catalog, selectors);
    std::vector<SelectedStep> selected;
    std::size_t start = 0;
    while (start <= selectors.size()) {
        const std::size_t comma = std::min(selectors.find(',', start), selectors.size());
        const std::string selector = selectors.substr(start, comma - start);
        // An empty item would select everything: in a list it is a typo ("a,,b"), refused.
        if (selector.empty()) throw UsageError("an empty item in the list " + emu::quoted_input(selectors));
        for (const SelectedStep& s : select_one(catalog, selector))
            if (std::none_of(selected.begin(), selected.end(), [&](const SelectedStep& t) { return t.step == s.step; }))
                selected.push_back(s);
        start = comma + 1;
    }
    return selected;
}

labs::Backend backend_option(const std::string& text) {
    if (text == "cpu") return labs::Backend::Cpu;
    if (text != "gpu") throw UsageError("--backend: " + emu::quoted_input(text) + " is not a backend; use cpu or gpu");
    const gpu::ProbeResult probe = gpu::probe();
    if (!probe.ready) throw UsageError("--backend gpu: no usable GPU: " + probe.reason);
    return labs::Backend::Gpu;
}

void require_backend(const SelectedStep& s, labs::Backend backend) {
    if (!s.step->supports(backend))
        throw UsageError("step " + s.lab->id + "/" + s.step->logic.id + " does not run on the " +
                         std::string(labs::backend_name(backend)) + " backend");
}

std::vector<labs::Parameters> step_parameters(const std::vector<SelectedStep>& steps,
                                              const std::vector<std::string>& sets) {
    std::vector<labs::Parameters> params;
    for (const SelectedStep& s : steps) params.emplace_back(s.step->logic.parameters);
    for (const std::string& set : sets) {
        const auto eq = set.find('=');
        if (eq == std::string::npos || eq == 0)
            throw UsageError("--set " + emu::quoted_input(set) + ": write NAME=VALUE");
        const std::string name = set.substr(0, eq), value = set.substr(eq + 1);
        bool used = false;
        for (labs::Parameters& p : params) {
            const bool has = std::any_of(p.schema().begin(), p.schema().end(),
                                         [&](const labs::ParameterSpec& spec) { return spec.name == name; });
            if (!has && steps.size() > 1) continue;
            try {
                p.set_text(name, value);
            } catch (const labs::ParameterError& e) {
                throw UsageError(std::string("--set ") + set + ": " + e.what());
            }
            used = true;
        }
        if (!used)
            throw UsageError("--set " + set + ": no selected step has a parameter " + emu::quoted_input(name) + "");
    }
    return params;
}

}  // namespace fp8lab::cli
