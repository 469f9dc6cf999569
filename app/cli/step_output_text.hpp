// SPDX-License-Identifier: Apache-2.0
// A step's output for the terminal (aligned tables, metrics) and as JSON.
#pragma once

#include <string>

#include "emulator/io/json_writer.hpp"
#include "labs/framework/lab.hpp"

namespace fp8lab::cli {

std::string table_text(const labs::Table& table);
std::string step_output_text(const labs::StepOutput& output);
void write_step_output_json(json::JsonWriter& json, const labs::StepOutput& output);
void write_parameters_json(json::JsonWriter& json, const labs::Parameters& parameters);
// Opens a step's JSON object with what names it: its lab, its id, its title and the
// parameters it ran with (`labs run --json` and the figures manifest share the layout).
void begin_step_json(json::JsonWriter& json, const labs::Lab& lab, const labs::Step& step,
                     const labs::Parameters& parameters);

}  // namespace fp8lab::cli
