// SPDX-License-Identifier: Apache-2.0
// md4c's callbacks build blocks of runs; drawing lays words out one by one so that bold,
// italic, code and links can share a wrapped line (ImGui's own wrapping takes one style).
#include "app/gui/markdown_view.hpp"

#include <imgui_internal.h>
#include <md4c.h>

#include <cstdlib>
#include <stdexcept>
#include <thread>

namespace fp8lab::gui {
namespace {

struct Builder {
    std::vector<MarkdownBlock> blocks;
    unsigned style = 0;
    std::string link;
    int list_depth = 0;
    std::vector<int> ordered_next;  // per list level: next number, or -1 for bullets
    bool in_quote = false;
    bool has_open = false;  // text goes to blocks.back()

    MarkdownBlock* open() { return has_open ? &blocks.back() : nullptr; }
    void start(MarkdownBlock::Kind kind, int level = 0, std::string bullet = {}) {
        blocks.push_back({kind, level, std::move(bullet), {}});
        has_open = true;
    }
    void add_text(std::string_view text) {
        if (!has_open) start(in_quote ? MarkdownBlock::Quote : MarkdownBlock::Paragraph, list_depth);
        std::vector<TextRun>& runs = blocks.back().runs;
        if (!runs.empty() && runs.back().style == style && runs.back().link == link)
            runs.back().text.append(text);
        else
            runs.push_back({std::string(text), style, link});
    }
};

int enter_block(MD_BLOCKTYPE type, void* detail, void* user) {
    Builder& b = *static_cast<Builder*>(user);
    switch (type) {
    case MD_BLOCK_H:
        b.start(MarkdownBlock::Heading, int(static_cast<MD_BLOCK_H_DETAIL*>(detail)->level));
        break;
    case MD_BLOCK_P:
        // A list item's first paragraph continues the item's block.
        if (!(b.open() && b.open()->kind == MarkdownBlock::ListItem && b.open()->runs.empty()))
            b.start(b.in_quote ? MarkdownBlock::Quote : MarkdownBlock::Paragraph, b.list_depth);
        break;
    case MD_BLOCK_CODE:
        b.start(MarkdownBlock::CodeBlock);
        break;
    case MD_BLOCK_HR:
        b.start(MarkdownBlock::Rule);
        break;
    case MD_BLOCK_QUOTE:
        b.in_quote = true;
        break;
    case MD_BLOCK_UL:
        ++b.list_depth;
        b.ordered_next.push_back(-1);
        break;
    case MD_BLOCK_OL:
        ++b.list_depth;
        b.ordered_next.push_back(int(static_cast<MD_BLOCK_OL_DETAIL*>(detail)->start));
        break;
    case MD_BLOCK_LI: {
        int& next = b.ordered_next.back();
        b.start(MarkdownBlock::ListItem, b.list_depth, next < 0 ? "\xE2\x80\xA2" : std::to_string(next++) + ".");
        break;
    }
    default:
        break;
    }
    return 0;
}

int leave_block(MD_BLOCKTYPE type, void*, void* user) {
    Builder& b = *static_cast<Builder*>(user);
    switch (type) {
    case MD_BLOCK_UL:
    case MD_BLOCK_OL:
        --b.list_depth;
        b.ordered_next.pop_back();
        break;
    case MD_BLOCK_QUOTE:
        b.in_quote = false;
        break;
    default:
        break;
    }
    b.has_open = false;
    return 0;
}

unsigned span_style(MD_SPANTYPE type) {
    switch (type) {
    case MD_SPAN_STRONG:
        return Style_Bold;
    case MD_SPAN_EM:
        return Style_Italic;
    case MD_SPAN_CODE:
        return Style_Code;
    case MD_SPAN_A:
        return Style_Link;
    default:
        return 0;
    }
}

int enter_span(MD_SPANTYPE type, void* detail, void* user) {
    Builder& b = *static_cast<Builder*>(user);
    b.style |= span_style(type);
    if (type == MD_SPAN_A) {
        const MD_ATTRIBUTE& href = static_cast<MD_SPAN_A_DETAIL*>(detail)->href;
        b.link.assign(href.text, href.size);
    }
    return 0;
}

int leave_span(MD_SPANTYPE type, void*, void* user) {
    Builder& b = *static_cast<Builder*>(user);
    b.style &= ~span_style(type);
    if (type == MD_SPAN_A) b.link.clear();
    return 0;
}

int text(MD_TEXTTYPE type, const MD_CHAR* text, MD_SIZE size, void* user) {
    Builder& b = *static_cast<Builder*>(user);
    switch (type) {
    case MD_TEXT_SOFTBR:
        b.add_text(" ");
        break;
    case MD_TEXT_BR:
        b.add_text("\n");
        break;
    case MD_TEXT_NULLCHAR:
        break;
    case MD_TEXT_ENTITY: {
        const std::string_view e(text, size);
        b.add_text(e == "&amp;" ? "&" : e == "&lt;" ? "<" : e == "&gt;" ? ">" : e == "&nbsp;" ? " " : e);
        break;
    }
    default:
        b.add_text(std::string_view(text, size));
    }
    return 0;
}

ImFont* font_for(unsigned style, const MarkdownFonts& f) {
    if (style & Style_Code) return f.mono;
    if (style & Style_Bold) return f.bold;
    if (style & Style_Italic) return f.italic;
    return f.regular;
}

void open_link(const std::string& url) {
    // Detached: xdg-open may take a while to hand over to the browser.
    std::thread([url] {
        std::string quoted = "'";
        for (char c : url) quoted += c == '\'' ? std::string("'\\''") : std::string(1, c);
        const int status = std::system(("xdg-open " + quoted + "' >/dev/null 2>&1").c_str());
        (void)status;
    }).detach();
}

// Lays out runs word by word from the cursor, wrapping at `right`, then moves the cursor
// below them. `base` is the block's font; in body text a run's style picks its own.
void draw_runs(const std::vector<TextRun>& runs, const MarkdownFonts& fonts, ImFont* base, float left, float right) {
    ImDrawList* draw = ImGui::GetWindowDrawList();
    const ImVec2 start = ImGui::GetCursorScreenPos();
    float x = left, y = start.y;
    float line_h = base->FontSize * 1.25f;
    const ImU32 text_colour = ImGui::GetColorU32(ImGuiCol_Text);
    for (const TextRun& run : runs) {
        ImFont* font =
            base == fonts.regular ? font_for(run.style, fonts) : (run.style & Style_Code ? fonts.mono : base);
        const float size = font->FontSize;
        std::size_t i = 0;
        while (i < run.text.size()) {
            if (run.text[i] == '\n') {
                x = left;
                y += line_h;
                ++i;
                continue;
            }
            // A word and the spaces after it travel together.
            std::size_t end = run.text.find_first_of(" \n", i);
            if (end == std::string::npos) end = run.text.size();
            std::size_t with_space = end;
            while (with_space < run.text.size() && run.text[with_space] == ' ') ++with_space;
            const char* a = run.text.data() + i;
            const float w = font->CalcTextSizeA(size, 1e9f, 0, a, run.text.data() + end).x;
            const float w_space = font->CalcTextSizeA(size, 1e9f, 0, a, run.text.data() + with_space).x;
            if (x > left && x + w > right) {
                x = left;
                y += line_h;
            }
            const ImVec2 pos(x, y + (line_h - size) / 2);
            ImU32 colour = text_colour;
            if (run.style & Style_Code)
                draw->AddRectFilled(ImVec2(pos.x - 1, pos.y), ImVec2(pos.x + w + 1, pos.y + size),
                                    fonts.code_background);
            if (run.style & Style_Link) {
                colour = fonts.link_colour;
                draw->AddLine(ImVec2(pos.x, pos.y + size), ImVec2(pos.x + w, pos.y + size), colour);
                const ImRect box(pos, ImVec2(pos.x + w, pos.y + size));
                if (box.Contains(ImGui::GetIO().MousePos) && ImGui::IsWindowHovered()) {
                    ImGui::SetMouseCursor(ImGuiMouseCursor_Hand);
                    ImGui::SetTooltip("%s", run.link.c_str());
                    if (ImGui::IsMouseClicked(ImGuiMouseButton_Left)) open_link(run.link);
                }
            }
            draw->AddText(font, size, pos, colour, a, run.text.data() + end);
            x += w_space;
            i = with_space;
        }
    }
    ImGui::SetCursorScreenPos(start);
    ImGui::Dummy(ImVec2(right - left, y + line_h - start.y));
}

}  // namespace

std::vector<MarkdownBlock> parse_markdown(std::string_view markdown) {
    MD_PARSER parser{};
    parser.abi_version = 0;
    parser.flags = MD_FLAG_NOHTML | MD_FLAG_STRIKETHROUGH;
    parser.enter_block = enter_block;
    parser.leave_block = leave_block;
    parser.enter_span = enter_span;
    parser.leave_span = leave_span;
    parser.text = text;
    Builder b;
    if (md_parse(markdown.data(), MD_SIZE(markdown.size()), &parser, &b) != 0)
        throw std::runtime_error("md4c could not parse the text");
    return b.blocks;
}

void draw_markdown(const std::vector<MarkdownBlock>& blocks, const MarkdownFonts& fonts) {
    const float fs = fonts.regular->FontSize;
    for (const MarkdownBlock& block : blocks) {
        const float left = ImGui::GetCursorScreenPos().x;
        const float right = left + ImGui::GetContentRegionAvail().x;
        switch (block.kind) {
        case MarkdownBlock::Heading: {
            ImFont* font = fonts.heading[std::min(block.level, 3) - 1];
            ImGui::Dummy(ImVec2(0, fs * 0.4f));
            draw_runs(block.runs, fonts, font, left, right);
            break;
        }
        case MarkdownBlock::ListItem: {
            const float indent = fs * 1.4f * float(block.level);
            ImGui::GetWindowDrawList()->AddText(
                fonts.regular, fs, ImVec2(left + indent - fs * 1.1f, ImGui::GetCursorScreenPos().y + fs * 0.12f),
                ImGui::GetColorU32(ImGuiCol_Text), block.bullet.c_str());
            draw_runs(block.runs, fonts, fonts.regular, left + indent, right);
            break;
        }
        case MarkdownBlock::CodeBlock: {
            const ImVec2 p = ImGui::GetCursorScreenPos();
            std::vector<TextRun> runs = block.runs;
            for (TextRun& r : runs) r.style = 0;
            ImDrawList* d = ImGui::GetWindowDrawList();
            d->ChannelsSplit(2);
            d->ChannelsSetCurrent(1);
            ImGui::Dummy(ImVec2(0, fs * 0.3f));
            draw_runs(runs, fonts, fonts.mono, left + fs * 0.6f, right - fs * 0.6f);
            d->ChannelsSetCurrent(0);
            d->AddRectFilled(p, ImVec2(right, ImGui::GetCursorScreenPos().y), fonts.code_background, fs * 0.2f);
            d->ChannelsMerge();
            break;
        }
        case MarkdownBlock::Rule: {
            const ImVec2 p = ImGui::GetCursorScreenPos();
            ImGui::GetWindowDrawList()->AddLine(ImVec2(left, p.y + fs * 0.5f), ImVec2(right, p.y + fs * 0.5f),
                                                ImGui::GetColorU32(ImGuiCol_Separator));
            ImGui::Dummy(ImVec2(0, fs));
            break;
        }
        case MarkdownBlock::Quote: {
            const ImVec2 p = ImGui::GetCursorScreenPos();
            draw_runs(block.runs, fonts, fonts.italic, left + fs, right);
            ImGui::GetWindowDrawList()->AddLine(ImVec2(left + fs * 0.3f, p.y),
                                                ImVec2(left + fs * 0.3f, ImGui::GetCursorScreenPos().y),
                                                fonts.link_colour, fs * 0.2f);
            break;
        }
        case MarkdownBlock::Paragraph:
            draw_runs(block.runs, fonts, fonts.regular, left, right);
            break;
        }
        if (block.kind != MarkdownBlock::ListItem) ImGui::Dummy(ImVec2(0, fs * 0.35f));
    }
}

}  // namespace fp8lab::gui
