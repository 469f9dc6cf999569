// SPDX-License-Identifier: Apache-2.0
// The lab text parser: line by line, tracking code fences, collecting file:line errors.
#include "labs/framework/lab_text.hpp"
#include "emulator/base/quoted_input.hpp"

#include <set>

namespace fp8lab::labs {
namespace {

std::string trim(std::string_view s) {
    const auto b = s.find_first_not_of(" \t\r\n");
    if (b == std::string_view::npos) return "";
    return std::string(s.substr(b, s.find_last_not_of(" \t\r\n") - b + 1));
}

bool valid_id(const std::string& id) {
    if (id.empty()) return false;
    for (char c : id)
        if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-')) return false;
    return true;
}

std::vector<std::string_view> split_lines(std::string_view content) {
    std::vector<std::string_view> lines;
    std::size_t start = 0;
    while (start < content.size()) {
        std::size_t end = content.find('\n', start);
        if (end == std::string_view::npos) end = content.size();
        lines.push_back(content.substr(start, end - start));
        start = end + 1;
    }
    return lines;
}

}  // namespace

std::string TextError::describe() const { return file + ":" + std::to_string(line) + ": " + message; }

LabText parse_lab_text(const std::string& file, std::string_view content, std::vector<TextError>& errors) {
    LabText lab;
    lab.file = file;
    const std::vector<std::string_view> lines = split_lines(content);
    auto error = [&](int line, std::string message) { errors.push_back({file, line, std::move(message)}); };

    std::size_t i = 0;
    if (lines.empty() || trim(lines[0]) != "---") {
        error(1, "the file must start with a front matter block: '---', 'id: ...', 'title: ...', '---'");
        return lab;
    }
    for (i = 1; i < lines.size() && trim(lines[i]) != "---"; ++i) {
        const std::string line = trim(lines[i]);
        if (line.empty()) continue;
        const auto colon = line.find(':');
        if (colon == std::string::npos) {
            error(int(i + 1), "front matter lines are 'key: value', got " + emu::quoted_input(line) + "");
            continue;
        }
        const std::string key = trim(line.substr(0, colon)), value = trim(line.substr(colon + 1));
        if (key == "id") {
            lab.id = value;
            lab.id_line = int(i + 1);
            if (!valid_id(value))
                error(int(i + 1), "lab id " + emu::quoted_input(value) + " must be lower-case letters, digits and '-'");
        } else if (key == "title") {
            lab.title = value;
        } else {
            error(int(i + 1), "unknown front matter key " + emu::quoted_input(key) + " (known: id, title)");
        }
    }
    if (i == lines.size()) {
        error(1, "the front matter block is not closed by a '---' line");
        return lab;
    }
    if (lab.id.empty()) error(1, "the front matter has no 'id:'");
    if (lab.title.empty()) error(1, "the front matter has no 'title:'");

    std::set<std::string> seen;
    // A code fence (CommonMark): 3 or more ` or ~ open it; the same character, at least as
    // many, close it. Inside one a "## " line is code, not a step.
    char fence_char = 0;
    std::size_t fence_length = 0;
    std::string* body = &lab.introduction;
    for (++i; i < lines.size(); ++i) {
        const std::string_view raw = lines[i];
        const std::string line = trim(raw);
        if (!line.empty() && (line[0] == '`' || line[0] == '~')) {
            const std::size_t run = std::min(line.find_first_not_of(line[0]), line.size());
            if (!fence_char && run >= 3) {
                fence_char = line[0];
                fence_length = run;
            } else if (fence_char == line[0] && run >= fence_length &&
                       line.find_first_not_of(" \t", run) == std::string::npos) {
                fence_char = 0;
            }
        }
        if (!fence_char && raw.rfind("## ", 0) == 0) {
            const int number = int(i + 1);
            const auto open = line.rfind("{#");
            if (open == std::string::npos || line.back() != '}') {
                error(number, "step heading " + emu::quoted_input(line) +
                                  " needs its id at the end, like '## Title {#step-id}'");
                body = nullptr;
                continue;
            }
            StepText step;
            step.id = line.substr(open + 2, line.size() - open - 3);
            step.title = trim(line.substr(3, open - 3));
            step.line = number;
            if (!valid_id(step.id))
                error(number, "step id " + emu::quoted_input(step.id) + " must be lower-case letters, digits and '-'");
            if (step.title.empty()) error(number, "step " + emu::quoted_input(step.id) + " has no title");
            if (!seen.insert(step.id).second) error(number, "step id " + emu::quoted_input(step.id) + " appears twice");
            lab.steps.push_back(std::move(step));
            body = &lab.steps.back().markdown;
            continue;
        }
        if (body == &lab.introduction && lab.introduction_line == 0 && !line.empty())
            lab.introduction_line = int(i + 1);
        if (body) {
            body->append(raw);
            body->push_back('\n');
        }
    }
    if (fence_char)
        error(int(lines.size()),
              std::string("a ") + std::string(fence_length, fence_char) + " code fence is not closed");
    for (StepText& s : lab.steps) s.markdown = trim(s.markdown) + "\n";
    lab.introduction = trim(lab.introduction);
    return lab;
}

}  // namespace fp8lab::labs
