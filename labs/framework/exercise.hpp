// SPDX-License-Identifier: Apache-2.0
// An exercise: what the code computes (ExerciseSpec: the answer, the values of recognised
// mistakes, the choices' keys) and, joined with the words of the lab's text (prompt,
// choices, hints; step_words.hpp), what a student sees and how an answer is checked.
#pragma once

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace fp8lab::labs {

enum class AnswerType { Number, Text, Choice };

struct Feedback {
    bool correct = false;
    std::string hint;  // on a wrong answer: chosen by the mistake the check recognised
};

struct Exercise {
    std::string prompt;
    AnswerType type = AnswerType::Number;
    std::vector<std::string> choices;  // Choice
    std::string answer_text;           // the answer as revealed
    std::function<Feedback(const std::string& answer)> check;
};

// What the code says of an exercise; its words come from the lab's text, where each key
// named here has its sentence ("mistake KEY", "choice KEY", "hint KEY").
struct ExerciseSpec {
    AnswerType type = AnswerType::Number;
    // Number: correct within a relative tolerance, or to the digits the student gave when
    // they gave at least three (1.4933 for 448/300); a wrong answer that matches a known
    // mistake the same way gets that mistake's hint, anything else the "otherwise" hint.
    double answer = 0;
    double tolerance = 1e-9;
    std::vector<std::pair<std::string, double>> mistakes;  // key, value (a key may serve several values)
    // Mistakes the text may have a sentence for though the code found none this time (what a
    // recording holds decides).
    std::vector<std::string> possible_mistakes;
    // Choice: the choices' keys in the order shown, and the right one's index.
    std::vector<std::string> choices;
    std::size_t right = 0;
    // Text for {{name}} in the words: what the code computed (a width read from a
    // recording, a formatted number). Format properties ({{E4M3.max}}) need no entry.
    std::map<std::string, std::string> values;
};

ExerciseSpec numeric_exercise(double answer, std::vector<std::pair<std::string, double>> mistakes,
                              double tolerance = 1e-9);
ExerciseSpec choice_exercise(std::vector<std::string> choice_keys, std::size_t right);

// The exercise a student sees, from the spec and its words. Numeric answers accept 448,
// 4.48e2, 0x1.cp+8, 2^-9 style powers and fractions of those (448/300, 1/2^6), inf and
// NaN (which match only an infinite or NaN value: a mistake's hint, never a finite answer),
// thousands grouped by commas (16,384) and otherwise a decimal comma (0,3125); unparseable
// text gets a hint saying what a number looks like. Choices are compared without case.
//   Number: words.at("prompt"), "otherwise", "mistake KEY" for every mistake.
//   Choice: "prompt", "choice KEY" for every choice, "hint KEY" for every wrong one.
Exercise make_exercise(const ExerciseSpec& spec, const std::map<std::string, std::string>& words);

// A student's number: its value, and for a decimal, half a unit of its last digit and its
// significant digits (0 for fractions, powers, hex floats and infinities, which are exact).
struct TypedNumber {
    double value = 0;
    double half_unit = 0;
    int significant_digits = 0;
};
std::optional<TypedNumber> parse_typed_number(const std::string& text);
// Parses a student's number (see numeric_exercise); false when it is not one.
bool parse_answer_number(const std::string& text, double& value);
// Whether the typed number is `target`: within the relative tolerance, or to its digits.
bool matches(const TypedNumber& typed, double target, double tolerance);

}  // namespace fp8lab::labs
