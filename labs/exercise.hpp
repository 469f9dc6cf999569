// An exercise: a prompt, an answer type, and a check that recognises common mistakes.
#pragma once

#include <functional>
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

// A numeric exercise: correct within a relative tolerance; a wrong answer near a known
// mistake gets its hint, anything else `otherwise`. Unparseable text gets a hint saying
// what a number looks like. Accepts 448, 4.48e2, 0x1.cp+8, and 2^-9 style powers.
Exercise numeric_exercise(std::string prompt, double answer, std::vector<KnownMistake> mistakes,
                          std::string otherwise, double tolerance = 1e-9);

// A multiple-choice exercise: the index of the right choice; hints per wrong choice.
Exercise choice_exercise(std::string prompt, std::vector<std::string> choices, std::size_t answer,
                         std::vector<std::string> hints);

// Parses a student's number (see numeric_exercise); false when it is not one.
bool parse_answer_number(const std::string& text, double& value);

}  // namespace fp8lab::labs
