// SPDX-License-Identifier: Apache-2.0
// Labs and steps: the logic written in code, joined with the text in labs/content.
#pragma once

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "labs/framework/exercise.hpp"
#include "labs/framework/parameters.hpp"
#include "labs/framework/placeholders.hpp"
#include "labs/framework/run_context.hpp"
#include "labs/framework/step_output.hpp"
#include "emulator/training/experiment.hpp"

namespace fp8lab::labs {

// A title the step's output may carry: its key ("figure ID", "table ID") and the names of
// the values its words may quote.
struct TitleSpec {
    std::string key;
    std::vector<std::string> values = {};
};

struct StepLogic {
    std::string id;  // matches the step's heading in the lab text
    std::vector<ParameterSpec> parameters;
    std::vector<Backend> backends = {Backend::Cpu};
    std::function<StepOutput(const Parameters&, RunContext&)> run;
    // The exercise as the code computes it; its words are in the step's text
    // (step_words.hpp), and the catalog joins the two into Step::exercise.
    std::optional<ExerciseSpec> exercise;
    // Every figure and table title the output can have; the words are in the step's
    // ~~~titles block, and the catalog checks the two against each other.
    std::vector<TitleSpec> titles;
    // Values the step's prose quotes as {{name}}: the sizes of what its code measures, so
    // that the text cannot state another number.
    PlaceholderValues text_values = {};
    // The exercise is read from a recorded measurement: where that cannot be read there is
    // none, and the text's words for it go unused.
    bool exercise_from_recording = false;
    // Training: a step whose parameters can change a training run names them
    // (training_parameters), says how they map (training_mapping, shown by the panel) and
    // applies them to the labs' experiment (training). A step whose settings cannot
    // change a run has no training and says why (no_training_reason).
    std::vector<std::string> training_parameters;
    std::string training_mapping;
    std::function<void(const Parameters&, emu::Experiment&)> training;
    std::string no_training_reason;
};

struct LabLogic {
    std::string id;
    std::vector<StepLogic> steps;
};

// A step as the app shows it: logic plus its title and Markdown text.
struct Step {
    StepLogic logic;
    std::string title;
    std::string markdown;                       // placeholders still in it: render_placeholders fills them
    int text_line = 0;                          // where its heading is in the lab's file
    std::optional<Exercise> exercise;           // the code's spec with the text's words
    std::map<std::string, std::string> titles;  // each title's words by key, placeholders in them
    bool supports(Backend b) const;
    // Runs the logic and titles its figures and tables from the words. Throws
    // std::logic_error for an output item whose title the step does not declare.
    StepOutput run(const Parameters& parameters, RunContext& context) const;
};

struct Lab {
    std::string id;
    std::string title;
    std::string file;          // the lab's text file
    std::string introduction;  // Markdown before the first step
    std::vector<Step> steps;
    const Step* find_step(const std::string& id) const;
};

}  // namespace fp8lab::labs
