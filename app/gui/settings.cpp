// SPDX-License-Identifier: Apache-2.0
// Settings file: "key = value" lines under a version line; read strictly, written atomically.
#include "app/gui/settings.hpp"

#include "app/files/atomic_file.hpp"
#include "app/plot/figure_theme.hpp"
#include "emulator/base/quoted_input.hpp"

#include <fcntl.h>
#include <sys/stat.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>

namespace fp8lab::gui {
namespace {

namespace fs = std::filesystem;

std::string trim(const std::string& s) {
    const auto a = s.find_first_not_of(" \t\r");
    if (a == std::string::npos) return {};
    return s.substr(a, s.find_last_not_of(" \t\r") - a + 1);
}

}  // namespace

std::string parse_settings(std::istream& in, Settings& s) {
    std::string line;
    int number = 0;
    bool versioned = false;
    while (std::getline(in, line)) {
        ++number;
        line = trim(line);
        if (line.empty() || line[0] == '#') continue;
        const auto eq = line.find('=');
        if (eq == std::string::npos) return "line " + std::to_string(number) + ": expected 'key = value'";
        const std::string key = trim(line.substr(0, eq)), value = trim(line.substr(eq + 1));
        const std::string where = "line " + std::to_string(number) + ": ";
        if (!versioned) {
            if (key != "version" || value != "1") return where + "expected 'version = 1' first";
            versioned = true;
        } else if (key == "theme") {
            if (!parse_enum<plot::Theme>(value))
                return where + "theme " + emu::quoted_input(value) + " is not " + enum_choices<plot::Theme>();
            s.theme = value;
        } else if (key == "scale") {
            char* end = nullptr;
            const float v = std::strtof(value.c_str(), &end);
            if (end == value.c_str() || *end || !(v >= 0.5f && v <= 4.0f))
                return where + "scale " + emu::quoted_input(value) + " is not a number from 0.5 to 4";
            s.scale = v;
        } else if (key == "window_width" || key == "window_height") {
            char* end = nullptr;
            const long v = std::strtol(value.c_str(), &end, 10);
            if (end == value.c_str() || *end || v < 640 || v > 8000)
                return where + key + " " + emu::quoted_input(value) + " is not a whole number from 640 to 8000";
            (key == "window_width" ? s.window_width : s.window_height) = int(v);
        } else if (key == "lab") {
            s.lab = value;
        } else if (key == "step") {
            s.step = value;
        } else if (key == "solved") {
            if (value.find('/') == std::string::npos)
                return where + "solved " + emu::quoted_input(value) + " is not lab/step";
            s.solved.insert(value);
        } else {
            return where + "unknown key " + emu::quoted_input(key) + "";
        }
    }
    if (!versioned) return "the file is empty or has no 'version = 1' line";
    return {};
}

std::string default_settings_path() {
    const char* xdg = std::getenv("XDG_CONFIG_HOME");
    if (xdg && *xdg) return std::string(xdg) + "/fp8lab/settings.ini";
    const char* home = std::getenv("HOME");
    return std::string(home && *home ? home : ".") + "/.config/fp8lab/settings.ini";
}

namespace {

// Renames a corrupt file to PATH.corrupt, or PATH.corrupt.2, .3, ... : never over an
// earlier backup. Returns the name used, or empty with the reason in `error`.
std::string set_aside(const std::string& path, std::string& error) {
    for (int n = 1; n <= 1000; ++n) {
        std::string backup = path + ".corrupt";
        if (n > 1) (backup += '.') += std::to_string(n);
        if (::renameat2(AT_FDCWD, path.c_str(), AT_FDCWD, backup.c_str(), RENAME_NOREPLACE) == 0) return backup;
        if (errno != EEXIST) {
            error = std::strerror(errno);
            return {};
        }
    }
    error = "a thousand backups exist already";
    return {};
}

}  // namespace

LoadedSettings load_settings(const std::string& path) {
    LoadedSettings loaded;
    struct stat info {};
    if (::stat(path.c_str(), &info) != 0) return loaded;  // first start: defaults
    if (!S_ISREG(info.st_mode)) {                         // a folder or a FIFO: reading it would fail or block
        loaded.problem = path + ": not a regular file; using the defaults, and settings are not saved this session";
        loaded.writable = false;
        return loaded;
    }
    std::ifstream in(path, std::ios::binary);
    if (!in) {
        loaded.problem = path + ": cannot be read; using the defaults, and settings are not saved this session";
        loaded.writable = false;
        return loaded;
    }
    Settings s;
    const std::string problem = parse_settings(in, s);
    if (problem.empty()) {
        loaded.settings = s;
        return loaded;
    }
    std::string error;
    const std::string backup = set_aside(path, error);
    loaded.writable = !backup.empty();  // never replace what could not be kept
    loaded.problem = path + ": " + problem + "; using the defaults" +
                     (backup.empty() ? " (could not keep the old file: " + error +
                                           "; it is left as it is, and settings are not saved this session)"
                                     : ", the old file is kept as " + backup);
    return loaded;
}

void save_settings(const Settings& s, const std::string& path) {
    std::ostringstream out;
    out << "# fp8lab settings, written by the app\nversion = 1\n";
    out << "theme = " << s.theme << "\nscale = " << s.scale << "\n";
    if (s.window_width > 0 && s.window_height > 0)
        out << "window_width = " << s.window_width << "\nwindow_height = " << s.window_height << "\n";
    if (!s.lab.empty()) out << "lab = " << s.lab << "\n";
    if (!s.step.empty()) out << "step = " << s.step << "\n";
    for (const std::string& key : s.solved) out << "solved = " << key << "\n";
    // A bare file name ("s.ini") is in the current folder, which exists: nothing to create
    // (create_directories("") fails, and the settings were never saved).
    const fs::path folder = fs::path(path).parent_path();
    std::error_code ec;
    if (!folder.empty()) fs::create_directories(folder, ec);
    if (ec) throw std::runtime_error("cannot create " + folder.string() + ": " + ec.message());
    files::write_file_atomically(path, out.str());
}

}  // namespace fp8lab::gui
