// SPDX-License-Identifier: Apache-2.0
// AppState's navigation and persistence (moving between steps, saving where the user is),
// the course's step states and the looks' Markdown fonts.
#include "app/gui/app_state.hpp"

#include <algorithm>

#include "labs/framework/placeholders.hpp"

namespace fp8lab::gui {

StepState& CourseState::state_of(const labs::Lab& l, const labs::Step& s) {
    std::unique_ptr<StepState>& st = steps[step_key(l, s)];
    if (!st) {
        st = std::make_unique<StepState>();
        st->parameters = labs::Parameters(s.logic.parameters);
        // Steps that can run on the GPU do so where one is ready; the switch says which.
        if (gpu.ready && s.supports(labs::Backend::Gpu)) st->backend = labs::Backend::Gpu;
        try {
            st->text = parse_markdown(labs::render_placeholders(s.markdown, s.logic.text_values));
        } catch (const std::exception& e) {
            // The catalog checks placeholders when it loads, so this is a program error: show it.
            st->text = {{MarkdownBlock::Paragraph, 0, {}, {{l.file + ": " + e.what(), Style_Bold, {}}}}};
        }
    }
    return *st;
}

void AppState::go_to(int new_lab, int new_step) {
    const labs::Catalog& catalog = course.catalog;
    if (catalog.labs.empty()) return;
    course.lab = std::clamp(new_lab, 0, int(catalog.labs.size()) - 1);
    course.step = std::clamp(new_step, 0, int(course.current_lab().steps.size()) - 1);
    inspector_open = false;
    settings.lab = course.current_lab().id;
    settings.step = course.current_step().logic.id;
    save_settings_now();
}

void AppState::next() {
    const int lab = course.lab, step = course.step;
    if (step + 1 < int(course.current_lab().steps.size()))
        go_to(lab, step + 1);
    else if (lab + 1 < int(course.catalog.labs.size()))
        go_to(lab + 1, 0);
}

void AppState::previous() {
    const int lab = course.lab, step = course.step;
    if (step > 0)
        go_to(lab, step - 1);
    else if (lab > 0)
        go_to(lab - 1, int(course.catalog.labs[std::size_t(lab - 1)].steps.size()) - 1);
}

void AppState::save_settings_now() {
    if (settings_path.empty()) return;
    try {
        gui::save_settings(settings, settings_path);
    } catch (const std::exception& e) {
        status = std::string("Settings not saved: ") + e.what();
    }
}

MarkdownFonts Looks::markdown_fonts() const {
    MarkdownFonts m;
    m.regular = fonts.regular;
    m.bold = fonts.bold;
    m.italic = fonts.italic;
    m.mono = fonts.mono;
    for (int i = 0; i < 3; ++i) m.heading[i] = fonts.heading[i];
    m.link_colour = colours.link;
    m.code_background = colours.code_background;
    return m;
}

}  // namespace fp8lab::gui
