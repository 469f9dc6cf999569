// SPDX-License-Identifier: Apache-2.0
// Where the program's shipped data (lab texts, recorded measurements) lies: an environment
// variable, else beside an installed program, else the source tree it was built from.
#pragma once

#include <string>

namespace fp8lab::labs {

// $env_variable if set; else PREFIX/share/fp8lab/<name> when the running program is
// PREFIX/bin/fp8lab and that folder exists (an installed copy finds its own data); else
// source_tree_path.
std::string data_directory(const char* env_variable, const char* name, const char* source_tree_path);

}  // namespace fp8lab::labs
