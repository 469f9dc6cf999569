// SPDX-License-Identifier: Apache-2.0
// Where the program's shipped data (lab texts, recorded measurements) lies: an environment
// variable, else beside an installed program, else the source tree it was built from.
#pragma once

#include <string>

namespace fp8lab::labs {

// $env_variable if set; else ROOT/<name> after set_data_root(ROOT); else
// PREFIX/share/fp8lab/<name> when the running program is PREFIX/bin/fp8lab and that folder
// exists (an installed copy finds its own data); else source_tree_path.
std::string data_directory(const char* env_variable, const char* name, const char* source_tree_path);

// Where a library whose data does not sit beside the program keeps it: the Python
// package's fp8lab_data/ folder, beside the module (the interpreter is not fp8lab).
void set_data_root(const std::string& root);

}  // namespace fp8lab::labs
