// SPDX-License-Identifier: Apache-2.0
// Links that reopen a lab step exactly as it was: fp8lab://LAB/STEP?NAME=VALUE&...&backend=gpu.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "labs/framework/catalog.hpp"
#include "labs/framework/parameters.hpp"

namespace fp8lab::labs {

// The link of a step with these parameters (every one, in the schema's order) and backend.
std::string make_step_link(const Lab& lab, const Step& step, const Parameters& parameters, Backend backend);

// What a link opens: always a valid state, the nearest to what it asked for, and what of
// the link was ignored, each with its reason ("lab 'x': no such lab; opened the first").
struct OpenedLink {
    const Lab* lab = nullptr;
    const Step* step = nullptr;
    Parameters parameters;
    Backend backend = Backend::Cpu;
    std::vector<std::string> ignored;
};

// `catalog` must hold at least one lab with a step.
OpenedLink open_step_link(const Catalog& catalog, std::string_view link);

}  // namespace fp8lab::labs
