// SPDX-License-Identifier: Apache-2.0
// `fp8lab labs` lists the labs; `fp8lab run LAB[/STEP]` runs steps headless.
#include <CLI/CLI.hpp>

#include <cstdio>
#include <memory>
#include <optional>
#include <string>

#include "emulator/base/quoted_input.hpp"
#include "app/options/command_options.hpp"
#include "app/cli/commands.hpp"
#include "emulator/io/json_writer.hpp"
#include "labs/framework/training_mapping.hpp"
#include "app/cli/lab_selection.hpp"
#include "app/cli/step_output_text.hpp"
#include "labs/framework/answer_outputs.hpp"
#include "app/options/usage_error.hpp"

namespace fp8lab::cli {
using options::seed_value;
using options::UsageError;
namespace {

const char* kind_name(labs::ParameterKind k) {
    switch (k) {
    case labs::ParameterKind::Choice:
        return "choice";
    case labs::ParameterKind::Integer:
        return "integer";
    case labs::ParameterKind::Float:
        return "float";
    case labs::ParameterKind::Toggle:
        return "toggle";
    }
    return "?";
}

void write_parameter_spec(json::JsonWriter& json, const labs::ParameterSpec& p) {
    json.begin_object()
        .key("name")
        .value(p.name)
        .key("label")
        .value(p.label)
        .key("kind")
        .value(kind_name(p.kind))
        .key("help")
        .value(p.help)
        .key("default")
        .value(labs::value_text(p.default_value))
        .key("accepts")
        .value(labs::accepted_values(p));
    if (p.kind == labs::ParameterKind::Choice) {
        json.key("choices").begin_array();
        for (const std::string& c : p.choices) json.value(c);
        json.end_array();
    } else if (p.kind == labs::ParameterKind::Integer) {
        json.key("min").value(p.int_min).key("max").value(p.int_max);
    } else if (p.kind == labs::ParameterKind::Float) {
        json.key("min").value(p.float_min).key("max").value(p.float_max).key("log_slider").value(p.log_slider);
    }
    json.end_object();
}

// The step's training entry: the parameters it maps and the experiment its defaults
// produce, or none with the reason.
void write_training(json::JsonWriter& json, const labs::StepLogic& step) {
    json.begin_object();
    const std::optional<emu::Experiment> e = labs::step_experiment(step, labs::Parameters(step.parameters));
    if (!e) {
        json.key("none").value(step.no_training_reason).end_object();
        return;
    }
    json.key("parameters").begin_array();
    for (const std::string& name : step.training_parameters) json.value(name);
    json.end_array().key("mapping").value(step.training_mapping);
    json.key("experiment").raw(emu::to_json(*e)).end_object();
}

void print_labs(const labs::Catalog& catalog, bool as_json) {
    if (as_json) {
        json::JsonWriter json;
        json.begin_object().key("labs").begin_array();
        for (const labs::Lab& lab : catalog.labs) {
            json.begin_object()
                .key("id")
                .value(lab.id)
                .key("title")
                .value(lab.title)
                .key("file")
                .value(lab.file)
                .key("steps")
                .begin_array();
            for (const labs::Step& s : lab.steps) {
                json.begin_object()
                    .key("id")
                    .value(s.logic.id)
                    .key("title")
                    .value(s.title)
                    .key("backends")
                    .begin_array();
                for (labs::Backend b : s.logic.backends) json.value(labs::backend_name(b));
                json.end_array().key("parameters").begin_array();
                for (const labs::ParameterSpec& p : s.logic.parameters) write_parameter_spec(json, p);
                json.end_array().key("training");
                write_training(json, s.logic);
                json.key("exercise");
                if (s.exercise)
                    json.value(s.exercise->prompt);
                else
                    json.null();
                json.end_object();
            }
            json.end_array().end_object();
        }
        json.end_array().key("errors").begin_array();
        for (const labs::TextError& e : catalog.errors) json.value(e.describe());
        json.end_array().end_object();
        std::printf("%s\n", json.text().c_str());
        return;
    }
    for (const labs::Lab& lab : catalog.labs) {
        std::printf("%s: %s\n", lab.id.c_str(), lab.title.c_str());
        for (const labs::Step& s : lab.steps) {
            std::string backends;
            for (labs::Backend b : s.logic.backends) (backends += backends.empty() ? "" : ",") += labs::backend_name(b);
            std::printf("  %s/%s: %s [%s]%s\n", lab.id.c_str(), s.logic.id.c_str(), s.title.c_str(), backends.c_str(),
                        s.exercise ? " (exercise)" : "");
            for (const labs::ParameterSpec& p : s.logic.parameters)
                std::printf("      --set %s=VALUE  %s; %s (default %s)\n", p.name.c_str(), p.help.c_str(),
                            labs::accepted_values(p).c_str(), labs::value_text(p.default_value).c_str());
        }
    }
}

struct RunOptions {
    std::string selector;
    std::vector<std::string> sets;
    std::string backend = "cpu";
    std::uint64_t seed = 1;
    bool json = false;
    std::optional<std::string> answer;  // checked against the step's exercise
    bool instructor = false;            // shows what gives an exercise's answer away
};

// The step's exercise in the JSON of `run`: its prompt and choices, and with --answer the
// answer's check (the hint the lab text gives for it).
void write_exercise_json(json::JsonWriter& json, const labs::Exercise& e, const std::optional<std::string>& answer) {
    json.key("exercise").begin_object().key("prompt").value(e.prompt);
    if (e.type == labs::AnswerType::Choice) {
        json.key("choices").begin_array();
        for (const std::string& c : e.choices) json.value(c);
        json.end_array();
    }
    if (answer) {
        const labs::Feedback f = e.check(*answer);
        json.key("answer").value(*answer).key("correct").value(f.correct).key("hint").value(f.hint);
    }
    json.end_object();
}

std::string exercise_text(const labs::Exercise& e, const std::optional<std::string>& answer) {
    std::string text = "Exercise: " + e.prompt + "\n";
    for (std::size_t i = 0; i < e.choices.size(); ++i)
        text += "  " + std::to_string(i + 1) + ". " + e.choices[i] + "\n";
    if (answer) {
        const labs::Feedback f = e.check(*answer);
        text += "Your answer, " + *answer + ": " + (f.correct ? std::string("right.") : "not right. " + f.hint) + "\n";
    }
    return text;
}

void run_steps(const RunOptions& o) {
    const labs::Catalog& catalog = lab_catalog();
    const std::vector<SelectedStep> steps = select_steps(catalog, o.selector);
    const labs::Backend backend = backend_option(o.backend);
    for (const SelectedStep& s : steps) require_backend(s, backend);
    const std::vector<labs::Parameters> params = step_parameters(steps, o.sets);
    if (o.answer && (steps.size() != 1 || !steps[0].step->exercise))
        throw UsageError(steps.size() != 1
                             ? "--answer needs one step (LAB/STEP)"
                             : "step " + emu::quoted_input(steps[0].lab->id + "/" + steps[0].step->logic.id) +
                                   " has no exercise to answer");
    json::JsonWriter json;
    if (o.json)
        json.begin_object()
            .key("backend")
            .value(labs::backend_name(backend))
            .key("seed")
            .value(std::int64_t(o.seed))
            .key("steps")
            .begin_array();
    for (std::size_t i = 0; i < steps.size(); ++i) {
        const SelectedStep& s = steps[i];
        labs::RunContext context(backend, o.seed);
        // What gives the exercise's answer away stays hidden, as in the app, until the answer
        // given is right or an instructor asks.
        const bool answered = o.answer && s.step->exercise && s.step->exercise->check(*o.answer).correct;
        const labs::StepOutput run_output = s.step->run(params[i], context);
        const labs::StepOutput output = o.instructor || answered ? run_output : labs::with_answer_hidden(run_output);
        if (o.json) {
            begin_step_json(json, *s.lab, *s.step, params[i]);
            write_step_output_json(json, output);
            if (s.step->exercise) write_exercise_json(json, *s.step->exercise, o.answer);
            json.end_object();
            continue;
        }
        std::string values;
        for (const auto& [name, value] : params[i].values()) values += " " + name + "=" + labs::value_text(value);
        std::printf("== %s/%s: %s [%s]%s\n\n%s\n", s.lab->id.c_str(), s.step->logic.id.c_str(), s.step->title.c_str(),
                    std::string(labs::backend_name(backend)).c_str(), values.c_str(), step_output_text(output).c_str());
        if (s.step->exercise) std::printf("%s\n", exercise_text(*s.step->exercise, o.answer).c_str());
        std::fflush(stdout);
    }
    if (o.json) {
        json.end_array().end_object();
        std::printf("%s\n", json.text().c_str());
    }
}

}  // namespace

void add_labs_command(CLI::App& app, CommandStatus& status) {
    CLI::App* cmd = app.add_subcommand("labs", "List the labs, their steps, parameters and backends");
    auto json = std::make_shared<bool>(false);
    cmd->add_flag("--json", *json, "Print JSON");
    cmd->callback([json, &status] {
        const labs::Catalog& catalog = lab_catalog();
        print_labs(catalog, *json);
        if (!catalog.errors.empty()) status.exit_code = 1;
    });
}

void add_run_command(CLI::App& app, CommandStatus&) {
    CLI::App* cmd = app.add_subcommand("run", "Run lab steps headless and print their tables and metrics");
    auto o = std::make_shared<RunOptions>();
    cmd->add_option("step", o->selector, "LAB or LAB/STEP (see 'fp8lab labs')")->required();
    cmd->add_option("--set", o->sets, "NAME=VALUE: a step parameter (repeatable)");
    cmd->add_option("--backend", o->backend, "cpu or gpu")->capture_default_str();
    cmd->add_option("--seed", o->seed, "Seed of every random choice")->capture_default_str()->check(seed_value());
    cmd->add_flag("--json", o->json, "Print JSON");
    cmd->add_option("--answer", o->answer, "An answer to the step's exercise: says whether it is right, and the hint");
    cmd->add_flag("--instructor", o->instructor,
                  "Show the outputs that give an exercise's answer away (hidden until it is answered right)");
    cmd->callback([o] { run_steps(*o); });
}

}  // namespace fp8lab::cli
