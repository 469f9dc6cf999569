// SPDX-License-Identifier: Apache-2.0
// The data folder beside an installed program, found from /proc/self/exe.
#include "labs/framework/data_directory.hpp"

#include <cstdlib>
#include <filesystem>
#include <system_error>

namespace fp8lab::labs {

namespace {
std::string& data_root() {
    static std::string root;
    return root;
}
}  // namespace

void set_data_root(const std::string& root) { data_root() = root; }

std::string data_directory(const char* env_variable, const char* name, const char* source_tree_path) {
    if (const char* env = std::getenv(env_variable); env && *env) return env;
    if (!data_root().empty()) return data_root() + "/" + name;
    namespace fs = std::filesystem;
    std::error_code error;
    const fs::path exe = fs::read_symlink("/proc/self/exe", error);
    if (!error && exe.parent_path().filename() == "bin") {
        const fs::path installed = exe.parent_path().parent_path() / "share" / "fp8lab" / name;
        if (fs::is_directory(installed, error)) return installed.string();
    }
    return source_tree_path;
}

}  // namespace fp8lab::labs
