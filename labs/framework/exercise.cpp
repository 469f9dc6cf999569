// SPDX-License-Identifier: Apache-2.0
// Checking answers: parse what the student typed, compare, and name the mistake.
#include "labs/framework/exercise.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <stdexcept>
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
    return std::abs(a - b) <= tolerance * std::max(std::abs(a), std::abs(b)) || (a == 0 && b == 0);
}

// A number without a fraction bar: inf, BASE^EXPONENT, or what strtod reads (decimal, hex
// float). For a decimal, half a unit of its last digit and its significant digits.
std::optional<TypedNumber> parse_term(const std::string& s) {
    TypedNumber n;
    std::string lower;
    for (char c : s) lower += char(std::tolower(static_cast<unsigned char>(c)));
    if (lower == "inf" || lower == "infinity" || lower == "+inf" || lower == "+infinity") return n.value = INFINITY, n;
    if (lower == "-inf" || lower == "-infinity") return n.value = -INFINITY, n;
    // NaN is an answer a student may give (what a non-saturating cast makes of an overflow):
    // it parses, so that its mistake gets its hint, and it equals no answer but NaN.
    if (lower == "nan" || lower == "+nan" || lower == "-nan") return n.value = NAN, n;
    if (const auto caret = s.find('^'); caret != std::string::npos) {
        double base, exponent;
        if (!parse_plain(s.substr(0, caret), base) || !parse_plain(s.substr(caret + 1), exponent)) return std::nullopt;
        n.value = std::pow(base, exponent);
        if (!std::isfinite(n.value)) return std::nullopt;
        return n;
    }
    // Digits that overflow a double (1e999) are no number an exercise asks for: strtod would
    // read them as infinity, and infinity is within "half a unit" of anything at that exponent.
    if (!parse_plain(s, n.value) || !std::isfinite(n.value)) return std::nullopt;
    const std::size_t start = s.find_first_not_of("+-");
    if (start == std::string::npos || s.compare(start, 2, "0x") == 0 || s.compare(start, 2, "0X") == 0) return n;
    const std::size_t e = s.find_first_of("eE", start);
    const std::string mantissa = s.substr(start, e == std::string::npos ? std::string::npos : e - start);
    // The exponent as a long long, clamped: past +-1000 the double is already 0 or infinite,
    // and an exponent that wrapped in an int (1.00e-4294966996 read as 1.00e300) would make
    // half a unit of the last digit larger than any answer, and every answer "right".
    const long long exponent_typed = e == std::string::npos ? 0 : std::strtoll(s.c_str() + e + 1, nullptr, 10);
    const int exponent10 = int(std::clamp<long long>(exponent_typed, -1000, 1000));
    const std::size_t point = mantissa.find('.');
    const int decimals = point == std::string::npos ? 0 : int(mantissa.size() - point - 1);
    std::string digits;
    for (char c : mantissa)
        if (c >= '0' && c <= '9') digits += c;
    const std::size_t first = digits.find_first_not_of('0');
    n.significant_digits = first == std::string::npos ? 0 : int(digits.size() - first);
    n.half_unit = 0.5 * std::pow(10.0, exponent10 - decimals);
    return n;
}

// Commas that group thousands (1,024 and 16,384: groups of three after a first group of one
// to three digits, not 0) are dropped; one comma otherwise is a decimal comma (0,3125).
std::string without_separators(const std::string& text) {
    std::string s;
    for (char c : text)
        if (c != '_' && c != ' ') s += c;  // 1 024 and 1_024 read as 1024
    const std::size_t commas = std::size_t(std::count(s.begin(), s.end(), ','));
    if (commas == 0) return s;
    const std::size_t start = s.find_first_not_of("+-");
    const std::size_t point = s.find('.');
    const std::string whole = s.substr(start, point == std::string::npos ? std::string::npos : point - start);
    bool grouped = whole.size() > 0 && whole[0] != '0' && whole[0] != ',';
    std::size_t first = whole.find(',');
    grouped = grouped && first != std::string::npos && first <= 3;
    for (std::size_t i = first; grouped && i < whole.size(); i += 4)
        grouped = whole[i] == ',' && i + 4 <= whole.size() &&
                  std::all_of(whole.begin() + long(i) + 1, whole.begin() + long(i) + 4, ::isdigit);
    if (grouped) {
        s.erase(std::remove(s.begin(), s.end(), ','), s.end());
        return s;
    }
    if (commas == 1 && point == std::string::npos) std::replace(s.begin(), s.end(), ',', '.');
    return s;
}

}  // namespace

std::optional<TypedNumber> parse_typed_number(const std::string& text) {
    const std::string s = without_separators(trim(text));
    const auto bar = s.find('/');
    if (bar == std::string::npos) return parse_term(s);
    const std::optional<TypedNumber> top = parse_term(s.substr(0, bar)), bottom = parse_term(s.substr(bar + 1));
    if (!top || !bottom || bottom->value == 0) return std::nullopt;
    TypedNumber n;  // a fraction is exact: judged by the exercise's tolerance alone
    n.value = top->value / bottom->value;
    if (!std::isfinite(n.value) && std::isfinite(top->value)) return std::nullopt;  // 1e300/1e-300 overflowed
    if (std::isnan(n.value)) return std::nullopt;
    return n;
}

