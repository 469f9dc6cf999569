// SPDX-License-Identifier: Apache-2.0
// Progress per lab and the progress file's one format.
#include "labs/framework/progress.hpp"

#include <stdexcept>

#include "emulator/base/quoted_input.hpp"

namespace fp8lab::labs {
namespace {

constexpr std::string_view kMagic = "# fp8lab progress v1";

std::string_view trimmed(std::string_view s) {
    while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
    while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r')) s.remove_suffix(1);
    return s;
}

}  // namespace

std::vector<LabProgress> progress_by_lab(const Catalog& catalog, const std::set<std::string>& solved) {
    std::vector<LabProgress> out;
    for (const Lab& lab : catalog.labs) {
        LabProgress p;
        p.lab = &lab;
        for (const Step& step : lab.steps) {
            if (!step.exercise) continue;
            ++p.exercises;
            p.solved += solved.count(lab.id + "/" + step.logic.id) ? 1 : 0;
        }
        out.push_back(p);
    }
    return out;
}

std::string progress_file_text(const ProgressFile& progress) {
    std::string text = std::string(kMagic) + "\nstudent = " + progress.student + "\n";
    for (const std::string& key : progress.solved) text += "solved = " + key + "\n";
    return text;
}

ProgressFile read_progress_file(std::string_view text, std::string_view source) {
    ProgressFile file;
    int line_number = 0;
    bool seen_magic = false, seen_student = false;
    // A byte-order mark, which some editors put before UTF-8 text, is not part of the first line.
    if (text.substr(0, 3) == "\xEF\xBB\xBF") text.remove_prefix(3);
    while (!text.empty()) {
        const std::size_t end = std::min(text.find('\n'), text.size());
        const std::string_view line = trimmed(text.substr(0, end));
        text.remove_prefix(std::min(end + 1, text.size()));
        ++line_number;
        const std::string where = std::string(source) + ":" + std::to_string(line_number) + ": ";
        if (!seen_magic) {
            if (line != kMagic)
                throw std::runtime_error(where + "not an fp8lab progress file (its first line is " +
                                         emu::quoted_input(line) + ")");
            seen_magic = true;
            continue;
        }
        if (line.empty() || line.front() == '#') continue;
        const std::size_t eq = line.find('=');
        if (eq == std::string_view::npos)
            throw std::runtime_error(where + emu::quoted_input(line) + " is not KEY = VALUE");
        const std::string_view key = trimmed(line.substr(0, eq)), value = trimmed(line.substr(eq + 1));
        if (key == "student") {
            if (seen_student) throw std::runtime_error(where + "a second student line");
            if (value.empty()) throw std::runtime_error(where + "the student's name is empty");
            file.student = std::string(value);
            seen_student = true;
        } else if (key == "solved") {
            const std::size_t slash = value.find('/');
            if (slash == std::string_view::npos || slash == 0 || slash + 1 == value.size())
                throw std::runtime_error(where + "solved " + emu::quoted_input(value) + " is not lab/step");
            file.solved.insert(std::string(value));
        } else {
            throw std::runtime_error(where + "unknown key " + emu::quoted_input(key) + " (student or solved)");
        }
    }
    if (!seen_magic) throw std::runtime_error(std::string(source) + ":1: empty, not an fp8lab progress file");
    if (!seen_student) throw std::runtime_error(std::string(source) + ": no student line");
    return file;
}

}  // namespace fp8lab::labs
