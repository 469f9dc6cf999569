// Checking answers: parse what the student typed, compare, and name the mistake.
#include "labs/exercise.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string_view>

namespace fp8lab::labs {
namespace {

std::string trim(const std::string& s) {
    const auto b = s.find_first_not_of(" \t\r\n");
    if (b == std::string::npos) return "";
    return s.substr(b, s.find_last_not_of(" \t\r\n") - b + 1);
}

bool parse_plain(const std::string& s, double& value) {
    if (s.empty()) return false;
    char* end = nullptr;
    value = std::strtod(s.c_str(), &end);
    return *end == '\0';
}

bool close(double a, double b, double tolerance) {
    if (std::isinf(a) || std::isinf(b)) return a == b;
    return std::abs(a - b) <= tolerance * std::max(std::abs(a), std::abs(b)) ||
           (a == 0 && b == 0);
}

}  // namespace

bool parse_answer_number(const std::string& text, double& value) {
    std::string s = trim(text);
    std::string digits;
    for (char c : s)
        if (c != ',' && c != '_' && c != ' ') digits += c;  // 1,024 and 1 024 read as 1024
    s = digits;
    if (s == "inf" || s == "Inf" || s == "infinity" || s == "+inf") return value = INFINITY, true;
    if (s == "-inf" || s == "-Inf") return value = -INFINITY, true;
    if (const auto caret = s.find('^'); caret != std::string::npos) {
        double base, exponent;
        if (!parse_plain(s.substr(0, caret), base) || !parse_plain(s.substr(caret + 1), exponent)) return false;
        value = std::pow(base, exponent);
        return std::isfinite(value);
    }
    return parse_plain(s, value) && !std::isnan(value);
}

Exercise numeric_exercise(std::string prompt, double answer, std::vector<KnownMistake> mistakes,
                          std::string otherwise, double tolerance) {
    Exercise e;
    e.prompt = std::move(prompt);
    e.type = AnswerType::Number;
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.17g", answer);
    e.answer_text = buf;
    e.check = [answer, mistakes = std::move(mistakes), otherwise = std::move(otherwise),
               tolerance](const std::string& text) -> Feedback {
        double value;
        if (!parse_answer_number(text, value))
            return {false, "Type a number, e.g. 448, 0.0625, 2^-6 or 1.5e-3."};
        if (close(value, answer, tolerance)) return {true, ""};
        for (const KnownMistake& m : mistakes)
            if (close(value, m.value, tolerance)) return {false, m.hint};
        return {false, otherwise};
    };
    return e;
}

Exercise choice_exercise(std::string prompt, std::vector<std::string> choices, std::size_t answer,
                         std::vector<std::string> hints) {
    Exercise e;
    e.prompt = std::move(prompt);
    e.type = AnswerType::Choice;
    e.choices = choices;
    e.answer_text = choices.at(answer);
    e.check = [choices, answer, hints = std::move(hints)](const std::string& text) -> Feedback {
        const std::string t = trim(text);
        for (std::size_t i = 0; i < choices.size(); ++i) {
            if (t != choices[i] && t != std::to_string(i + 1)) continue;
            if (i == answer) return {true, ""};
            return {false, i < hints.size() ? hints[i] : "Not this one."};
        }
        return {false, "Answer with one of the choices (its text or its number)."};
    };
    return e;
}

}  // namespace fp8lab::labs
