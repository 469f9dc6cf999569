// Locating shipped data, like the lab texts: an environment variable first, then the source tree.
#include "labs/asset_files.hpp"

#include <cstdlib>
#include <filesystem>
#include <stdexcept>

namespace fp8lab::labs {

std::string assets_directory() {
    if (const char* env = std::getenv("FP8LAB_ASSETS_DIR"); env && *env) return env;
    return FP8LAB_SOURCE_ASSETS_DIR;
}

std::string asset_path(const std::string& name) {
    const std::string path = assets_directory() + "/" + name;
    if (!std::filesystem::exists(path))
        throw std::runtime_error(path + " is missing (set FP8LAB_ASSETS_DIR to the folder holding fp8lab's assets)");
    return path;
}

}  // namespace fp8lab::labs
