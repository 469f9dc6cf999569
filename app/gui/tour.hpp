// SPDX-License-Identifier: Apache-2.0
// The screenshot tour: walks every step of every lab, the bit inspector and the training
// panel; waits for each to settle, times its frames, saves a PNG, and reports errors.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "app/gui/app_state.hpp"
#include "app/gui/window.hpp"

namespace fp8lab::gui {

class Tour {
  public:
    // quick_runs: each step with an integer "steps" parameter runs at its smallest value,
    // and each stop times 8 frames instead of 30 (a check of the layout, not of speed).
    // measured_frames: frames timed a stop, where not 0 (the default, 30 or 8).
    Tour(const AppState& app, std::string screenshot_dir, bool quick_runs, int measured_frames = 0);
    bool finished() const { return key_ >= keys_.size() && stop_ >= stops_.size(); }
    void before_frame(AppState& app);  // moves to the current stop when it begins
    // After rendering, before presenting: records the frame time, takes the screenshot.
    void after_frame(AppState& app, const Window& window, double frame_ms);
    // Prints per-stop frame statistics; returns 0, or 1 when any stop failed.
    int report(double startup_ms) const;

  private:
    struct Stop {
        std::string name;  // file name stem and report label
        int lab = 0, step = 0;
        bool inspector = false, training = false, export_dialog = false;
        std::vector<double> frame_ms = {};
        std::string error = {};
    };
    // Presenter keys, pressed through ImGui's key state before the stops: each press must
    // move the app where the check says.
    struct KeyPress {
        int key;
        const char* what;
        std::function<bool(const AppState&)> check;
        bool ctrl = false;
        int presses = 1;  // pressed again, up to this many times, until the check holds
    };
    void press_keys_before(AppState& app);
    void check_keys_after(AppState& app);
    std::vector<KeyPress> keys_;
    std::size_t key_ = 0;
    int presses_ = 0;  // of the current key
    bool key_down_ = false;
    static constexpr int kKeyRestFrames = 3;
    int key_rest_ = 0;           // frames left with the keys up before the next press
    bool presentation_ = false;  // the mode asked for, restored after the key checks
    std::vector<std::string> key_errors_;

    enum class Phase { Enter, Settle, Measure };
    std::vector<Stop> stops_;
    std::size_t stop_ = 0;
    Phase phase_ = Phase::Enter;
    int frames_in_phase_ = 0;
    int clipped_before_ = 0;           // clipped_plot_titles() when the stop's measured frames began
    int short_before_ = 0;             // short_plots(), likewise
    int unfitted_before_ = 0;          // tables_not_fitted(), likewise
    std::size_t overlaps_before_ = 0;  // overlapping_plot_labels(), likewise
    std::size_t legends_before_ = 0;   // legends_over_data(), likewise
    double waited_ms_ = 0;
    std::string dir_;
    bool quick_runs_ = false;
    int measured_frames_ = 0;  // frames timed at each stop
    int quick_steps_ = 0;      // stops whose "steps" the quick runs lowered
};

}  // namespace fp8lab::gui
