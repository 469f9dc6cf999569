// SPDX-License-Identifier: Apache-2.0
// Running a step: its logic computes the output, its text titles each figure and table.
#include <stdexcept>

#include "emulator/base/quoted_input.hpp"
#include "labs/framework/lab.hpp"
#include "labs/framework/placeholders.hpp"

namespace fp8lab::labs {
namespace {

// The item's title from the step's words: an item the code titled itself (an experiment
// shared beyond one step) keeps its title; any other needs a declared title and every
// value that title declares.
template <typename Item>
void give_title(const Step& step, const char* kind, Item& item) {
    if (!item.title.empty()) return;
    const std::string key = std::string(kind) + " " + (item.title_key.empty() ? item.id : item.title_key);
    const auto words = step.titles.find(key);
    if (words == step.titles.end())
        throw std::logic_error("step " + emu::quoted_input(step.logic.id) + " made a " + kind + " titled " +
                               emu::quoted_input(key) + ", which it does not declare");
    item.title = render_placeholders(words->second, item.title_values);
}

}  // namespace

StepOutput Step::run(const Parameters& parameters, RunContext& context) const {
    StepOutput out = logic.run(parameters, context);
    for (Figure& f : out.figures) give_title(*this, "figure", f);
    for (Table& t : out.tables) give_title(*this, "table", t);
    return out;
}

}  // namespace fp8lab::labs
