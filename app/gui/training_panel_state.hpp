// SPDX-License-Identifier: Apache-2.0
// The training panel's state: the run in progress, what it was started with, and the
// finished runs kept for comparison.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "app/gui/step_runner.hpp"
#include "labs/framework/run_context.hpp"
#include "labs/framework/step_output.hpp"

namespace fp8lab::gui {

struct TrainingRecord {
    std::string settings;  // emu::describe(experiment)
    std::string where;     // "lab / step, CPU emulator"
    std::shared_ptr<const labs::StepOutput> output;
};

struct TrainingPanelState {
    bool open = false;
    bool full_window = false;  // the panel in place of the step (a projector's view of a run)
    bool drawn = false;        // the last frame drew it (the tour checks its stop shows the panel)
    labs::Backend backend = labs::Backend::Cpu;
    StepRunner runner;
    std::string settings, where;  // of the run in progress (or the last one)
    int size = 0;                 // index into the panel's model sizes: the step's model or a larger one
    int seeds = 4;                // each variant trained this many times: the comparison shows its spread
    std::string experiment_json;  // the last experiment started, for "Save experiment"
    bool recorded = true;         // the finished run is in `runs`
    std::vector<TrainingRecord> runs;
};

}  // namespace fp8lab::gui
