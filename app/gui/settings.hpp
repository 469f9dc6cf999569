// SPDX-License-Identifier: Apache-2.0
// The app's settings and exercise progress, kept in the XDG config directory. Saving is
// atomic (written beside, then renamed); a corrupt file is reported, set aside and
// replaced by defaults, never a crash.
#pragma once

#include <iosfwd>
#include <set>
#include <string>

namespace fp8lab::gui {

struct Settings {
    std::string theme = "light";
    float scale = 1;               // the user's zoom (Ctrl +/-), applied on top of the monitor's content scale
    std::string lab, step;         // where the user was
    std::set<std::string> solved;  // "lab/step" of every exercise answered right
    int window_width = 0, window_height = 0;  // the window's last size; 0: none yet
    bool operator==(const Settings&) const = default;
};

struct LoadedSettings {
    Settings settings;
    std::string problem;   // empty when the file was fine or absent
    bool writable = true;  // false when saving would destroy a file that could not be kept
};

// $XDG_CONFIG_HOME/fp8lab/settings.ini, else $HOME/.config/fp8lab/settings.ini.
std::string default_settings_path();

// A missing file gives the defaults. A corrupt one (unknown version, a malformed line, an
// unknown key, a bad value) gives the defaults, a problem naming the line, and is renamed
// to PATH.corrupt (PATH.corrupt.2, ... when that exists) so that nothing is lost; when it
// cannot be renamed, or is no regular file, it stays and `writable` is false.
LoadedSettings load_settings(const std::string& path);

// Fills `s` from settings text; returns the first problem ("line N: ...") or "" when the
// text is a valid settings file.
std::string parse_settings(std::istream& in, Settings& s);

// Throws std::runtime_error naming the file when it cannot be written.
void save_settings(const Settings& settings, const std::string& path);

}  // namespace fp8lab::gui
