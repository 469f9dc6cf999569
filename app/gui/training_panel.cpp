// The training panel: trains the MLP in BF16 and FP8 with the current step's settings on the
// chosen backend, shows both loss curves growing, and keeps earlier runs for comparison.
#include <imgui.h>

#include <iterator>
#include <optional>

#include "app/gui/app_state.hpp"
#include "app/gui/output_view.hpp"
#include "app/gui/widgets.hpp"
#include "app/cli/atomic_file.hpp"
#include "labs/experiments/training_comparison.hpp"
#include "labs/framework/training_mapping.hpp"

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

// The model sizes a user can pick; the step's settings stay as they are.
struct ModelSize {
    const char* label;
    int input, hidden, tokens;
};
constexpr ModelSize kSizes[] = {{"Lab default: 64-256-64, 128 tokens", 0, 0, 0},
                                {"Notebook: 768-3072-768, 32 tokens", 768, 3072, 32},
                                {"Wide: 1024-4096-1024, 256 tokens", 1024, 4096, 256}};

emu::Experiment sized(emu::Experiment e, int size) {
    const ModelSize& s = kSizes[size];
    if (s.input == 0) return e;
    e.model.input = e.model.output = s.input;
    e.model.hidden = s.hidden;
    e.tokens = s.tokens;
    return e;
}

void save_experiment(AppState& app) {
    try {
        const std::string path = cli::write_numbered_file("fp8lab-experiment", ".json", app.training_experiment_json);
        app.status = "Experiment saved: " + path + " (run it with fp8lab train --experiment " + path + ")";
    } catch (const std::exception& e) {
        app.status = std::string("Saving the experiment failed: ") + e.what();
    }
}

}  // namespace

void draw_training_panel(AppState& app) {
    const labs::Lab& lab = app.current_lab();
    const labs::Step& step = app.current_step();
    StepState& st = app.current_state();
    const float fs = ImGui::GetFontSize();
    record_finished_run(app);

    const std::optional<emu::Experiment> from_step = labs::step_experiment(step.logic, st.parameters);
    if (!from_step) {
        ImGui::TextWrapped("This step trains nothing: %s", step.logic.no_training_reason.c_str());
    } else {
        ImGui::TextWrapped("From this step: %s", step.logic.training_mapping.c_str());
        ImGui::SetNextItemWidth(fs * 20);
        if (ImGui::BeginCombo("Model##training", kSizes[app.training_size].label)) {
            for (int i = 0; i < int(std::size(kSizes)); ++i)
                if (ImGui::Selectable(kSizes[i].label, i == app.training_size)) app.training_size = i;
            ImGui::EndCombo();
        }
        if (ImGui::RadioButton("CPU emulator##training", app.training_backend == labs::Backend::Cpu))
            app.training_backend = labs::Backend::Cpu;
        ImGui::SameLine();
        ImGui::BeginDisabled(!app.gpu.ready);
        const std::string gpu_label =
            "GPU: " + (app.gpu.device_name.empty() ? std::string("none") : app.gpu.device_name) + "##training";
        if (ImGui::RadioButton(gpu_label.c_str(), app.training_backend == labs::Backend::Gpu))
            app.training_backend = labs::Backend::Gpu;
        ImGui::EndDisabled();
        if (!app.gpu.ready) {
            ImGui::PushStyleColor(ImGuiCol_Text, ImGui::GetStyleColorVec4(ImGuiCol_TextDisabled));
            ImGui::TextWrapped("GPU unavailable: %s", app.gpu.reason.c_str());
            ImGui::PopStyleColor();
        }
        const emu::Experiment experiment = sized(*from_step, app.training_size);
        ImGui::TextWrapped("Experiment: %s", emu::describe(experiment).c_str());
        std::string refused;
        try {
            labs::check_backend_supports(experiment, app.training_backend);
        } catch (const std::invalid_argument& e) {
            refused = e.what();
        }
        if (!refused.empty()) ImGui::TextWrapped("Refused by this backend: %s", refused.c_str());
        if (app.training_runner.running()) {
            ImGui::ProgressBar(float(app.training_runner.progress()), ImVec2(-fs * 6, 0),
                               app.training_runner.progress_text().c_str());
            ImGui::SameLine();
            if (ImGui::Button("Cancel##training")) app.training_runner.cancel();
        } else {
            ImGui::BeginDisabled(!refused.empty());
            if (ImGui::Button("Train BF16 and FP8")) {
                const labs::Backend backend = app.training_backend;
                app.training_settings = emu::describe(experiment);
                app.training_experiment_json = emu::to_json(experiment);
                app.training_where =
                    lab.title + " / " + step.title + ", " +
                    (backend == labs::Backend::Gpu ? "GPU " + app.gpu.device_name : std::string("CPU emulator"));
                app.training_recorded = false;
                app.training_runner.start(
                    [experiment](labs::RunContext& c) { return labs::run_training_comparison(experiment, c); },
                    backend);
            }
            ImGui::EndDisabled();
            if (!app.training_experiment_json.empty()) {
                ImGui::SameLine();
                if (ImGui::Button("Save experiment")) save_experiment(app);
            }
        }
    }
    if (app.training_runner.running() || !app.training_recorded) {
        if (auto out = app.training_runner.output()) draw_step_output(*out, "training-live", fs * 16);
    }
    section("Runs");
    if (app.training_runs.empty())
        ImGui::TextDisabled("No runs yet.");
    else if (ImGui::Button("Clear the list"))
        app.training_runs.clear();
    for (std::size_t i = app.training_runs.size(); i-- > 0;) {
        const TrainingRecord& r = app.training_runs[i];
        ImGui::PushID(int(i));
        const std::string header = std::to_string(i + 1) + ". " + r.where;
        if (ImGui::CollapsingHeader(header.c_str(),
                                    i + 1 == app.training_runs.size() ? ImGuiTreeNodeFlags_DefaultOpen : 0)) {
            ImGui::TextWrapped("%s", r.settings.c_str());
            if (r.output) draw_step_output(*r.output, "run", fs * 14);
        }
        ImGui::PopID();
    }
}

}  // namespace fp8lab::gui
