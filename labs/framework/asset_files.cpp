// SPDX-License-Identifier: Apache-2.0
// The recorded measurements that ship with the program, and their folder.
#include "labs/framework/asset_files.hpp"
#include "labs/framework/data_directory.hpp"

#include <cstdlib>
#include <filesystem>
#include <stdexcept>

namespace fp8lab::labs {

std::string assets_directory() { return data_directory("FP8LAB_ASSETS_DIR", "assets", FP8LAB_SOURCE_ASSETS_DIR); }

std::string asset_path(const std::string& name) {
    const std::string path = assets_directory() + "/" + name;
    if (!std::filesystem::exists(path))
        throw std::runtime_error(path + " is missing (set FP8LAB_ASSETS_DIR to the folder holding fp8lab's assets)");
    return path;
}

}  // namespace fp8lab::labs
