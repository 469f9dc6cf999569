// SPDX-License-Identifier: Apache-2.0
// Data files the labs ship in assets/ (e.g. amax traces recorded on a GPU).
#pragma once

#include <string>

namespace fp8lab::labs {

// The assets folder: $FP8LAB_ASSETS_DIR if set, else an installed program's
// PREFIX/share/fp8lab/assets, else the source tree's assets/.
std::string assets_directory();

// The full path of a shipped file; throws std::runtime_error naming the path and the
// variable to set when it is missing.
std::string asset_path(const std::string& name);

}  // namespace fp8lab::labs
