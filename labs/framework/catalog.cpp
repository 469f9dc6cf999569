// SPDX-License-Identifier: Apache-2.0
// Joining lab text and lab logic, reporting every mismatch with its file and line.
#include "labs/framework/catalog.hpp"
#include "labs/framework/data_directory.hpp"

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include "labs/framework/step_words.hpp"
#include "labs/framework/placeholders.hpp"
#include "emulator/base/quoted_input.hpp"

namespace fp8lab::labs {

bool Step::supports(Backend b) const {
    return std::find(logic.backends.begin(), logic.backends.end(), b) != logic.backends.end();
}

const Step* Lab::find_step(const std::string& step_id) const {
    for (const Step& s : steps)
        if (s.logic.id == step_id) return &s;
    return nullptr;
}

const Lab* Catalog::find(const std::string& lab_id) const {
    for (const Lab& l : labs)
        if (l.id == lab_id) return &l;
    return nullptr;
}

Catalog build_catalog(const std::vector<SourceText>& texts, const std::vector<LabLogic>& logic) {
    Catalog catalog;
    std::map<std::string, const LabLogic*> logic_by_id;
    for (const LabLogic& l : logic) logic_by_id[l.id] = &l;
    std::map<std::string, std::string> text_file_by_id;

    for (const SourceText& source : texts) {
        std::vector<TextError> errors;
        const LabText text = parse_lab_text(source.file, source.content, errors);
        if (!text.id.empty() && text_file_by_id.count(text.id))
            errors.push_back({source.file, text.id_line,
                              "lab id " + emu::quoted_input(text.id) + " is also used by " + text_file_by_id[text.id]});
        if (!text.id.empty()) text_file_by_id.emplace(text.id, source.file);
        const auto found = logic_by_id.find(text.id);
        if (!text.id.empty() && found == logic_by_id.end())
            errors.push_back(
                {source.file, text.id_line, "lab " + emu::quoted_input(text.id) + " has text but no logic in code"});

        auto check_placeholders = [&](const std::string& markdown, int first_line,
                                      const PlaceholderValues& values = {}) {
            for (const PlaceholderError& e : placeholder_errors(markdown, values))
                errors.push_back({source.file, first_line + e.line - 1, e.what()});
        };
        Lab lab{text.id, text.title, source.file, text.introduction, {}};
        if (found != logic_by_id.end()) {
            const LabLogic& code = *found->second;
            for (const StepText& st : text.steps) {
                const auto step = std::find_if(code.steps.begin(), code.steps.end(),
                                               [&](const StepLogic& s) { return s.id == st.id; });
                if (step == code.steps.end()) {
                    errors.push_back({source.file, st.line,
                                      "step " + emu::quoted_input(st.id) + " is in the text but lab '" + text.id +
                                          "' has no logic for it"});
                    continue;
                }
                StepWords words = split_step_words(source.file, st.markdown, st.line + 1, errors);
                check_placeholders(words.markdown, st.line + 1, step->text_values);
                std::optional<Exercise> exercise;
                if (step->exercise && !words.exercise)
                    errors.push_back({source.file, st.line,
                                      "step " + emu::quoted_input(st.id) +
                                          " has an exercise in the code but no ~~~exercise block with its words"});
                else if (!step->exercise && words.exercise && !step->exercise_from_recording)
                    errors.push_back({source.file, words.exercise->line,
                                      "step " + emu::quoted_input(st.id) + " has no exercise in the code"});
                else if (step->exercise)
                    exercise = join_exercise(source.file, *step->exercise, *words.exercise, errors);
                StepLogic logic = *step;
                join_parameters(source.file, st.line, logic.parameters, words.parameters, errors);
                std::map<std::string, std::string> titles =
                    join_titles(source.file, st.line, logic.titles, words.titles, errors);
                lab.steps.push_back({std::move(logic), st.title, std::move(words.markdown), st.line,
                                     std::move(exercise), std::move(titles)});
            }
            for (const StepLogic& s : code.steps) {
                if (std::none_of(text.steps.begin(), text.steps.end(),
                                 [&](const StepText& st) { return st.id == s.id; }))
                    errors.push_back({source.file, text.id_line,
                                      "step " + emu::quoted_input(s.id) + " of lab " + emu::quoted_input(text.id) +
                                          " has logic but no text (add '## Title {#" + s.id + "}')"});
            }
            // Steps in the order the code lists them: the text may not reorder the logic.
            std::vector<std::string> text_order, code_order;
            for (const Step& s : lab.steps) text_order.push_back(s.logic.id);
            for (const StepLogic& s : code.steps)
                if (std::find(text_order.begin(), text_order.end(), s.id) != text_order.end())
                    code_order.push_back(s.id);
            if (text_order != code_order)
                errors.push_back({source.file, text.id_line, "the steps are in a different order than in the code"});
        }
        check_placeholders(text.introduction, text.introduction_line);
        if (errors.empty()) catalog.labs.push_back(std::move(lab));
        catalog.errors.insert(catalog.errors.end(), errors.begin(), errors.end());
    }
    for (const LabLogic& l : logic)
        if (!text_file_by_id.count(l.id))
            catalog.errors.push_back(
                {"labs/content", 0, "lab " + emu::quoted_input(l.id) + " has logic but no text file"});
    return catalog;
}

std::string content_directory() { return data_directory("FP8LAB_CONTENT_DIR", "content", FP8LAB_SOURCE_CONTENT_DIR); }

Catalog load_catalog(const std::vector<LabLogic>& logic, const std::string& directory) {
    namespace fs = std::filesystem;
    std::vector<SourceText> texts;
    std::error_code ec;
    if (!fs::is_directory(directory, ec)) {
        Catalog c;
        c.errors.push_back({directory, 0, "the lab text folder does not exist (set FP8LAB_CONTENT_DIR)"});
        return c;
    }
    std::vector<fs::path> files;
    std::vector<TextError> unreadable;
    for (const auto& entry : fs::directory_iterator(directory, ec)) {
        if (entry.path().extension() != ".md") continue;
        // A folder or a FIFO named *.md is no lab text: opening a FIFO would wait forever.
        if (!entry.is_regular_file(ec))
            unreadable.push_back({entry.path().string(), 0, "not a regular file; skipped"});
        else
            files.push_back(entry.path());
    }
    std::sort(files.begin(), files.end());
    for (const fs::path& p : files) {
        std::ifstream in(p, std::ios::binary);
        std::ostringstream content;
        content << in.rdbuf();
        if (!in.good() && !in.eof())
            unreadable.push_back({p.string(), 0, "cannot be read; skipped"});
        else
            texts.push_back({p.string(), content.str()});
    }
    Catalog catalog = build_catalog(texts, logic);
    catalog.errors.insert(catalog.errors.end(), unreadable.begin(), unreadable.end());
    return catalog;
}

}  // namespace fp8lab::labs
