// SPDX-License-Identifier: Apache-2.0
// The curriculum: every lab written in code, in order, joined with its text.
#pragma once

#include <string>
#include <vector>

#include "labs/framework/catalog.hpp"

namespace fp8lab::labs {

// Every lab written in code, in curriculum order.
std::vector<LabLogic> all_lab_logic();

// The catalog of the curriculum: the lab texts in `directory` joined with all_lab_logic().
Catalog load_curriculum(const std::string& directory = content_directory());

}  // namespace fp8lab::labs
