// SPDX-License-Identifier: Apache-2.0
// Parsing a lab's text file: front matter (id, title), then one "## Title {#id}" per step.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace fp8lab::labs {

// A problem in a lab's files, reported as file:line: message.
struct TextError {
    std::string file;
    int line = 0;
    std::string message;
    std::string describe() const;
};

struct StepText {
    std::string id, title, markdown;
    int line = 0;  // the heading's line
};

struct LabText {
    std::string file;
    std::string id, title;
    int id_line = 0;
    std::string introduction;
    int introduction_line = 0;  // the line of its first non-blank line
    std::vector<StepText> steps;
};

// Appends every problem to `errors`; returns what could be read.
//   ---
//   id: formats
//   title: FP8 formats
//   ---
//   Introduction (Markdown).
//   ## Bits to value {#bits-to-value}
//   The step's text (Markdown). Headings inside ``` fences are text, not steps.
LabText parse_lab_text(const std::string& file, std::string_view content, std::vector<TextError>& errors);

}  // namespace fp8lab::labs
