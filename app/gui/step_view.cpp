// SPDX-License-Identifier: Apache-2.0
// The step view: the text with live numbers, parameter widgets from the schema, backend
// switch, Run/Cancel, the step's figures, tables and metrics, and its exercise.
#include <imgui.h>
#include <imgui_stdlib.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "app/files/atomic_file.hpp"
#include "app/export/cairo_figure.hpp"
#include "app/export/figure_csv.hpp"
#include "labs/framework/step_link.hpp"
#include "app/gui/app_state.hpp"
#include "app/gui/output_view.hpp"
#include "app/gui/widgets.hpp"

namespace fp8lab::gui {
namespace {

bool draw_parameter(const labs::ParameterSpec& spec, labs::Parameters& values) {
    bool changed = false;
    const char* label = spec.label.c_str();
    switch (spec.kind) {
    case labs::ParameterKind::Choice: {
        const std::string& current = values.choice(spec.name);
        if (ImGui::BeginCombo(label, current.c_str())) {
            for (const std::string& c : spec.choices)
                if (ImGui::Selectable(c.c_str(), c == current)) {
                    values.set(spec.name, c);
                    changed = true;
                }
            ImGui::EndCombo();
        }
        break;
    }
    case labs::ParameterKind::Integer: {
        std::int64_t v = values.integer(spec.name);
        const ImGuiSliderFlags flags =
            ImGuiSliderFlags_AlwaysClamp | (spec.int_max - spec.int_min > 4096 ? ImGuiSliderFlags_Logarithmic : 0);
        if (ImGui::SliderScalar(label, ImGuiDataType_S64, &v, &spec.int_min, &spec.int_max, nullptr, flags)) {
            values.set(spec.name, v);
            changed = true;
        }
        break;
    }
    case labs::ParameterKind::Float: {
        double v = values.real(spec.name);
        const ImGuiSliderFlags flags =
            ImGuiSliderFlags_AlwaysClamp | (spec.log_slider ? ImGuiSliderFlags_Logarithmic : 0);
        // The value as the tables write it (1.0625, not %.4g's 1.062): a format with no
        // conversion is shown as it is.
        const std::string shown = labs::number_text(v);
        if (ImGui::SliderScalar(label, ImGuiDataType_Double, &v, &spec.float_min, &spec.float_max, shown.c_str(),
                                flags | ImGuiSliderFlags_NoRoundToFormat)) {
            values.set(spec.name, v);
            changed = true;
        }
        break;
    }
    case labs::ParameterKind::Toggle: {
        bool v = values.toggle(spec.name);
        if (ImGui::Checkbox(label, &v)) {
            values.set(spec.name, v);
            changed = true;
        }
        break;
    }
    }
    if (!spec.help.empty() && ImGui::IsItemHovered()) ImGui::SetTooltip("%s", spec.help.c_str());
    return changed;
}

void draw_backend_switch(AppState& app, const labs::Step& step, StepState& st) {
    if (ImGui::RadioButton("CPU emulator", st.backend == labs::Backend::Cpu) && st.backend != labs::Backend::Cpu) {
        st.backend = labs::Backend::Cpu;
        st.needs_run = true;
    }
    ImGui::SameLine();
    const bool usable = app.course.gpu.ready && step.supports(labs::Backend::Gpu);
    const std::string gpu_label =
        "GPU: " + (app.course.gpu.device_name.empty() ? std::string("none") : app.course.gpu.device_name);
    ImGui::BeginDisabled(!usable);
    if (ImGui::RadioButton(gpu_label.c_str(), st.backend == labs::Backend::Gpu) && st.backend != labs::Backend::Gpu) {
        st.backend = labs::Backend::Gpu;
        st.needs_run = true;
    }
    ImGui::EndDisabled();
    if (!usable) {
        const std::string why =
            !app.course.gpu.ready ? app.course.gpu.reason : "this step computes on the CPU emulator only";
        ImGui::PushStyleColor(ImGuiCol_Text, ImGui::GetStyleColorVec4(ImGuiCol_TextDisabled));
        ImGui::TextWrapped("GPU unavailable: %s", why.c_str());
        ImGui::PopStyleColor();
    }
}

void draw_run_controls(StepState& st) {
    if (st.runner.running()) {
        ImGui::ProgressBar(float(st.runner.progress()), ImVec2(ImGui::GetFontSize() * 14, 0),
                           st.runner.progress_text().empty() ? nullptr : st.runner.progress_text().c_str());
        ImGui::SameLine();
        if (ImGui::Button("Cancel")) st.runner.cancel();
        return;
    }
    if (ImGui::Button("Run again")) st.needs_run = true;
    const std::string error = st.runner.error();
    if (!error.empty()) {
        ImGui::SameLine();
        ImGui::TextColored(ImVec4(0.84f, 0.37f, 0.0f, 1), "%s",
                           error == "cancelled" ? "Cancelled." : ("Failed: " + error).c_str());
    }
}

// The output as this user may see it: what gives the exercise's answer away stays hidden
// from a student until the exercise is solved or its answer revealed; an instructor sees all.
std::shared_ptr<const labs::StepOutput> shown_output(const AppState& app, const std::string& step_key, StepState& st) {
    std::shared_ptr<const labs::StepOutput> out = st.runner.output();
    if (!out || out->gives_answer.empty() || app.instructor || st.revealed || app.settings.solved.count(step_key))
        return out;
    if (st.hidden_source != out) {
        st.hidden_source = out;
        st.hidden = std::make_shared<const labs::StepOutput>(labs::with_answer_hidden(*out));
    }
    return st.hidden;
}

void draw_exercise(AppState& app, const labs::Lab& lab, const labs::Step& step, StepState& st) {
    const labs::Exercise& ex = *step.exercise;
    section("Exercise");
    ImGui::TextWrapped("%s", ex.prompt.c_str());
    bool check = false;
    ImGui::PushID("exercise");
    if (ex.type == labs::AnswerType::Choice) {
        for (const std::string& c : ex.choices)
            if (ImGui::RadioButton(c.c_str(), st.answer == c)) st.answer = c;
    } else {
        ImGui::SetNextItemWidth(ImGui::GetFontSize() * 14);
        check = ImGui::InputText("Answer", &st.answer, ImGuiInputTextFlags_EnterReturnsTrue);
    }
    if (ImGui::Button("Check")) check = true;
    ImGui::SameLine();
    if (app.instructor || st.wrong_tries >= kTriesBeforeReveal || st.revealed) {
        if (ImGui::Button(st.revealed ? "Hide answer" : "Reveal answer")) st.revealed = !st.revealed;
    } else {
        ImGui::TextDisabled("The answer can be revealed after %d tries", kTriesBeforeReveal);
    }
    ImGui::PopID();
    if (check) {
        st.feedback = ex.check(st.answer);
        if (!st.feedback->correct) ++st.wrong_tries;
        if (st.feedback->correct && app.settings.solved.insert(app.course.step_key(lab, step)).second)
            app.save_settings_now();
    }
    if (st.feedback) {
        if (st.feedback->correct)
            ImGui::TextColored(ImVec4(0.0f, 0.45f, 0.70f, 1), "Correct.");
        else
            ImGui::TextWrapped("Not yet: %s", st.feedback->hint.c_str());
    }
    if (st.revealed) ImGui::TextWrapped("Answer: %s", ex.answer_text.c_str());
}

// The figures in the export settings' formats, with their CSV, in a new folder
// ~/fp8lab-figures/LAB/STEP/N (never over an earlier export), with the command that draws
// them again.
void export_figures(AppState& app, const labs::Lab& lab, const labs::Step& step, const labs::StepOutput& out) {
    namespace fs = std::filesystem;
    const exporter::ExportSettings& e = app.export_settings;
    const char* home = std::getenv("HOME");
    const fs::path base = fs::path(home && *home ? home : ".") / "fp8lab-figures" / lab.id / step.logic.id;
    try {
        fs::create_directories(base);
        fs::path dir;
        for (int n = 1; dir.empty(); ++n)  // create_directory is exclusive: false when it exists
            if (fs::create_directory(base / std::to_string(n))) dir = base / std::to_string(n);
        std::string command = "fp8lab figures --lab " + lab.id + "/" + step.logic.id + " " + e.figures_options();
        for (const auto& [name, value] : app.course.current_state().parameters.values())
            command += " --set '" + name + "=" + labs::value_text(value) + "'";
        files::write_file_atomically((dir / "command.txt").string(),
                                     "# These figures' parameters, as the command that draws them again:\n" + command +
                                         " --out " + dir.string() + "\n");
        for (const labs::Figure& f : out.figures) {
            for (exporter::ImageFormat format : e.formats())
                exporter::write_figure(f, (dir / (f.id + "." + exporter::extension(format))).string(), format, e.width,
                                       e.height, e.style, e.png_scale);
            files::write_file_atomically((dir / (f.id + ".csv")).string(), exporter::figure_csv(f));
        }
        // Tables as slide images too, named apart from a figure of the same id.
        for (const labs::Table& t : out.tables) {
            for (exporter::ImageFormat format : e.formats())
                exporter::write_table(t, (dir / ("table-" + t.id + "." + exporter::extension(format))).string(), format,
                                      e.width, e.height, e.style, e.png_scale);
            files::write_file_atomically((dir / ("table-" + t.id + ".csv")).string(), exporter::table_csv(t));
        }
        app.status = "Exported " + std::to_string(out.figures.size()) + " figure(s) and " +
                     std::to_string(out.tables.size()) + " table(s) to " + dir.string();
    } catch (const std::exception& e) {
        app.status = std::string("Export failed: ") + e.what();
    }
}

// The export dialog: formats, size, theme, text size and PNG density, then the export.
void draw_export_dialog(AppState& app, const labs::Lab& lab, const labs::Step& step, const labs::StepOutput& out) {
    if (!ImGui::BeginPopupModal("Export figures", nullptr, ImGuiWindowFlags_AlwaysAutoResize)) return;
    exporter::ExportSettings& e = app.export_settings;
    ImGui::TextUnformatted("Formats");
    ImGui::Checkbox("SVG", &e.svg);
    ImGui::SameLine();
    ImGui::Checkbox("PNG", &e.png);
    ImGui::SameLine();
    ImGui::Checkbox("PDF", &e.pdf);
    struct Size {
        int width, height;
        const char* label;
    };
    static constexpr Size sizes[] = {{960, 600, "960 x 600 (16:10)"},
                                     {1280, 720, "1280 x 720 (16:9)"},
                                     {1920, 1080, "1920 x 1080 (16:9)"},
                                     {1024, 768, "1024 x 768 (4:3)"}};
    ImGui::TextUnformatted("Size in points");
    for (const Size& size : sizes)
        if (ImGui::RadioButton(size.label, e.width == size.width && e.height == size.height)) {
            e.width = size.width;
            e.height = size.height;
        }
    ImGui::TextUnformatted("Theme");
    for (const EnumName<plot::Theme>& n : enum_names<plot::Theme>()) {
        ImGui::SameLine();
        if (ImGui::RadioButton(std::string(n.name).c_str(), e.style.theme == n.value)) e.style.theme = n.value;
    }
    float font_scale = float(e.style.font_scale);
    if (ImGui::SliderFloat("Text size", &font_scale, 0.5f, 3.0f, "%.1fx")) e.style.font_scale = font_scale;
    ImGui::TextUnformatted("PNG pixels per point");
    for (int scale : {1, 2, 3}) {
        ImGui::SameLine();
        if (ImGui::RadioButton(std::to_string(scale).c_str(), e.png_scale == scale)) e.png_scale = scale;
    }
    ImGui::TextDisabled("A new folder under ~/fp8lab-figures/%s/%s: an earlier export is never replaced.",
                        lab.id.c_str(), step.logic.id.c_str());
    ImGui::BeginDisabled(e.formats().empty());
    if (ImGui::Button("Export")) {
        export_figures(app, lab, step, out);
        ImGui::CloseCurrentPopup();
    }
    ImGui::EndDisabled();
    ImGui::SameLine();
    if (ImGui::Button("Cancel")) ImGui::CloseCurrentPopup();
    ImGui::EndPopup();
}

void draw_footer(AppState& app) {
    const labs::Lab& lab = app.course.current_lab();
    const float fs = ImGui::GetFontSize();
    ImGui::BeginDisabled(app.course.lab == 0 && app.course.step == 0);
    if (ImGui::Button("< Previous")) app.previous();
    ImGui::EndDisabled();
    ImGui::SameLine();
    const std::string where = "Step " + std::to_string(app.course.step + 1) + " of " + std::to_string(lab.steps.size());
    ImGui::ProgressBar(float(app.course.step + 1) / float(lab.steps.size()),
                       ImVec2(ImGui::GetContentRegionAvail().x - fs * 7, 0), where.c_str());
    ImGui::SameLine();
    const bool last =
        app.course.lab + 1 == int(app.course.catalog.labs.size()) && app.course.step + 1 == int(lab.steps.size());
    ImGui::BeginDisabled(last);
    if (ImGui::Button("Next >")) app.next();
    ImGui::EndDisabled();
}

}  // namespace

// One column's share of a page turn (AppState::Paging), and what it has left either way.
void page_column(int request, float& below, float& above) {
    if (request) ImGui::SetScrollY(ImGui::GetScrollY() + float(request) * ImGui::GetWindowHeight() * 0.85f);
    below = ImGui::GetScrollMaxY() - ImGui::GetScrollY();
    above = ImGui::GetScrollY();
}

void draw_step_view(AppState& app) {
    const labs::Lab& lab = app.course.current_lab();
    const labs::Step& step = app.course.current_step();
    StepState& st = app.course.current_state();
    if (st.needs_run) {
        st.needs_run = false;
        // The run gets its own copy of the step, as it got one of the parameters.
        st.runner.start([step, params = st.parameters](labs::RunContext& c) { return step.run(params, c); },
                        st.backend);
    }
    const float fs = ImGui::GetFontSize();
    const float footer = ImGui::GetFrameHeightWithSpacing() + ImGui::GetStyle().ItemSpacing.y;
    // On a projector the figure comes first: the prose narrows to a caption's width (about 32
    // characters a line at 1024x768), where elsewhere it keeps a comfortable line length.
    const float avail = ImGui::GetContentRegionAvail().x;
    const float text_width =
        app.looks.presentation ? std::max(fs * 15, avail * 0.38f) : std::max(fs * 24, avail * 0.40f);

    // The columns are the step's own windows: each step keeps its scroll, a new one starts at the top.
    ImGui::PushID(app.course.step_key(lab, step).c_str());
    Looks::Paging& paging = app.looks.paging;
    ImGui::BeginChild("text", ImVec2(text_width, -footer), false);
    ImGui::PushFont(app.looks.fonts.heading[2]);
    ImGui::TextWrapped("%s", lab.title.c_str());
    ImGui::PopFont();
    ImGui::PushFont(app.looks.fonts.heading[0]);
    ImGui::TextWrapped("%s", step.title.c_str());
    ImGui::PopFont();
    draw_markdown(st.text, app.looks.markdown_fonts());
    if (!app.looks.presentation || !step.logic.parameters.empty()) {
        if (!step.logic.parameters.empty()) section("Parameters");
        ImGui::PushItemWidth(fs * 12);
        for (const labs::ParameterSpec& spec : step.logic.parameters)
            if (draw_parameter(spec, st.parameters)) st.needs_run = true;
        ImGui::PopItemWidth();
    }
    if (!app.looks.presentation) {
        section("Backend");
        draw_backend_switch(app, step, st);
        draw_run_controls(st);
        if (step.logic.training) {
            if (ImGui::Button("Train with these settings")) app.training.open = true;
            if (ImGui::IsItemHovered()) ImGui::SetTooltip("%s", step.logic.training_mapping.c_str());
        } else {
            ImGui::PushStyleColor(ImGuiCol_Text, ImGui::GetStyleColorVec4(ImGuiCol_TextDisabled));
            ImGui::TextWrapped("No training here: %s", step.logic.no_training_reason.c_str());
            ImGui::PopStyleColor();
        }
    }
    if (step.exercise) draw_exercise(app, lab, step, st);
    page_column(paging.request, paging.text_below, paging.text_above);
    ImGui::EndChild();

    ImGui::SameLine();
    ImGui::BeginChild("output", ImVec2(0, -footer), false);
    const std::shared_ptr<const labs::StepOutput> out = shown_output(app, app.course.step_key(lab, step), st);
    if (out) {
        if (!app.looks.presentation && !out->figures.empty() && ImGui::Button("Export this step's figures..."))
            app.open_export_dialog = true;
        if (app.open_export_dialog && !out->figures.empty()) {
            app.open_export_dialog = false;
            app.export_settings.style.theme = app.looks.theme;  // a slide looks like the screen unless told otherwise
            ImGui::OpenPopup("Export figures");
        }
        draw_export_dialog(app, lab, step, *out);
        if (!app.looks.presentation) {
            if (!out->figures.empty()) ImGui::SameLine();
            if (ImGui::Button("Copy link")) {
                const std::string link = labs::make_step_link(lab, step, st.parameters, st.backend);
                ImGui::SetClipboardText(link.c_str());
                app.status = "Link copied: " + link + " (fp8lab gui --open reopens this state)";
            }
        }
        const float height =
            std::clamp(ImGui::GetContentRegionAvail().y * (out->figures.size() > 1 ? 0.55f : 0.75f), fs * 14, fs * 40);
        draw_step_output(*out, app.course.step_key(lab, step).c_str(), height, app.looks.fonts.mono);
    } else if (st.runner.running()) {
        ImGui::TextDisabled("Computing...");
    }
    page_column(paging.request, paging.output_below, paging.output_above);
    ImGui::EndChild();
    ImGui::PopID();
    paging.request = 0;
    draw_footer(app);
}

}  // namespace fp8lab::gui
