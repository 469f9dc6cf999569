// SPDX-License-Identifier: Apache-2.0
// Which parts of a step's output give its exercise's answer away, and the output as a
// student sees it until the exercise is solved or its answer revealed.
#pragma once

#include <string>
#include <utility>
#include <vector>

namespace fp8lab::labs {

struct StepOutput;

// Filled by the step's run with what this run's output shows of the answer (a step whose
// settings are not the exercise's shows nothing of it and names nothing).
struct AnswerOutputs {
    std::vector<std::string> metrics;                                // by name
    std::vector<std::pair<std::string, std::string>> table_columns;  // (table id, column name)
    std::vector<std::string> tables;                                 // whole tables, by id
    std::vector<std::string> figures;                                // whole figures, by id
    std::vector<std::string> figure_annotations;                     // the annotations of these figures

    bool empty() const {
        return metrics.empty() && table_columns.empty() && tables.empty() && figures.empty() &&
               figure_annotations.empty();
    }
};

// The output with every part named in out.gives_answer hidden: a hidden column's cells
// read "hidden", hidden metrics, tables, figures and annotations are left out, and one note
// says what is hidden and how to see it. An output that names nothing comes back as it is.
StepOutput with_answer_hidden(const StepOutput& out);

}  // namespace fp8lab::labs
