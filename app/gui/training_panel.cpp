// SPDX-License-Identifier: Apache-2.0
// The training panel: trains the MLP in BF16 and FP8 with the current step's settings on the
// chosen backend, shows both loss curves growing, and keeps earlier runs for comparison.
#include <imgui.h>

#include <algorithm>
#include <iterator>
#include <optional>
#include <string>

#include "app/gui/app_state.hpp"
#include "app/gui/output_view.hpp"
#include "app/gui/widgets.hpp"
#include "app/files/atomic_file.hpp"
#include "labs/experiments/training_comparison.hpp"
#include "labs/framework/training_mapping.hpp"

namespace fp8lab::gui {
namespace {

void record_finished_run(TrainingPanelState& training, std::string& status) {
    if (training.recorded || training.runner.running()) return;
    training.recorded = true;
    const std::string error = training.runner.error();
    if (!error.empty()) {
        status = error == "cancelled" ? "Training cancelled." : "Training failed: " + error;
        return;
    }
    training.runs.push_back({training.settings, training.where, training.runner.output()});
    status = "Training finished: " + training.where;
}

// The models a user can pick; the step's numerics stay as they are. input 0: the step's
// own MLP; -1: the byte-level transformer on text (its default experiment).
struct ModelSize {
    const char* label;
    int input, hidden, tokens;
};
constexpr ModelSize kSizes[] = {{"Lab default: 64-256-64, 128 tokens", 0, 0, 0},
                                {"Notebook: 768-3072-768, 32 tokens", 768, 3072, 32},
                                {"Wide: 1024-4096-1024, 256 tokens", 1024, 4096, 256},
                                {"Transformer on text: 2 blocks of 128, 8 x 128 bytes", -1, 0, 0}};

emu::Experiment sized(emu::Experiment e, int size) {
    const ModelSize& s = kSizes[size];
    if (s.input == 0) return e;
    if (s.input < 0) {  // the transformer's model, data and optimizer with the step's numerics
        emu::Experiment t = emu::default_transformer_experiment();
        t.numerics = e.numerics;
        t.numerics.edge_layers_bf16 = false;  // its output projection stays BF16 instead
        return t;
    }
    e.model.input = e.model.output = s.input;
    e.model.hidden = s.hidden;
    e.tokens = s.tokens;
    return e;
}

void save_experiment(const TrainingPanelState& training, std::string& status) {
    try {
        const std::string path = files::write_numbered_file("fp8lab-experiment", ".json", training.experiment_json);
        status = "Experiment saved: " + path + " (run it with fp8lab train --experiment " + path + ")";
    } catch (const std::exception& e) {
        status = std::string("Saving the experiment failed: ") + e.what();
    }
}

}  // namespace

// A run's output at the panel's size: full window, its figures as tall as a step's and its
// numbers in the heading font, so that a room can read them off a projector.
void draw_run_output(const labs::StepOutput& out, const char* id, bool full_window, float small_height,
                     const Looks& looks) {
    if (!full_window) {
        draw_step_output(out, id, small_height, looks.fonts.mono);
        return;
    }
    // The curves first, as tall as the window allows beside one line of numbers, then the
    // numbers large, then the rest (tables, notes).
    labs::StepOutput curves;
    curves.figures = out.figures;
    const float height = std::max(small_height, ImGui::GetContentRegionAvail().y * 0.6f);
    draw_step_output(curves, (std::string(id) + "-curves").c_str(), height, looks.fonts.mono);
    ImGui::PushFont(looks.fonts.heading[2]);
    draw_metrics(out.metrics);
    ImGui::PopFont();
    labs::StepOutput rest = out;
    rest.figures.clear();
    rest.metrics.clear();
    draw_step_output(rest, id, height, looks.fonts.mono);
}

void draw_training_panel(TrainingPanelState& training, CourseState& course, std::string& status, const Looks& looks) {
    const labs::Lab& lab = course.current_lab();
    const labs::Step& step = course.current_step();
    StepState& st = course.current_state();
    const float fs = ImGui::GetFontSize();
    record_finished_run(training, status);

    const std::optional<emu::Experiment> from_step = labs::step_experiment(step.logic, st.parameters);
    if (!from_step) {
        ImGui::TextWrapped("This step trains nothing: %s", step.logic.no_training_reason.c_str());
    } else {
        ImGui::TextWrapped("From this step: %s", step.logic.training_mapping.c_str());
        ImGui::SetNextItemWidth(fs * 20);
        if (ImGui::BeginCombo("Model##training", kSizes[training.size].label)) {
            for (int i = 0; i < int(std::size(kSizes)); ++i)
                if (ImGui::Selectable(kSizes[i].label, i == training.size)) training.size = i;
            ImGui::EndCombo();
        }
        ImGui::SetNextItemWidth(fs * 8);
        ImGui::SliderInt("Seeds (both runs on each; compared seed by seed)##training", &training.seeds, 1, 8);
        if (ImGui::RadioButton("CPU emulator##training", training.backend == labs::Backend::Cpu))
            training.backend = labs::Backend::Cpu;
        ImGui::SameLine();
        ImGui::BeginDisabled(!course.gpu.ready);
        const std::string gpu_label =
            "GPU: " + (course.gpu.device_name.empty() ? std::string("none") : course.gpu.device_name) + "##training";
        if (ImGui::RadioButton(gpu_label.c_str(), training.backend == labs::Backend::Gpu))
            training.backend = labs::Backend::Gpu;
        ImGui::EndDisabled();
        if (!course.gpu.ready) {
            ImGui::PushStyleColor(ImGuiCol_Text, ImGui::GetStyleColorVec4(ImGuiCol_TextDisabled));
            ImGui::TextWrapped("GPU unavailable: %s", course.gpu.reason.c_str());
            ImGui::PopStyleColor();
        }
        emu::Experiment experiment = sized(*from_step, training.size);
        experiment.seeds = training.seeds;
        ImGui::TextWrapped("Experiment: %s", emu::describe(experiment).c_str());
        std::string refused;
        try {
            labs::check_backend_supports(experiment, training.backend);
        } catch (const std::invalid_argument& e) {
            refused = e.what();
        }
        if (!refused.empty()) ImGui::TextWrapped("Refused by this backend: %s", refused.c_str());
        if (training.runner.running()) {
            ImGui::ProgressBar(float(training.runner.progress()), ImVec2(-fs * 6, 0),
                               training.runner.progress_text().c_str());
            ImGui::SameLine();
            if (ImGui::Button("Cancel##training")) training.runner.cancel();
        } else {
            ImGui::BeginDisabled(!refused.empty());
            if (ImGui::Button("Train BF16 and FP8")) {
                const labs::Backend backend = training.backend;
                training.settings = emu::describe(experiment);
                training.experiment_json = emu::to_json(experiment);
                training.where =
                    emu::model_name(experiment) + ", " +
                    (backend == labs::Backend::Gpu ? "GPU " + course.gpu.device_name : std::string("CPU emulator")) +
                    " (settings from " + lab.title + " / " + step.title + ")";
                training.recorded = false;
                training.runner.start(
                    [experiment](labs::RunContext& c) { return labs::run_training_comparison(experiment, c); },
                    backend);
            }
            ImGui::EndDisabled();
            if (!training.experiment_json.empty()) {
                ImGui::SameLine();
                if (ImGui::Button("Save experiment")) save_experiment(training, status);
            }
        }
    }
    if (training.runner.running() || !training.recorded) {
        if (auto out = training.runner.output())
            draw_run_output(*out, "training-live", training.full_window, fs * 16, looks);
    }
    section("Runs");
    if (training.runs.empty())
        ImGui::TextDisabled("No runs yet.");
    else if (ImGui::Button("Clear the list"))
        training.runs.clear();
    for (std::size_t i = training.runs.size(); i-- > 0;) {
        const TrainingRecord& r = training.runs[i];
        ImGui::PushID(int(i));
        const std::string header = std::to_string(i + 1) + ". " + r.where;
        if (ImGui::CollapsingHeader(header.c_str(),
                                    i + 1 == training.runs.size() ? ImGuiTreeNodeFlags_DefaultOpen : 0)) {
            ImGui::TextWrapped("%s", r.settings.c_str());
            if (r.output) draw_run_output(*r.output, "run", training.full_window, fs * 14, looks);
        }
        ImGui::PopID();
    }
}

}  // namespace fp8lab::gui
