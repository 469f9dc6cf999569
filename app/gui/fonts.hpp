// SPDX-License-Identifier: Apache-2.0
// The app's fonts: DejaVu from Debian's fonts-dejavu-core, rendered by FreeType at the
// current scale and rebuilt when it changes (Ctrl +/-, the monitor's content scale).
#pragma once

#include <string>

#include <imgui.h>

namespace fp8lab::gui {

struct FontSet {
    ImFont* regular = nullptr;
    ImFont* bold = nullptr;
    ImFont* italic = nullptr;
    ImFont* mono = nullptr;
    ImFont* heading[3] = {nullptr, nullptr, nullptr};
    float pixel_size = 0;  // of the regular font
};

// The body text size in pixels at scale 1 (sizes everywhere else are multiples of it).
inline constexpr float kBaseFontPixels = 17.0f;

// The folder holding the DejaVu fonts, or an empty string; searched in the usual places.
std::string find_font_directory();

// Rebuilds ImGui's atlas at kBaseFontPixels * scale and uploads it. Throws
// std::runtime_error naming the file and the package when a font is missing.
FontSet build_fonts(float scale);

}  // namespace fp8lab::gui
