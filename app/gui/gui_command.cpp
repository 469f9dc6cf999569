// SPDX-License-Identifier: Apache-2.0
// `fp8lab gui`: opens the desktop lab; `--tour --screenshots DIR` walks and captures every step.
#include <CLI/CLI.hpp>

#include <cstdio>
#include <memory>

#include "app/cli/commands.hpp"
#include "app/options/command_options.hpp"
#include "app/options/usage_error.hpp"
#include "app/gui/lab_app.hpp"

namespace fp8lab::cli {
using options::check_output_option;
using options::pixel_size_option;
using options::PixelSize;
using options::UsageError;

void add_gui_command(CLI::App& app, CommandStatus& status) {
    auto options = std::make_shared<gui::GuiOptions>();
    auto size = std::make_shared<std::string>("1600x900");
    CLI::App* cmd = app.add_subcommand("gui",
                                       "Open the desktop lab (Dear ImGui): step-through labs, bit inspector, "
                                       "training panel");
    cmd->add_option("--start", options->start, "Open at LAB or LAB/STEP (default: where you left off)");
    // Also positional, for the desktop entry's "fp8lab gui %u" (which gives no word when
    // the menu opens the program without a link).
    cmd->add_option("--open,link", options->open,
                    "Open an fp8lab://LAB/STEP?NAME=VALUE&... link (the step's \"Copy link\")");
    cmd->add_option("--theme", options->theme, "light, dark or projector (default: the saved one)");
    cmd->add_flag("--presentation", options->presentation, "Start in presentation mode (F5 toggles it)");
    cmd->add_flag("--training", options->training,
                  "Open the training panel (full window in presentation mode; F6 shows or hides it, F7 "
                  "switches between full window and beside the step)");
    cmd->add_flag("--inspector", options->inspector, "Open the bit inspector");
    cmd->add_flag("--instructor", options->instructor,
                  "Show \"Reveal answer\" at once (students see it after 3 tries)");
    cmd->add_option("--size", *size,
                    "Window size WIDTHxHEIGHT (default: the last session's, else 1600x900, at most the screen)")
        ->capture_default_str();
    cmd->add_option("--settings", options->settings_path,
                    "Settings file (default: $XDG_CONFIG_HOME/fp8lab/settings.ini)");
    cmd->add_flag("--tour", options->tour, "Walk every step, print frame times per step, then exit (1 on any error)");
    cmd->add_option("--screenshots", options->screenshots, "With --tour: save a PNG of every step in this folder");
    cmd->add_flag("--quick-runs", options->quick_runs,
                  "With --tour: run the steps that train or iterate at their smallest \"steps\" and time 8 "
                  "frames a step instead of 30 (checks the layout, not the results or the speed)");
    cmd->add_option("--frames", options->tour_frames,
                    "With --tour: frames to time at each step (default 30, or 8 with --quick-runs)")
        ->check(options::integer_in({2, 1000}));
    cmd->add_option("--screenshot", options->screenshot, "Save a PNG of the window once its step has run, then exit");
    cmd->callback([options, size, cmd, &status] {
        const PixelSize window = pixel_size_option("--size", *size, {640, 400}, {8000, 8000});
        check_output_option(*cmd, "--screenshot", options->screenshot);  // before the window opens
        if (!options->screenshots.empty() && !options->tour) throw UsageError("--screenshots needs --tour");
        if (options->quick_runs && !options->tour) throw UsageError("--quick-runs needs --tour");
        if (options->tour_frames && !options->tour) throw UsageError("--frames needs --tour");
        if (!options->open.empty() && !options->start.empty()) throw UsageError("--open and --start: give one");
        if (options->training && options->inspector) throw UsageError("--training and --inspector: give one");
        if (!options->screenshot.empty() && options->tour)
            throw UsageError("--screenshot and --tour: the tour takes --screenshots DIR");
        options->width = window.width;
        options->height = window.height;
        options->size_given = cmd->count("--size") > 0;
        status.exit_code = gui::run_gui(*options);
    });
}

}  // namespace fp8lab::cli
