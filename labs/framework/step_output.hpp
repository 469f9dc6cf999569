// SPDX-License-Identifier: Apache-2.0
// What running a step produces: figures, tables, metrics, code listings and short notes.
#pragma once

#include <string>
#include <vector>

#include "labs/framework/answer_outputs.hpp"
#include "labs/framework/figure.hpp"
#include "labs/framework/table.hpp"

namespace fp8lab::labs {

// Code a student can copy into their own training: shown as it is, in a monospace font.
struct CodeListing {
    std::string id;        // a file-name-like key: "te", "pytorch"
    std::string title;     // what it is, in the lab's words
    std::string language;  // "python" or "shell"
    std::string code;
};

struct StepOutput {
    std::vector<Figure> figures;
    std::vector<Table> tables;
    std::vector<Metric> metrics;
    std::vector<CodeListing> listings;
    std::vector<std::string> notes;  // e.g. which backend ran, what was skipped and why
    AnswerOutputs gives_answer;      // hidden from a student until the exercise is solved
};

}  // namespace fp8lab::labs
