// SPDX-License-Identifier: Apache-2.0
// `fp8lab progress FILE...`: the progress files students hand in, as one table per class.
#include <CLI/CLI.hpp>

#include <cstdio>
#include <fstream>
#include <memory>
#include <sstream>

#include "app/cli/commands.hpp"
#include "app/cli/lab_selection.hpp"
#include "emulator/io/user_files.hpp"
#include "labs/framework/progress.hpp"

namespace fp8lab::cli {
namespace {

std::string read_whole(const std::string& path) { return emu::read_user_file("progress file", path); }

// A name as one table cell of `width` columns: valid UTF-8 kept (a character is one column),
// control characters and bytes that are not UTF-8 shown as \xNN (never sent to the
// terminal), cut at a character's boundary and padded, so the columns stay aligned.
std::string name_cell(const std::string& name, std::size_t width) {
    static constexpr char kHex[] = "0123456789abcdef";
    std::string out;
    std::size_t columns = 0;
    const auto escape = [&](unsigned char c) { return std::string("\\x") + kHex[c >> 4] + kHex[c & 15]; };
    for (std::size_t i = 0; i < name.size();) {
        const unsigned char c = static_cast<unsigned char>(name[i]);
        // The length of a well-formed sequence starting here (0: not one), and its code point.
        std::size_t length = c < 0x80             ? 1
                             : (c & 0xE0) == 0xC0 ? 2
                             : (c & 0xF0) == 0xE0 ? 3
                             : (c & 0xF8) == 0xF0 ? 4
                                                  : 0;
        std::uint32_t code = length == 1 ? c : length == 2 ? c & 0x1Fu : length == 3 ? c & 0x0Fu : c & 0x07u;
        for (std::size_t k = 1; k < length; ++k) {
            const unsigned char next = i + k < name.size() ? static_cast<unsigned char>(name[i + k]) : 0;
            if ((next & 0xC0) != 0x80) {
                length = 0;
                break;
            }
            code = (code << 6) | (next & 0x3Fu);
        }
        static constexpr std::uint32_t kLeast[] = {0, 0, 0x80, 0x800, 0x10000};  // overlong forms are not UTF-8
        if (length > 1 && (code < kLeast[length] || code > 0x10FFFF || (code >= 0xD800 && code <= 0xDFFF))) length = 0;
        const bool control = length == 1 ? (c < 0x20 || c == 0x7F) : (length == 2 && code >= 0x80 && code <= 0x9F);
        const std::size_t taken = length == 0 ? 1 : length;
        std::string piece;
        if (length == 0 || control)
            for (std::size_t k = 0; k < taken; ++k) piece += escape(static_cast<unsigned char>(name[i + k]));
        else
            piece = name.substr(i, length);
        const std::size_t piece_columns = length == 0 || control ? 4 * taken : 1;
        if (columns + piece_columns > width) break;
        out += piece;
        columns += piece_columns;
        i += taken;
    }
    return out + std::string(width - columns, ' ');
}

// A row per file that could be read (a bad one is named on stderr, the rest still shown),
// a column per lab: solved of its exercises; then the total. Exit status 1 when any file
// was refused.
void print_progress(const std::vector<std::string>& files, CommandStatus& status) {
    const labs::Catalog& catalog = lab_catalog();
    std::printf("%-24s", "student");
    for (std::size_t l = 0; l < catalog.labs.size(); ++l) std::printf(" %6s", ("lab " + std::to_string(l + 1)).c_str());
    std::printf("  %s\n", "total");
    for (const std::string& path : files) {
        labs::ProgressFile file;
        try {
            file = labs::read_progress_file(read_whole(path), path);
        } catch (const std::exception& e) {
            std::fprintf(stderr, "fp8lab progress: %s\n", e.what());
            status.exit_code = 1;
            continue;
        }
        std::printf("%s", name_cell(file.student, 24).c_str());
        int solved = 0, exercises = 0;
        for (const labs::LabProgress& p : labs::progress_by_lab(catalog, file.solved)) {
            std::printf(" %6s", (std::to_string(p.solved) + "/" + std::to_string(p.exercises)).c_str());
            solved += p.solved;
            exercises += p.exercises;
        }
        std::printf("  %d/%d\n", solved, exercises);
    }
}

}  // namespace

void add_progress_command(CLI::App& app, CommandStatus& status) {
    auto files = std::make_shared<std::vector<std::string>>();
    CLI::App* cmd = app.add_subcommand("progress",
                                       "Summarise the progress files students exported from the lab "
                                       "(Progress > Export progress)");
    cmd->add_option("files", *files, "Progress files")->required();
    cmd->callback([files, &status] { print_progress(*files, status); });
}

}  // namespace fp8lab::cli
