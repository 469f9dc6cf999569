// SPDX-License-Identifier: Apache-2.0
// The course as the app walks it: the catalog, the step the user is on, each step's
// parameters, runner and exercise state, and the GPU the steps may run on.
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "app/gui/markdown_view.hpp"
#include "app/gui/step_runner.hpp"
#include "gpu/probe.hpp"
#include "labs/framework/catalog.hpp"

namespace fp8lab::gui {

struct StepState {
    labs::Parameters parameters;
    labs::Backend backend = labs::Backend::Cpu;
    StepRunner runner;
    bool needs_run = true;  // parameters or backend changed since the last run started
    std::vector<MarkdownBlock> text;
    std::string answer;
    std::optional<labs::Feedback> feedback;
    bool revealed = false;
    int wrong_tries = 0;  // this session's wrong answers: "Reveal answer" comes after a few
    // The last output with what gives the exercise's answer away hidden, and the output it
    // was made from (made once a run, not once a frame).
    std::shared_ptr<const labs::StepOutput> hidden, hidden_source;
};

// Wrong answers before a student (not an instructor) is offered the answer.
inline constexpr int kTriesBeforeReveal = 3;

struct CourseState {
    labs::Catalog catalog;
    int lab = 0, step = 0;
    std::map<std::string, std::unique_ptr<StepState>> steps;
    gpu::ProbeResult gpu;  // a step that can run on the GPU starts there where one is ready

    const labs::Lab& current_lab() const { return catalog.labs[std::size_t(lab)]; }
    const labs::Step& current_step() const { return current_lab().steps[std::size_t(step)]; }
    StepState& state_of(const labs::Lab& lab, const labs::Step& step);
    StepState& current_state() { return state_of(current_lab(), current_step()); }
    std::string step_key(const labs::Lab& lab, const labs::Step& step) const { return lab.id + "/" + step.logic.id; }
};

}  // namespace fp8lab::gui
