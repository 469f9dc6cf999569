// SPDX-License-Identifier: Apache-2.0
// Hides what gives an exercise's answer away (answer_outputs.hpp).
#include "labs/framework/answer_outputs.hpp"

#include <algorithm>

#include "labs/framework/step_output.hpp"

namespace fp8lab::labs {
namespace {

template <class T>
bool named(const std::vector<T>& names, const T& name) {
    return std::find(names.begin(), names.end(), name) != names.end();
}

void append(std::string& list, const std::string& item) { list += (list.empty() ? "" : ", ") + item; }

}  // namespace

StepOutput with_answer_hidden(const StepOutput& out) {
    const AnswerOutputs& hide = out.gives_answer;
    if (hide.empty()) return out;
    StepOutput shown;
    shown.notes = out.notes;
    shown.listings = out.listings;  // code to copy: never an answer
    std::string hidden;
    for (const Metric& m : out.metrics) {
        if (named(hide.metrics, m.name))
            append(hidden, "the metric '" + m.name + "'");
        else
            shown.metrics.push_back(m);
    }
    for (const Table& t : out.tables) {
        if (named(hide.tables, t.id)) {
            append(hidden, "the table '" + t.title + "'");
            continue;
        }
        Table copy = t;
        std::string columns;  // named once a table: "'value' and 'formula' of 'TITLE'"
        int hidden_columns = 0;
        for (std::size_t c = 0; c < copy.columns.size(); ++c) {
            if (!named(hide.table_columns, std::pair{t.id, copy.columns[c].name})) continue;
            columns += (hidden_columns++ ? " and '" : "'") + copy.columns[c].name + "'";
            copy.columns[c].type = ColumnType::Text;
            copy.columns[c].unit.clear();
            for (auto& row : copy.rows) row[c] = std::string("hidden");
        }
        if (hidden_columns)
            append(hidden, (hidden_columns > 1 ? "the columns " : "the column ") + columns + " of '" + t.title + "'");
        shown.tables.push_back(std::move(copy));
    }
    for (const Figure& f : out.figures) {
        if (named(hide.figures, f.id)) {
            append(hidden, "the figure '" + f.title + "'");
            continue;
        }
        Figure copy = f;
        if (named(hide.figure_annotations, f.id) && !copy.annotations.empty()) {
            append(hidden, "the labels on '" + f.title + "'");
            copy.annotations.clear();
        }
        shown.figures.push_back(std::move(copy));
    }
    if (!hidden.empty())
        shown.notes.push_back("Hidden until the exercise is answered (or its answer revealed): " + hidden + ".");
    return shown;
}

}  // namespace fp8lab::labs
