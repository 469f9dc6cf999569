// SPDX-License-Identifier: Apache-2.0
// The lab navigator: labs and their steps, a mark on every step whose exercise is solved.
#include <imgui.h>

#include <set>
#include <string>

#include "app/gui/app_state.hpp"
#include "labs/framework/progress.hpp"

namespace fp8lab::gui {

NavigatorChoice draw_navigator(const CourseState& course, const std::set<std::string>& solved_steps,
                               bool inspector_open) {
    NavigatorChoice choice;
    const std::vector<labs::LabProgress> progress = labs::progress_by_lab(course.catalog, solved_steps);
    int solved = 0, exercises = 0;
    for (const labs::LabProgress& p : progress) {
        solved += p.solved;
        exercises += p.exercises;
    }
    ImGui::TextDisabled("Exercises solved: %d of %d", solved, exercises);
    for (std::size_t l = 0; l < course.catalog.labs.size(); ++l) {
        const labs::Lab& lab = course.catalog.labs[l];
        const bool current_lab = int(l) == course.lab && !inspector_open;
        ImGui::SetNextItemOpen(current_lab, current_lab ? ImGuiCond_Always : ImGuiCond_Once);
        const std::string title = std::to_string(l + 1) + ". " + lab.title +
                                  (progress[l].exercises ? " (" + std::to_string(progress[l].solved) + "/" +
                                                               std::to_string(progress[l].exercises) + ")"
                                                         : "");
        if (!ImGui::TreeNodeEx(lab.id.c_str(), ImGuiTreeNodeFlags_SpanAvailWidth, "%s", title.c_str())) continue;
        for (std::size_t s = 0; s < lab.steps.size(); ++s) {
            const labs::Step& step = lab.steps[s];
            const bool solved = solved_steps.count(course.step_key(lab, step)) > 0;
            const bool selected = current_lab && int(s) == course.step;
            // \u2713: a check mark for a solved exercise; steps without one get a space.
            const std::string label = std::string(solved ? "\xE2\x9C\x93 " : "   ") + step.title + "##" + step.logic.id;
            if (ImGui::Selectable(label.c_str(), selected)) choice.step = {int(l), int(s)};
            if (step.exercise && !solved && ImGui::IsItemHovered()) ImGui::SetTooltip("exercise not solved yet");
        }
        ImGui::TreePop();
    }
    ImGui::Separator();
    choice.inspector = ImGui::Selectable("Bit inspector", inspector_open) && !inspector_open;
    return choice;
}

}  // namespace fp8lab::gui
