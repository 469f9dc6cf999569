// SPDX-License-Identifier: Apache-2.0
// A step's words kept beside its text: fenced blocks of "key: sentence" lines, "~~~exercise"
// (prompt, choices, hints), "~~~parameters" (each parameter's label and help) and "~~~titles"
// (its figures' and tables' titles), joined with what the code defines (ExerciseSpec,
// ParameterSpec, TitleSpec) into what a student sees.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "labs/framework/exercise.hpp"
#include "labs/framework/lab.hpp"
#include "labs/framework/lab_text.hpp"
#include "labs/framework/parameters.hpp"

namespace fp8lab::labs {

// A block's sentences by key, each with its line in the file. A line that starts with a
// space continues the sentence above it.
struct WordBlock {
    int line = 0;  // the opening fence
    std::map<std::string, std::pair<std::string, int>> words;
};

// A step's Markdown with its word blocks taken out (the student sees an exercise and
// parameters, not code), and the blocks. `first_line`: the file line of the Markdown's
// first line. Problems (a block left open, a line with no key, a key twice, a second block
// of a kind) go to `errors`.
struct StepWords {
    std::string markdown;
    std::optional<WordBlock> exercise;    // "prompt", "otherwise", "mistake KEY", "choice KEY", "hint KEY"
    std::optional<WordBlock> parameters;  // "label NAME", "help NAME"
    std::optional<WordBlock> titles;      // "figure ID", "table ID"
};
StepWords split_step_words(const std::string& file, const std::string& markdown, int first_line,
                           std::vector<TextError>& errors);

// The exercise from the code's spec and the text's words. Every key the spec needs must
// have its sentence (the right choice needs no hint, but may have one), and every sentence
// a key the spec knows; {{name}} takes the code's
// value of that name (spec.values), then format placeholders ({{E4M3.max}}) are filled.
// Problems go to `errors` with the line of the block or of the sentence; then there is no
// exercise.
std::optional<Exercise> join_exercise(const std::string& file, const ExerciseSpec& spec, const WordBlock& words,
                                      std::vector<TextError>& errors);

// Each parameter's label and help from the block ("label NAME", "help NAME"): every
// parameter needs both, and the block names no other. `heading_line`: the step's, for a
// step with parameters and no block. Problems go to `errors`.
void join_parameters(const std::string& file, int heading_line, std::vector<ParameterSpec>& parameters,
                     const std::optional<WordBlock>& words, std::vector<TextError>& errors);

// Each title's words by key, checked: every declared title needs its sentence, the block
// names no other, and a sentence quotes only the title's values and format placeholders.
// `heading_line`: the step's, for a step with titles and no block. Problems go to `errors`.
std::map<std::string, std::string> join_titles(const std::string& file, int heading_line,
                                               const std::vector<TitleSpec>& titles,
                                               const std::optional<WordBlock>& words, std::vector<TextError>& errors);

}  // namespace fp8lab::labs
