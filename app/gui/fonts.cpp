// SPDX-License-Identifier: Apache-2.0
// Font atlas building with FreeType; italic is DejaVu Sans slanted by FreeType, so only
// fonts-dejavu-core is needed.
#include "app/gui/fonts.hpp"

#include <imgui_freetype.h>
#include <backends/imgui_impl_opengl3.h>

#include <cmath>
#include <filesystem>
#include <stdexcept>

namespace fp8lab::gui {
namespace {

// Latin, Greek, punctuation, super/subscripts, arrows, the maths symbols the labs use, and
// the check mark (U+2713) of a solved step in the navigator.
const ImWchar kGlyphRanges[] = {0x0020, 0x00FF, 0x0370, 0x03FF, 0x2000, 0x206F, 0x2070, 0x209F, 0x2190, 0x21FF,
                                0x2200, 0x22FF, 0x2500, 0x257F, 0x25A0, 0x25FF, 0x2713, 0x2713, 0};

ImFont* add(const std::string& dir, const char* file, float pixels, unsigned flags = 0) {
    const std::string path = dir + "/" + file;
    if (!std::filesystem::exists(path))
        throw std::runtime_error("font " + path + " is missing (apt-get install fonts-dejavu-core)");
    ImFontConfig config;
    config.FontBuilderFlags = flags | ImGuiFreeTypeBuilderFlags_LightHinting;
    config.OversampleH = config.OversampleV = 1;
    ImFont* font = ImGui::GetIO().Fonts->AddFontFromFileTTF(path.c_str(), pixels, &config, kGlyphRanges);
    if (!font) throw std::runtime_error("FreeType could not load " + path);
    return font;
}

}  // namespace

std::string find_font_directory() {
    for (const char* dir : {"/usr/share/fonts/truetype/dejavu", "/usr/share/fonts/dejavu", "/usr/share/fonts/TTF"})
        if (std::filesystem::exists(std::string(dir) + "/DejaVuSans.ttf")) return dir;
    return {};
}

FontSet build_fonts(float scale) {
    const std::string dir = find_font_directory();
    if (dir.empty())
        throw std::runtime_error(
            "DejaVuSans.ttf was not found in /usr/share/fonts (apt-get install fonts-dejavu-core)");
    ImFontAtlas* atlas = ImGui::GetIO().Fonts;
    atlas->Clear();
    atlas->FontBuilderIO = ImGuiFreeType::GetBuilderForFreeType();
    const float px = std::round(kBaseFontPixels * scale);
    FontSet f;
    f.pixel_size = px;
    f.regular = add(dir, "DejaVuSans.ttf", px);  // first: ImGui's default font
    f.bold = add(dir, "DejaVuSans-Bold.ttf", px);
    f.italic = add(dir, "DejaVuSans.ttf", px, ImGuiFreeTypeBuilderFlags_Oblique);
    f.mono = add(dir, "DejaVuSansMono.ttf", px);
    f.heading[0] = add(dir, "DejaVuSans-Bold.ttf", std::round(px * 1.55f));
    f.heading[1] = add(dir, "DejaVuSans-Bold.ttf", std::round(px * 1.3f));
    f.heading[2] = add(dir, "DejaVuSans-Bold.ttf", std::round(px * 1.12f));
    if (!atlas->Build()) throw std::runtime_error("the font atlas could not be built");
    ImGui_ImplOpenGL3_DestroyFontsTexture();
    ImGui_ImplOpenGL3_CreateFontsTexture();
    return f;
}

}  // namespace fp8lab::gui
