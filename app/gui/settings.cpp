// Settings file: "key = value" lines under a version line; read strictly, written atomically.
#include "app/gui/settings.hpp"

#include "app/cli/atomic_file.hpp"

#include <cstdlib>
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

// Fills `s` from the text; returns the first problem ("line N: ...") or an empty string.
std::string parse(std::istream& in, Settings& s) {
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
            if (value != "dark" && value != "light" && value != "projector")
                return where + "theme '" + value + "' is not dark, light or projector";
            s.theme = value;
        } else if (key == "scale") {
            char* end = nullptr;
            const float v = std::strtof(value.c_str(), &end);
            if (end == value.c_str() || *end || !(v >= 0.5f && v <= 4.0f))
                return where + "scale '" + value + "' is not a number from 0.5 to 4";
            s.scale = v;
        } else if (key == "lab") {
            s.lab = value;
        } else if (key == "step") {
            s.step = value;
        } else if (key == "solved") {
            if (value.find('/') == std::string::npos) return where + "solved '" + value + "' is not lab/step";
            s.solved.insert(value);
        } else {
            return where + "unknown key '" + key + "'";
        }
    }
    if (!versioned) return "the file is empty or has no 'version = 1' line";
    return {};
}

}  // namespace

std::string default_settings_path() {
    const char* xdg = std::getenv("XDG_CONFIG_HOME");
    if (xdg && *xdg) return std::string(xdg) + "/fp8lab/settings.ini";
    const char* home = std::getenv("HOME");
    return std::string(home && *home ? home : ".") + "/.config/fp8lab/settings.ini";
}

LoadedSettings load_settings(const std::string& path) {
    LoadedSettings loaded;
    std::ifstream in(path, std::ios::binary);
    if (!in) return loaded;  // first start: defaults
    Settings s;
    const std::string problem = parse(in, s);
    if (problem.empty()) {
        loaded.settings = s;
        return loaded;
    }
    std::error_code ec;
    fs::rename(path, path + ".corrupt", ec);
    loaded.problem = path + ": " + problem + "; using the defaults" +
                     (ec ? " (could not keep the old file: " + ec.message() + ")" : ", the old file is kept as " + path + ".corrupt");
    return loaded;
}

void save_settings(const Settings& s, const std::string& path) {
    std::ostringstream out;
    out << "# fp8lab settings, written by the app\nversion = 1\n";
    out << "theme = " << s.theme << "\nscale = " << s.scale << "\n";
    if (!s.lab.empty()) out << "lab = " << s.lab << "\n";
    if (!s.step.empty()) out << "step = " << s.step << "\n";
    for (const std::string& key : s.solved) out << "solved = " << key << "\n";
    std::error_code ec;
    fs::create_directories(fs::path(path).parent_path(), ec);
    if (ec) throw std::runtime_error("cannot create " + fs::path(path).parent_path().string() + ": " + ec.message());
    cli::write_file_atomically(path, out.str());
}

}  // namespace fp8lab::gui
