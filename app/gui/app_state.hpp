// What the desktop app holds while it runs: the catalog, where the user is, each step's
// parameters, runner and exercise state, the training panel's runs, settings and looks.
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "app/export/export_settings.hpp"
#include "app/gui/fonts.hpp"
#include "app/gui/markdown_view.hpp"
#include "app/gui/settings.hpp"
#include "app/gui/step_runner.hpp"
#include "app/gui/theme.hpp"
#include "gpu/probe.hpp"
#include "labs/framework/catalog.hpp"

namespace fp8lab::gui {

struct StepState {
    labs::Parameters parameters;
    labs::Backend backend = labs::Backend::Cpu;
    StepRunner runner;
    bool needs_run = true;  // parameters or backend changed since the last run started
    std::vector<MarkdownBlock> text;
    std::string answer;
    std::optional<labs::Feedback> feedback;
    bool revealed = false;
    int wrong_tries = 0;  // this session's wrong answers: "Reveal answer" comes after a few
};

// Wrong answers before a student (not an instructor) is offered the answer.
inline constexpr int kTriesBeforeReveal = 3;

struct TrainingRecord {
    std::string settings;  // emu::describe(experiment)
    std::string where;     // "lab / step, CPU emulator"
    std::shared_ptr<const labs::StepOutput> output;
};

struct InspectorState {
    int format = 0;  // index into emu::all_formats()
    std::uint32_t code = 0x7E;
    std::string number = "0.3";
    bool saturate = true;
};

struct AppState {
    labs::Catalog catalog;
    int lab = 0, step = 0;
    bool inspector_open = false;  // the bit inspector replaces the step view
    std::map<std::string, std::unique_ptr<StepState>> steps;
    gpu::ProbeResult gpu;

    Settings settings;
    std::string settings_path;
    std::string status;  // one line at the bottom: what just happened, or what went wrong

    Theme theme = Theme::Light;
    float scale = 1;  // the user's zoom times the monitor's content scale
    float monitor_scale = 1;
    FontSet fonts;
    ThemeColours colours{};
    bool presentation = false, blank = false;
    exporter::ExportSettings export_settings;  // the export dialog's last choices
    bool open_export_dialog = false;           // asked by its button (or the tour), opened by the step view
    // Presentation mode turns pages: a presenter key first scrolls the step's columns by
    // most of their height while either has more to show, then moves to the next step.
    struct Paging {
        float text_below = 0, output_below = 0, text_above = 0, output_above = 0;  // pixels, last frame
        int request = 0;  // +1 a page down, -1 a page up, for the next frame's columns
        bool more_below() const { return text_below > 1 || output_below > 1; }
        bool more_above() const { return text_above > 1 || output_above > 1; }
    } paging;
    bool instructor = false;
    bool confirm_reset = false;  // "Reset progress" asked; the confirmation is open
    bool rebuild_fonts = true;   // scale, theme or mode changed

    bool training_open = false;
    labs::Backend training_backend = labs::Backend::Cpu;
    StepRunner training_runner;
    std::string training_settings, training_where;
    int training_size = 0;                 // index into training_sizes(): the step's model or a larger one
    std::string training_experiment_json;  // the last experiment started, for "Save experiment"
    bool training_recorded = true;         // the finished run is in training_runs
    std::vector<TrainingRecord> training_runs;

    InspectorState inspector;

    const labs::Lab& current_lab() const { return catalog.labs[std::size_t(lab)]; }
    const labs::Step& current_step() const { return current_lab().steps[std::size_t(step)]; }
    StepState& state_of(const labs::Lab& lab, const labs::Step& step);
    StepState& current_state() { return state_of(current_lab(), current_step()); }
    std::string step_key(const labs::Lab& lab, const labs::Step& step) const { return lab.id + "/" + step.logic.id; }

    void go_to(int lab, int step);  // remembers the place in the settings
    void next();
    void previous();
    void save_settings_now();  // failures go to the status line
    MarkdownFonts markdown_fonts() const;
};

// The views, one file each.
void draw_navigator(AppState& app);
void draw_step_view(AppState& app);
void draw_training_panel(AppState& app);
void draw_bit_inspector(AppState& app);

}  // namespace fp8lab::gui
