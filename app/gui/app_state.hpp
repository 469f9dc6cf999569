// SPDX-License-Identifier: Apache-2.0
// What the desktop app holds while it runs, in parts that the views receive separately:
// the course (catalog, place, steps), the looks, the training panel, the bit inspector,
// and the session's settings and status line.
#pragma once

#include <optional>
#include <set>
#include <string>
#include <utility>

#include "app/export/export_settings.hpp"
#include "app/gui/course_state.hpp"
#include "app/gui/inspector_state.hpp"
#include "app/gui/looks.hpp"
#include "app/gui/settings.hpp"
#include "app/gui/training_panel_state.hpp"

namespace fp8lab::gui {

struct AppState {
    CourseState course;
    Looks looks;
    TrainingPanelState training;
    InspectorState inspector;
    bool inspector_open = false;  // the bit inspector replaces the step view

    Settings settings;
    std::string settings_path;
    std::string status;  // one line at the bottom: what just happened, or what went wrong
    bool instructor = false;
    bool confirm_reset = false;                // "Reset progress" asked; the confirmation is open
    exporter::ExportSettings export_settings;  // the export dialog's last choices
    bool open_export_dialog = false;           // asked by its button (or the tour), opened by the step view

    void go_to(int lab, int step);  // remembers the place in the settings
    void next();
    void previous();
    void save_settings_now();  // failures go to the status line
};

// What the user chose in the navigator this frame: a step (lab, step) or the bit inspector.
struct NavigatorChoice {
    std::optional<std::pair<int, int>> step;
    bool inspector = false;
};

// The views, one file each; each takes the parts it draws. The navigator shows the course
// and the solved steps and returns the choice; the step view is the app's main view: it
// moves between steps, records solved exercises, exports and reports, so it takes the whole.
NavigatorChoice draw_navigator(const CourseState& course, const std::set<std::string>& solved_steps,
                               bool inspector_open);
void draw_step_view(AppState& app);
void draw_training_panel(TrainingPanelState& training, CourseState& course, std::string& status, const Looks& looks);
void draw_bit_inspector(InspectorState& inspector, const Looks& looks);

}  // namespace fp8lab::gui
