// SPDX-License-Identifier: Apache-2.0
// Tour phases per stop: enter (navigate), settle (runners idle, layout stable), measure
// (frame times), capture (PNG). A step that fails or never settles fails the tour.
#include "app/gui/tour.hpp"

#define GLFW_INCLUDE_NONE
#include <GLFW/glfw3.h>
#include <imgui.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>

#include "app/gui/output_view.hpp"
#include "app/gui/plot.hpp"
#include "labs/experiments/training_comparison.hpp"
#include "labs/framework/training_mapping.hpp"

namespace fp8lab::gui {
namespace {

constexpr int kSettleFrames = 4;
// Frames timed at each stop; the layout checks compare the first of them with the last. A
// quick tour checks the layout, not the frame times: 8 frames are enough for that.
constexpr int kMeasuredFrames = 30;
constexpr int kQuickMeasuredFrames = 8;
constexpr double kSettleTimeoutMs = 60000;

std::string two_digits(std::size_t n) { return n < 10 ? std::string(1, '0') += std::to_string(n) : std::to_string(n); }

double percentile(std::vector<double> v, double p) {
    if (v.empty()) return 0;
    std::sort(v.begin(), v.end());
    return v[std::min(v.size() - 1, std::size_t(p * double(v.size() - 1) + 0.5))];
}

}  // namespace

Tour::Tour(const AppState& app, std::string dir, bool quick_runs, int measured_frames)
    : dir_(std::move(dir)),
      quick_runs_(quick_runs),
      measured_frames_(measured_frames > 0 ? measured_frames
                       : quick_runs        ? kQuickMeasuredFrames
                                           : kMeasuredFrames) {
    check_plot_layouts(true);
    std::size_t n = 0;
    for (std::size_t l = 0; l < app.course.catalog.labs.size(); ++l) {
        const labs::Lab& lab = app.course.catalog.labs[l];
        for (std::size_t s = 0; s < lab.steps.size(); ++s)
            stops_.push_back({two_digits(++n) + "-" + lab.id + "-" + lab.steps[s].logic.id, int(l), int(s)});
    }
    stops_.push_back({two_digits(++n) + "-bit-inspector", 0, 0, true});
    const int last = int(app.course.catalog.labs.at(0).steps.size()) - 1;
    keys_ = {
        {GLFW_KEY_PAGE_DOWN, "PageDown goes to the next step", [](const AppState& a) { return a.course.step == 1; }},
        {GLFW_KEY_SPACE, "Space goes to the next step", [](const AppState& a) { return a.course.step == 2; }},
        {GLFW_KEY_LEFT, "Left goes back", [](const AppState& a) { return a.course.step == 1; }},
        {GLFW_KEY_END, "End goes to the lab's last step", [last](const AppState& a) { return a.course.step == last; }},
        {GLFW_KEY_HOME, "Home goes to the lab's first step", [](const AppState& a) { return a.course.step == 0; }},
        {GLFW_KEY_N, "N goes to the next step", [](const AppState& a) { return a.course.step == 1; }},
        {GLFW_KEY_P, "P goes back", [](const AppState& a) { return a.course.step == 0; }},
        {GLFW_KEY_B, "B blanks the screen", [](const AppState& a) { return a.looks.blank; }},
        {GLFW_KEY_B, "B again brings it back", [](const AppState& a) { return !a.looks.blank; }},
        {GLFW_KEY_T, "T shows plot tooltips in presentation mode",
         [](const AppState& a) { return a.looks.projector_tooltips; }},
        {GLFW_KEY_T, "T again hides them", [](const AppState& a) { return !a.looks.projector_tooltips; }},
        {GLFW_KEY_F5, "F5 enters presentation mode", [](const AppState& a) { return a.looks.presentation; }},
        // The first step does not fit the screen in presentation mode (its exercise and
        // table lie below): the presenter keys page through it before moving on.
        {GLFW_KEY_PAGE_DOWN, "PageDown pages down a step that does not fit",
         [](const AppState& a) { return a.course.step == 0 && a.looks.paging.more_below(); }},
        {GLFW_KEY_PAGE_DOWN, "PageDown moves on only at the step's end",
         [](const AppState& a) { return a.course.step == 1; }, false, 12},
        {GLFW_KEY_PAGE_UP, "PageUp goes back to the previous step's end",
         [](const AppState& a) { return a.course.step == 0 && a.looks.paging.more_above(); }},
        {GLFW_KEY_PAGE_UP, "PageUp pages up to its start",
         [](const AppState& a) { return a.course.step == 0 && !a.looks.paging.more_above(); }, false, 12},
        {GLFW_KEY_F5, "F5 leaves it", [](const AppState& a) { return !a.looks.presentation; }},
        {GLFW_KEY_EQUAL, "Ctrl + zooms in", [](const AppState& a) { return a.settings.scale > 1.05f; }, true},
        {GLFW_KEY_0, "Ctrl 0 returns to actual size", [](const AppState& a) { return a.settings.scale == 1.0f; },
         true}};
    stops_.push_back({two_digits(++n) + "-training-panel", 0, 0, false, true});
    stops_.push_back({two_digits(++n) + "-export-dialog", 0, 0, false, false, true});  // last: it stays open
    if (!dir_.empty()) std::filesystem::create_directories(dir_);
}

void Tour::press_keys_before(AppState& app) {
    if (key_ == 0) {  // the checks start from the first step, outside presentation mode
        app.go_to(0, 0);
        presentation_ = app.looks.presentation;
        app.looks.presentation = false;
        app.looks.rebuild_fonts = true;
    }
    ImGuiIO& io = ImGui::GetIO();
    io.KeysDown[keys_[key_].key] = true;
    io.KeysDown[GLFW_KEY_LEFT_CONTROL] = io.KeyCtrl = keys_[key_].ctrl;
    key_down_ = true;
}

void Tour::check_keys_after(AppState& app) {
    ImGuiIO& io = ImGui::GetIO();
    io.KeysDown[keys_[key_].key] = false;
    io.KeysDown[GLFW_KEY_LEFT_CONTROL] = io.KeyCtrl = false;
    key_down_ = false;
    const KeyPress& k = keys_[key_];
    const bool ok = k.check(app);
    key_rest_ = kKeyRestFrames;
    if (!ok && ++presses_ < k.presses) return;  // the same key again after the rest frame
    std::fprintf(stderr, "tour keys: %-44s %s (%d press%s)\n", k.what, ok ? "ok" : "FAILED", presses_ + (ok ? 1 : 0),
                 presses_ + (ok ? 1 : 0) == 1 ? "" : "es");
    if (!ok) key_errors_.push_back(k.what);
    ++key_;
    presses_ = 0;
    if (key_ == keys_.size() && app.looks.presentation != presentation_) {
        app.looks.presentation = presentation_;
        app.looks.rebuild_fonts = true;
    }
}

void Tour::before_frame(AppState& app) {
    if (key_ < keys_.size()) {
        // The key goes down for one frame, then stays up for a few, so that ImGui sees
        // every press as a new one (the same key may follow itself) and a key that changes
        // the mode or the zoom has its new layout measured before the next key reads it
        // (ImGui's content sizes trail by a frame, and fonts are rebuilt at the next).
        if (key_rest_ > 0)
            --key_rest_;
        else if (!key_down_)
            press_keys_before(app);
        return;
    }
    if (finished() || phase_ != Phase::Enter) return;
    Stop& s = stops_[stop_];
    app.looks.blank = false;  // a blank screen draws no step, and the step would never start
    app.go_to(s.lab, s.step);
    if (quick_runs_ && !s.inspector && !s.training)
        for (const labs::ParameterSpec& spec : app.course.current_step().logic.parameters)
            if (spec.name == "steps" && spec.kind == labs::ParameterKind::Integer) {
                StepState& state = app.course.current_state();
                state.parameters.set("steps", spec.int_min);
                state.needs_run = true;
                ++quick_steps_;
            }
    app.inspector_open = s.inspector;
    app.training.open = s.training;
    app.training.full_window = s.training && app.looks.presentation;  // as a projector would show a run
    app.open_export_dialog = s.export_dialog;
    if (s.training) {
        emu::Experiment settings = labs::lab_experiment();
        settings.steps = 60;  // enough for both curves to be visible, short on 2 cores
        app.training.settings = emu::describe(settings);
        app.training.where = "tour, CPU emulator";
        app.training.recorded = false;
        app.training.runner.start(
            [settings](labs::RunContext& c) { return labs::run_training_comparison(settings, c); }, labs::Backend::Cpu);
    }
    phase_ = Phase::Settle;
    frames_in_phase_ = 0;
    waited_ms_ = 0;
}

void Tour::after_frame(AppState& app, const Window& window, double frame_ms) {
    if (key_ < keys_.size()) {
        if (key_down_) check_keys_after(app);
        return;
    }
    if (finished() || phase_ == Phase::Enter) return;
    Stop& s = stops_[stop_];
    if (phase_ == Phase::Settle) {
        waited_ms_ += frame_ms;
        StepRunner& runner = s.training ? app.training.runner : app.course.current_state().runner;
        const bool busy = runner.running() || (!s.inspector && !s.training && app.course.current_state().needs_run);
        frames_in_phase_ = busy ? 0 : frames_in_phase_ + 1;
        if (waited_ms_ > kSettleTimeoutMs)
            s.error = "did not settle within " + std::to_string(int(kSettleTimeoutMs / 1000)) + " s";
        else if (!s.inspector && !busy && !runner.error().empty())
            s.error = runner.error();
        if (!s.error.empty() || frames_in_phase_ >= kSettleFrames) {
            phase_ = Phase::Measure;
            frames_in_phase_ = 0;
        }
        return;
    }
    s.frame_ms.push_back(frame_ms);
    if (frames_in_phase_ == 0) {
        clipped_before_ = clipped_plot_titles();
        short_before_ = short_plots();
        unfitted_before_ = tables_not_fitted();
        overlaps_before_ = overlapping_plot_labels();
        legends_before_ = legends_over_data();
    }
    if (++frames_in_phase_ < measured_frames_) return;
    if (clipped_plot_titles() > clipped_before_ && s.error.empty())
        s.error = "a plot title does not fit its plot, even wrapped";
    if (tables_not_fitted() > unfitted_before_ && s.error.empty())
        s.error = "a table scrolls or leaves blank room below its last row, though it fits";
    if (short_plots() > short_before_ && s.error.empty())
        s.error = "a plot's frame is shorter than " + std::to_string(int(kShortestFrame)) + " lines of text";
    if (overlapping_plot_labels() > overlaps_before_ && s.error.empty())
        s.error = "a plot draws labels over each other";
    if (legends_over_data() > legends_before_ && s.error.empty()) s.error = "a plot's legend covers its data";
    if (s.training && !app.training.drawn && s.error.empty()) s.error = "the training panel is not drawn";
    if (!dir_.empty()) {
        try {
            int w = 0, h = 0;
            const std::vector<std::uint8_t> pixels = window.read_pixels(w, h);
            write_png(dir_ + "/" + s.name + ".png", pixels, w, h);
        } catch (const std::exception& e) {
            if (s.error.empty()) s.error = e.what();
        }
    }
    std::fprintf(stderr, "tour %zu/%zu %-48s median %6.2f ms, worst %6.2f ms%s%s\n", stop_ + 1, stops_.size(),
                 s.name.c_str(), percentile(s.frame_ms, 0.5), percentile(s.frame_ms, 1.0),
                 s.error.empty() ? "" : "  ERROR: ", s.error.c_str());
    ++stop_;
    phase_ = Phase::Enter;
}

int Tour::report(double startup_ms) const {
    int failed = 0;
    double worst_median = 0;
    std::string worst_name;
    std::vector<double> all;
    for (const Stop& s : stops_) {
        failed += !s.error.empty();
        const double median = percentile(s.frame_ms, 0.5);
        if (median > worst_median) {
            worst_median = median;
            worst_name = s.name;
        }
        all.insert(all.end(), s.frame_ms.begin(), s.frame_ms.end());
    }
    std::printf("presenter keys: %zu checked, %zu failed\n", keys_.size(), key_errors_.size());
    for (const std::string& k : key_errors_) std::printf("FAILED key: %s\n", k.c_str());
    failed += int(key_errors_.size());
    std::printf("tour: %zu stops, %d failed\n", stops_.size(), failed);
    if (quick_runs_) std::printf("quick runs: %d steps ran at their smallest \"steps\"\n", quick_steps_);
    std::printf("frames timed at each stop: %d\n", measured_frames_);
    std::printf("start-up to first frame: %.0f ms\n", startup_ms);
    // Draw lists past 65536 vertices need the renderer's vertex offsets (16-bit indices).
    std::printf("renderer draws with vertex offsets: %s\n",
                ImGui::GetIO().BackendFlags & ImGuiBackendFlags_RendererHasVtxOffset ? "yes" : "no");
    std::printf("frame time over all stops: median %.2f ms, 95th percentile %.2f ms\n", percentile(all, 0.5),
                percentile(all, 0.95));
    std::printf("slowest stop by median: %s, %.2f ms\n", worst_name.c_str(), worst_median);
    for (const Stop& s : stops_)
        if (!s.error.empty()) std::printf("FAILED %s: %s\n", s.name.c_str(), s.error.c_str());
    return failed ? 1 : 0;
}

}  // namespace fp8lab::gui