bool parse_answer_number(const std::string& text, double& value) {
    const std::optional<TypedNumber> n = parse_typed_number(text);
    if (n) value = n->value;
    return n.has_value();
}

bool matches(const TypedNumber& typed, double target, double tolerance) {
    if (std::isnan(typed.value) || std::isnan(target)) return std::isnan(typed.value) && std::isnan(target);
    if (close(typed.value, target, tolerance)) return true;
    // To the digits given: 1.4933 is 448/300 to five digits. Fewer than three digits is a
    // guess, not an answer (1.5 would otherwise be "right" for anything from 1.45 to 1.55).
    // A target exactly half a unit away (0.3125 typed as 0.312 or 0.313) is within it: the
    // slack covers the decimal's own binary rounding, which put 0.313 a hair outside.
    return typed.significant_digits >= 3 && std::isfinite(target) && std::isfinite(typed.value) &&
           std::isfinite(typed.half_unit) && std::abs(typed.value - target) <= typed.half_unit * (1 + 1e-9);
}

ExerciseSpec numeric_exercise(double answer, std::vector<std::pair<std::string, double>> mistakes, double tolerance) {
    ExerciseSpec e;
    e.type = AnswerType::Number;
    e.answer = answer;
    e.mistakes = std::move(mistakes);
    e.tolerance = tolerance;
    return e;
}

ExerciseSpec choice_exercise(std::vector<std::string> choice_keys, std::size_t right) {
    if (right >= choice_keys.size()) throw std::invalid_argument("choice_exercise: the right choice is not a choice");
    ExerciseSpec e;
    e.type = AnswerType::Choice;
    e.choices = std::move(choice_keys);
    e.right = right;
    return e;
}

namespace {

Exercise numeric(std::string prompt, double answer, std::vector<std::pair<double, std::string>> mistakes,
                 std::string otherwise, double tolerance) {
    Exercise e;
    e.prompt = std::move(prompt);
    e.type = AnswerType::Number;
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.17g", answer);
    e.answer_text = buf;
    e.check = [answer, mistakes = std::move(mistakes), otherwise = std::move(otherwise),
               tolerance](const std::string& text) -> Feedback {
        const std::optional<TypedNumber> typed = parse_typed_number(text);
        if (!typed) return {false, "Type a number, e.g. 448, 0.0625, 2^-6, 448/300 or 1.5e-3."};
        if (matches(*typed, answer, tolerance)) return {true, ""};
        for (const auto& [value, hint] : mistakes)
            if (matches(*typed, value, tolerance)) return {false, hint};
        return {false, otherwise};
    };
    return e;
}

// A choice's text as compared: lower case, runs of blanks as one space, none at the ends
// (a student who types "Per-Tensor  scaling" means the choice).
std::string folded(const std::string& text) {
    std::string out;
    for (char c : trim(text)) {
        if (std::isspace(static_cast<unsigned char>(c))) {
            if (!out.empty() && out.back() != ' ') out += ' ';
        } else {
            out += char(std::tolower(static_cast<unsigned char>(c)));
        }
    }
    return out;
}

Exercise choice(std::string prompt, std::vector<std::string> choices, std::size_t answer,
                std::vector<std::string> hints) {
    Exercise e;
    e.prompt = std::move(prompt);
    e.type = AnswerType::Choice;
    e.choices = choices;
    e.answer_text = choices.at(answer);
    e.check = [choices, answer, hints = std::move(hints)](const std::string& text) -> Feedback {
        const std::string t = folded(text);
        for (std::size_t i = 0; i < choices.size(); ++i) {
            if (t != folded(choices[i]) && t != std::to_string(i + 1)) continue;
            if (i == answer) return {true, ""};
            return {false, hints[i]};
        }
        return {false, "Answer with one of the choices (its text or its number)."};
    };
    return e;
}

}  // namespace

Exercise make_exercise(const ExerciseSpec& spec, const std::map<std::string, std::string>& words) {
    if (spec.type == AnswerType::Choice) {
        std::vector<std::string> choices, hints;
        for (std::size_t i = 0; i < spec.choices.size(); ++i) {
            choices.push_back(words.at("choice " + spec.choices[i]));
            hints.push_back(i == spec.right ? "" : words.at("hint " + spec.choices[i]));
        }
        return choice(words.at("prompt"), std::move(choices), spec.right, std::move(hints));
    }
    std::vector<std::pair<double, std::string>> mistakes;
    for (const auto& [key, value] : spec.mistakes) mistakes.emplace_back(value, words.at("mistake " + key));
    return numeric(words.at("prompt"), spec.answer, std::move(mistakes), words.at("otherwise"), spec.tolerance);
}

}  // namespace fp8lab::labs
