// SPDX-License-Identifier: Apache-2.0
// The desktop app's entry point: opens the window and runs the lab until it is closed
// (or, with a tour, until every step has been shown and captured).
#pragma once

#include <chrono>
#include <string>

namespace fp8lab::gui {

struct GuiOptions {
    int width = 1600, height = 900;
    bool size_given = false;  // --size: exactly that; else the last session's, capped at the screen
    std::string theme;        // empty: from the settings
    std::string start;        // LAB or LAB/STEP; empty: where the user left off
    std::string open;         // an fp8lab:// link: the step, its parameters and backend
    bool presentation = false;
    bool training = false;      // open the training panel (full window in presentation mode)
    bool inspector = false;     // open the bit inspector
    bool instructor = false;    // "Reveal answer" from the start (students get it after a few tries)
    bool tour = false;          // walk every step, print frame times, then exit
    std::string screenshots;    // with tour: a PNG per step in this folder
    bool quick_runs = false;    // with tour: a step's "steps" parameter at its smallest (a layout check)
    int tour_frames = 0;        // with tour: frames timed a stop; 0: the tour's default (tour.hpp)
    std::string screenshot;     // a PNG of the window once its step has run, then exit
    std::string settings_path;  // empty: the XDG default
    std::chrono::steady_clock::time_point started = std::chrono::steady_clock::now();
};

// Returns the process exit status: 0, or 1 when the tour met an error (printed).
// Throws std::runtime_error when no window can be opened (with the reason).
int run_gui(const GuiOptions& options);

}  // namespace fp8lab::gui
