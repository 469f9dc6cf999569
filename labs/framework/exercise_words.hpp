// An exercise's words in its step's text: a fenced block "~~~exercise" of "key: sentence"
// lines, joined with what the code computes (ExerciseSpec) into the exercise a student sees.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "labs/framework/exercise.hpp"
#include "labs/framework/lab_text.hpp"

namespace fp8lab::labs {

// The block's sentences by key ("prompt", "otherwise", "mistake KEY", "choice KEY",
// "hint KEY"), each with its line in the file. A line that starts with a space continues
// the sentence above it.
struct ExerciseWords {
    int line = 0;  // the opening fence
    std::map<std::string, std::pair<std::string, int>> words;
};

// A step's Markdown with its exercise block taken out (the student sees the exercise as an
// exercise, not as code), and the block's words. `first_line`: the file line of the
// Markdown's first line. Problems (a block left open, a line with no key, a key twice, a
// second block) go to `errors`.
struct StepWords {
    std::string markdown;
    std::optional<ExerciseWords> exercise;
};
StepWords split_exercise_words(const std::string& file, const std::string& markdown, int first_line,
                               std::vector<TextError>& errors);

// The exercise from the code's spec and the text's words. Every key the spec needs must
// have its sentence (the right choice needs no hint, but may have one), and every sentence
// a key the spec knows; {{name}} takes the code's
// value of that name (spec.values), then format placeholders ({{E4M3.max}}) are filled.
// Problems go to `errors` with the line of the block or of the sentence; then there is no
// exercise.
std::optional<Exercise> join_exercise(const std::string& file, const ExerciseSpec& spec, const ExerciseWords& words,
                                      std::vector<TextError>& errors);

}  // namespace fp8lab::labs
