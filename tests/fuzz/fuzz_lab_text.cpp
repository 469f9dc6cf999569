// Fuzzes lab Markdown: front matter, step headings, code fences and placeholders. Any
// text loads or gives file:line errors; placeholders fill or are refused, never crash.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

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
    for (const StepText& step : lab.steps) (void)placeholder_errors(step.markdown);
    return 0;
}
