// The training panel: trains the MLP in BF16 and FP8 with the current step's settings on the
// chosen backend, shows both loss curves growing, and keeps earlier runs for comparison.
#include <imgui.h>

#include "app/gui/app_state.hpp"
#include "app/gui/output_view.hpp"
#include "app/gui/widgets.hpp"
#include "labs/training_comparison.hpp"

namespace fp8lab::gui {
namespace {

void record_finished_run(AppState& app) {
    if (app.training_recorded || app.training_runner.running()) return;
    app.training_recorded = true;
    const std::string error = app.training_runner.error();
    if (!error.empty()) {
        app.status = error == "cancelled" ? "Training cancelled." : "Training failed: " + error;
        return;
    }
    app.training_runs.push_back({app.training_settings, app.training_where, app.training_runner.output()});
    app.status = "Training finished: " + app.training_where;
}

}  // namespace

void draw_training_panel(AppState& app) {
    const labs::Lab& lab = app.current_lab();
    const labs::Step& step = app.current_step();
    StepState& st = app.current_state();
    const float fs = ImGui::GetFontSize();
    record_finished_run(app);

    labs::TrainingSettings settings;
    if (step.logic.training) step.logic.training(st.parameters, settings);
    ImGui::TextWrapped("%s", step.logic.training
                                 ? ("From this step: " + step.logic.training_mapping).c_str()
                                 : "This step has no FP8 settings: the trainer's defaults are used.");
    ImGui::TextWrapped("Settings: %s", labs::describe(settings).c_str());

    if (ImGui::RadioButton("CPU emulator##training", app.training_backend == labs::Backend::Cpu))
        app.training_backend = labs::Backend::Cpu;
    ImGui::SameLine();
    ImGui::BeginDisabled(!app.gpu.ready);
    const std::string gpu_label = "GPU: " + (app.gpu.device_name.empty() ? std::string("none") : app.gpu.device_name) + "##training";
    if (ImGui::RadioButton(gpu_label.c_str(), app.training_backend == labs::Backend::Gpu))
        app.training_backend = labs::Backend::Gpu;
    ImGui::EndDisabled();
    if (!app.gpu.ready) {
        ImGui::PushStyleColor(ImGuiCol_Text, ImGui::GetStyleColorVec4(ImGuiCol_TextDisabled));
        ImGui::TextWrapped("GPU unavailable: %s", app.gpu.reason.c_str());
        ImGui::PopStyleColor();
    }

    if (app.training_runner.running()) {
        ImGui::ProgressBar(float(app.training_runner.progress()), ImVec2(-fs * 6, 0),
                           app.training_runner.progress_text().c_str());
        ImGui::SameLine();
        if (ImGui::Button("Cancel##training")) app.training_runner.cancel();
    } else if (ImGui::Button("Train BF16 and FP8")) {
        const labs::Backend backend = app.training_backend;
        app.training_settings = labs::describe(settings);
        app.training_where = lab.title + " / " + step.title + ", " +
                             (backend == labs::Backend::Gpu ? "GPU " + app.gpu.device_name : std::string("CPU emulator"));
        app.training_recorded = false;
        app.training_runner.start([settings](labs::RunContext& c) { return labs::run_training_comparison(settings, c); },
                                  backend);
    }
    if (app.training_runner.running() || !app.training_recorded) {
        if (auto out = app.training_runner.output()) draw_step_output(*out, "training-live", fs * 16);
    }

    section("Runs");
    if (app.training_runs.empty()) ImGui::TextDisabled("No runs yet.");
    else if (ImGui::Button("Clear the list")) app.training_runs.clear();
    for (std::size_t i = app.training_runs.size(); i-- > 0;) {
        const TrainingRecord& r = app.training_runs[i];
        ImGui::PushID(int(i));
        const std::string header = std::to_string(i + 1) + ". " + r.where;
        if (ImGui::CollapsingHeader(header.c_str(), i + 1 == app.training_runs.size() ? ImGuiTreeNodeFlags_DefaultOpen : 0)) {
            ImGui::TextWrapped("%s", r.settings.c_str());
            if (r.output) draw_step_output(*r.output, "run", fs * 14);
        }
        ImGui::PopID();
    }
}

}  // namespace fp8lab::gui
