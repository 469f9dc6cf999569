// SPDX-License-Identifier: Apache-2.0
// Lab text on screen: Markdown parsed by md4c into blocks of styled runs, drawn with
// word wrapping (headings, emphasis, inline code, code blocks, lists, quotes, links).
#pragma once

#include <imgui.h>

#include <string>
#include <string_view>
#include <vector>

namespace fp8lab::gui {

enum TextStyle : unsigned { Style_Bold = 1, Style_Italic = 2, Style_Code = 4, Style_Link = 8 };

struct TextRun {
    std::string text;
    unsigned style = 0;
    std::string link;  // Style_Link: the target
};

struct MarkdownBlock {
    enum Kind { Paragraph, Heading, ListItem, CodeBlock, Rule, Quote } kind = Paragraph;
    int level = 0;       // heading level; list nesting depth (1 = top)
    std::string bullet;  // "•" or "3."
    std::vector<TextRun> runs;
};

// Throws std::runtime_error when md4c rejects the text (it accepts any text in practice).
std::vector<MarkdownBlock> parse_markdown(std::string_view markdown);

struct MarkdownFonts {
    ImFont* regular = nullptr;
    ImFont* bold = nullptr;
    ImFont* italic = nullptr;
    ImFont* mono = nullptr;
    ImFont* heading[3] = {nullptr, nullptr, nullptr};  // levels 1, 2, 3+
    ImU32 link_colour = 0, code_background = 0;
};

// Draws the blocks in the current window, wrapping at its right edge. A click on a link
// opens it in the desktop's browser (xdg-open).
void draw_markdown(const std::vector<MarkdownBlock>& blocks, const MarkdownFonts& fonts);

}  // namespace fp8lab::gui
