// An exercise: a prompt, an answer type, and a check that recognises common mistakes.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace fp8lab::labs {

enum class AnswerType { Number, Text, Choice };

struct Feedback {
    bool correct = false;
    std::string hint;  // on a wrong answer: chosen by the mistake the check recognised
};

// A wrong answer that a check recognises, and what to tell the student.
struct KnownMistake {
    double value;
    std::string hint;
};

struct Exercise {
    std::string prompt;
    AnswerType type = AnswerType::Number;
    std::vector<std::string> choices;  // Choice
    std::string answer_text;           // the answer as revealed
    std::function<Feedback(const std::string& answer)> check;
};

// A numeric exercise: correct within a relative tolerance, or to the digits the student
// gave when they gave at least three (1.4933 for 448/300); a wrong answer that matches a
// known mistake the same way gets its hint, anything else `otherwise`. Unparseable text
// gets a hint saying what a number looks like. Accepts 448, 4.48e2, 0x1.cp+8, 2^-9 style
// powers and fractions of those (448/300, 1/2^6).
Exercise numeric_exercise(std::string prompt, double answer, std::vector<KnownMistake> mistakes, std::string otherwise,
                          double tolerance = 1e-9);

// A multiple-choice exercise: the index of the right choice; hints per wrong choice.
Exercise choice_exercise(std::string prompt, std::vector<std::string> choices, std::size_t answer,
                         std::vector<std::string> hints);

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
