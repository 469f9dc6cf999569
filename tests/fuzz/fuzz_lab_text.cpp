// SPDX-License-Identifier: Apache-2.0
// Fuzzes lab Markdown: front matter, step headings, code fences, placeholders and word
// blocks. Any text loads or gives file:line errors; placeholders fill or are refused, an
// exercise or parameters block joins its code or is refused, never a crash.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "labs/framework/step_words.hpp"
#include "labs/framework/lab_text.hpp"
#include "labs/framework/placeholders.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    using namespace fp8lab::labs;
    const std::string content(reinterpret_cast<const char*>(data), size);
    std::vector<TextError> errors;
    const LabText lab = parse_lab_text("fuzz.md", content, errors);
    (void)placeholder_errors(content);
    try {
        (void)render_placeholders(content);
    } catch (const PlaceholderError&) {
    }
    ExerciseSpec numeric = numeric_exercise(448, {{"ieee", 464}});
    numeric.values = {{"width", "4096"}};
    ExerciseSpec pick = choice_exercise({"a", "b"}, 1);
    for (const StepText& step : lab.steps) {
        (void)placeholder_errors(step.markdown);
        const StepWords words = split_step_words("fuzz.md", step.markdown, step.line + 1, errors);
        std::vector<ParameterSpec> parameters{integer("n", 1, 10, 3), choice("format", {"e4m3", "e5m2"}, "e4m3")};
        join_parameters("fuzz.md", step.line, parameters, words.parameters, errors);
        const std::vector<TitleSpec> titles{{"figure curve", {"format"}}, {"table numbers"}};
        for (const auto& [key, sentence] : join_titles("fuzz.md", step.line, titles, words.titles, errors)) try {
                (void)render_placeholders(sentence, {{"format", "E4M3"}});
            } catch (const PlaceholderError&) {
            }
        if (!words.exercise) continue;
        for (const ExerciseSpec* spec : {&numeric, &pick})
            if (const auto e = join_exercise("fuzz.md", *spec, *words.exercise, errors)) (void)e->check("448");
    }
    return 0;
}
