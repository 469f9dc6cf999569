// SPDX-License-Identifier: Apache-2.0
// Reading a step's word blocks from its text and checking them against what the code defines.
#include "labs/framework/step_words.hpp"

#include <algorithm>
#include <cctype>
#include <set>

#include "emulator/base/quoted_input.hpp"
#include "labs/framework/placeholders.hpp"

namespace fp8lab::labs {
namespace {

// The fence's length when `line` opens a word block ("~~~exercise", "~~~parameters",
// "~~~titles"), else
// 0; `kind` gets the block's name.
std::size_t word_fence(const std::string& line, std::string& kind) {
    if (line.empty() || (line[0] != '~' && line[0] != '`')) return 0;
    const std::size_t run = line.find_first_not_of(line[0]);
    if (run == std::string::npos || run < 3) return 0;
    std::string info = line.substr(run);
    while (!info.empty() && std::isspace(static_cast<unsigned char>(info.back()))) info.pop_back();
    if (info != "exercise" && info != "parameters" && info != "titles") return 0;
    kind = info;
    return run;
}

bool closes(const std::string& line, char c, std::size_t length) {
    std::string t = line;
    while (!t.empty() && std::isspace(static_cast<unsigned char>(t.back()))) t.pop_back();
    return t.size() >= length && t.find_first_not_of(c) == std::string::npos;
}

std::string trimmed(const std::string& s) {
    const std::size_t b = s.find_first_not_of(" \t\r");
    if (b == std::string::npos) return "";
    return s.substr(b, s.find_last_not_of(" \t\r") - b + 1);
}

}  // namespace

StepWords split_step_words(const std::string& file, const std::string& markdown, int first_line,
                           std::vector<TextError>& errors) {
    StepWords result;
    std::size_t start = 0;
    int line_number = first_line;
    char fence_char = 0;  // 0: outside the block
    std::size_t fence_length = 0;
    std::string* last = nullptr;  // the sentence a continuation line extends
    WordBlock* block = nullptr;   // the block being read
    while (start < markdown.size()) {
        std::size_t end = markdown.find('\n', start);
        if (end == std::string::npos) end = markdown.size();
        const std::string line = markdown.substr(start, end - start);
        const std::string with_newline = markdown.substr(start, end + 1 - start);
        start = end + 1;
        const int here = line_number++;
        if (!fence_char) {
            std::string kind;
            if (const std::size_t fence = word_fence(line, kind)) {
                std::optional<WordBlock>& slot = kind == "exercise"     ? result.exercise
                                                 : kind == "parameters" ? result.parameters
                                                                        : result.titles;
                if (slot) errors.push_back({file, here, "a second " + kind + " block in one step"});
                slot = WordBlock{here, {}};
                block = &*slot;
                fence_char = line[0];
                fence_length = fence;
                last = nullptr;
                continue;
            }
            result.markdown += with_newline;
            continue;
        }
        if (closes(line, fence_char, fence_length)) {
            fence_char = 0;
            continue;
        }
        if (trimmed(line).empty()) continue;
        if (line[0] == ' ' || line[0] == '\t') {
            if (last)
                last->append(" ").append(trimmed(line));
            else
                errors.push_back({file, here, "a continuation line with no sentence above it"});
            continue;
        }
        const std::size_t colon = line.find(':');
        const std::string key = colon == std::string::npos ? "" : trimmed(line.substr(0, colon));
        if (key.empty()) {
            errors.push_back({file, here,
                              "a word block's line is 'key: sentence' (exercise: prompt, otherwise, mistake KEY, "
                              "choice KEY, hint KEY; parameters: label NAME, help NAME; titles: figure ID, table ID)"});
            last = nullptr;
            continue;
        }
        if (block->words.count(key)) {
            errors.push_back({file, here, "the block says " + emu::quoted_input(key) + " twice"});
            last = nullptr;
            continue;
        }
        auto& entry = block->words[key];
        entry = {trimmed(line.substr(colon + 1)), here};
        last = &entry.first;
    }
    if (fence_char) errors.push_back({file, block->line, "the word block is not closed"});
    return result;
}

std::optional<Exercise> join_exercise(const std::string& file, const ExerciseSpec& spec, const WordBlock& words,
                                      std::vector<TextError>& errors) {
    std::vector<std::string> needed{"prompt"};
    if (spec.type == AnswerType::Choice) {
        for (std::size_t i = 0; i < spec.choices.size(); ++i) {
            needed.push_back("choice " + spec.choices[i]);
            if (i != spec.right) needed.push_back("hint " + spec.choices[i]);
        }
    } else {
        needed.push_back("otherwise");
        for (const auto& [key, value] : spec.mistakes) needed.push_back("mistake " + key);
    }
    const std::size_t errors_before = errors.size();
    std::set<std::string> known(needed.begin(), needed.end());
    // The right choice's hint is never shown, but a choice the code computes (which
    // format flushes fewer) may be right one day and wrong the next: its hint may stay.
    if (spec.type == AnswerType::Choice && spec.right < spec.choices.size())
        known.insert("hint " + spec.choices[spec.right]);
    for (const std::string& key : spec.possible_mistakes) known.insert("mistake " + key);
    for (const auto& [key, sentence] : words.words)
        if (!known.count(key)) {
            std::string expected;
            for (const std::string& k : needed) expected += (expected.empty() ? "" : ", ") + k;
            errors.push_back(
                {file, sentence.second,
                 "the exercise has no " + emu::quoted_input(key) + " in the code; its keys are: " + expected});
        }
    std::map<std::string, std::string> filled;
    for (const std::string& key : needed) {
        const auto found = words.words.find(key);
        if (found == words.words.end() || found->second.first.empty()) {
            errors.push_back({file, words.line, "the exercise needs its " + emu::quoted_input(key) + " sentence"});
            continue;
        }
        const auto& [sentence, line] = found->second;
        for (const PlaceholderError& e : placeholder_errors(sentence, spec.values))
            errors.push_back({file, line, e.what()});
        if (errors.size() == errors_before) filled[key] = render_placeholders(sentence, spec.values);
    }
    if (errors.size() != errors_before) return std::nullopt;
    return make_exercise(spec, filled);
}

void join_parameters(const std::string& file, int heading_line, std::vector<ParameterSpec>& parameters,
                     const std::optional<WordBlock>& words, std::vector<TextError>& errors) {
    if (parameters.empty() && !words) return;
    if (!words) {
        errors.push_back({file, heading_line, "the step has parameters in the code but no ~~~parameters block"});
        return;
    }
    std::set<std::string> known;
    for (ParameterSpec& p : parameters)
        for (const char* what : {"label", "help"}) {
            const std::string key = std::string(what) + " " + p.name;
            known.insert(key);
            const auto found = words->words.find(key);
            if (found == words->words.end() || found->second.first.empty()) {
                errors.push_back(
                    {file, words->line, "the parameters need their " + emu::quoted_input(key) + " sentence"});
                continue;
            }
            const auto& [sentence, line] = found->second;
            const std::size_t before = errors.size();
            for (const PlaceholderError& e : placeholder_errors(sentence)) errors.push_back({file, line, e.what()});
            if (errors.size() != before) continue;
            (std::string(what) == "label" ? p.label : p.help) = render_placeholders(sentence);
        }
    for (const auto& [key, sentence] : words->words)
        if (!known.count(key)) {
            std::string names;
            for (const ParameterSpec& p : parameters) names += (names.empty() ? "" : ", ") + p.name;
            errors.push_back({file, sentence.second,
                              "the step has no parameter for " + emu::quoted_input(key) +
                                  "; its parameters are: " + (names.empty() ? std::string("none") : names)});
        }
}

std::map<std::string, std::string> join_titles(const std::string& file, int heading_line,
                                               const std::vector<TitleSpec>& titles,
                                               const std::optional<WordBlock>& words, std::vector<TextError>& errors) {
    std::map<std::string, std::string> joined;
    if (titles.empty() && !words) return joined;
    if (!words) {
        errors.push_back({file, heading_line, "the step has titles in the code but no ~~~titles block"});
        return joined;
    }
    for (const TitleSpec& t : titles) {
        const auto found = words->words.find(t.key);
        if (found == words->words.end() || found->second.first.empty()) {
            errors.push_back({file, words->line, "the titles need their " + emu::quoted_input(t.key) + " sentence"});
            continue;
        }
        // Checked with a stand-in for each value the code will give.
        const auto& [sentence, line] = found->second;
        PlaceholderValues stand_ins;
        for (const std::string& v : t.values) stand_ins.emplace(v, std::string(1, '1'));
        const std::size_t before = errors.size();
        for (const PlaceholderError& e : placeholder_errors(sentence, stand_ins))
            errors.push_back({file, line, e.what()});
        if (errors.size() == before) joined[t.key] = sentence;
    }
    for (const auto& word : words->words) {
        const std::string& key = word.first;  // not a structured binding: clang 14 cannot capture one
        if (std::none_of(titles.begin(), titles.end(), [&](const TitleSpec& t) { return t.key == key; })) {
            std::string keys;
            for (const TitleSpec& t : titles) keys += (keys.empty() ? "" : ", ") + t.key;
            errors.push_back({file, word.second.second,
                              "the step has no title " + emu::quoted_input(key) +
                                  "; its titles are: " + (keys.empty() ? std::string("none") : keys)});
        }
    }
    return joined;
}

}  // namespace fp8lab::labs
