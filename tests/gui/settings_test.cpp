// SPDX-License-Identifier: Apache-2.0
// The app's settings file (round trip, corrupt files set aside) and the Markdown parser.
#include <doctest/doctest.h>

#include <sys/stat.h>

#include <cstdlib>
#include <iterator>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "app/gui/markdown_view.hpp"
#include "app/gui/settings.hpp"

using namespace fp8lab::gui;
namespace fs = std::filesystem;

namespace {
struct TempDir {
    fs::path path;
    TempDir() {
        char name[] = "/tmp/fp8lab-settings-XXXXXX";
        path = mkdtemp(name);
    }
    ~TempDir() { fs::remove_all(path); }
};
std::string fp8lab_read(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    return {std::istreambuf_iterator<char>(in), {}};
}
}  // namespace

TEST_CASE("settings survive a save and a load; a missing file gives the defaults") {
    TempDir dir;
    const std::string path = (dir.path / "sub" / "settings.ini").string();
    const LoadedSettings fresh = load_settings(path);
    CHECK(fresh.problem.empty());
    CHECK(fresh.settings == Settings{});
    Settings s;
    s.theme = "projector";
    s.scale = 1.5f;
    s.lab = "rounding";
    s.step = "stochastic";
    s.solved = {"formats/bits-to-value", "rounding/modes"};
    s.window_width = 1366, s.window_height = 728;  // the window's last size, opened with next time
    save_settings(s, path);
    CHECK_FALSE(fs::exists(path + ".tmp"));
    const LoadedSettings back = load_settings(path);
    CHECK(back.problem.empty());
    CHECK(back.settings == s);
}

TEST_CASE("a remembered window size is whole and between 640 and 8000, or the file is corrupt") {
    for (const char* bad : {"window_width = 100", "window_height = 1e4", "window_width = 1280px"}) {
        std::istringstream in(std::string("version = 1\n") + bad + "\n");
        Settings s;
        CHECK(parse_settings(in, s).find("is not a whole number from 640 to 8000") != std::string::npos);
    }
    std::istringstream in("version = 1\nwindow_width = 1280\nwindow_height = 720\n");
    Settings s;
    CHECK(parse_settings(in, s).empty());
    CHECK(s.window_width == 1280);
    CHECK(s.window_height == 720);
}

TEST_CASE("a bare file name is a file in the current folder, as ./NAME is") {
    TempDir dir;
    const fs::path before = fs::current_path();
    fs::current_path(dir.path);
    Settings s;
    s.theme = "dark";
    CHECK_NOTHROW(save_settings(s, "s.ini"));
    CHECK(load_settings("s.ini").settings == s);
    CHECK(fs::exists(dir.path / "s.ini"));
    fs::current_path(before);
}

TEST_CASE(
    "a corrupt settings file is reported with its line, kept aside under its own name, and replaced by defaults") {
    TempDir dir;
    const std::string path = (dir.path / "settings.ini").string();
    const char* corrupt[] = {"version = 1\ntheme = purple\n", "version = 1\nscale = 9\n", "version = 2\n",
                             "version = 1\nwho = me\n",       "\x01\x02garbage",          "",
                             "version = 1\nsolved = nolab\n"};
    int n = 0;
    for (const char* text : corrupt) {
        CAPTURE(text);
        std::ofstream(path, std::ios::binary) << text;
        const LoadedSettings loaded = load_settings(path);
        CHECK_FALSE(loaded.problem.empty());
        CHECK(loaded.problem.find(path) == 0);
        CHECK(loaded.writable);
        CHECK(loaded.settings == Settings{});
        // Every backup keeps its own name: the earlier ones are never overwritten.
        const std::string backup = path + ".corrupt" + (++n == 1 ? "" : "." + std::to_string(n));
        CHECK(loaded.problem.find("kept as " + backup) != std::string::npos);
        CHECK(fp8lab_read(backup) == text);
        CHECK_FALSE(fs::exists(path));
    }
    CHECK(fp8lab_read(path + ".corrupt") == corrupt[0]);
    std::ofstream(path) << "version = 1\ntheme = purple\n";
    CHECK(load_settings(path).problem.find("line 2") != std::string::npos);
}

TEST_CASE("settings that cannot be kept aside are left alone and not saved over") {
    TempDir dir;
    const std::string path = (dir.path / "settings.ini").string();
    // No room for another backup: the corrupt file stays, and the app must not save over it.
    std::ofstream(path + ".corrupt") << "old";
    for (int n = 2; n <= 1000; ++n) std::ofstream(path + ".corrupt." + std::to_string(n)) << "old";
    std::ofstream(path) << "garbage";
    const LoadedSettings full = load_settings(path);
    CHECK_FALSE(full.writable);
    CHECK(full.problem.find("not saved this session") != std::string::npos);
    CHECK(fp8lab_read(path) == "garbage");
    // A folder (or a FIFO) at the settings' name is reported, never read or replaced.
    const std::string folder = (dir.path / "folder.ini").string();
    fs::create_directory(folder);
    const LoadedSettings odd = load_settings(folder);
    CHECK_FALSE(odd.writable);
    CHECK(odd.problem.find("not a regular file") != std::string::npos);
    const std::string fifo = (dir.path / "fifo.ini").string();
    REQUIRE(mkfifo(fifo.c_str(), 0600) == 0);
    CHECK_FALSE(load_settings(fifo).writable);
}

TEST_CASE("XDG_CONFIG_HOME decides where settings live") {
    setenv("XDG_CONFIG_HOME", "/tmp/xdg-test", 1);
    CHECK(default_settings_path() == "/tmp/xdg-test/fp8lab/settings.ini");
    unsetenv("XDG_CONFIG_HOME");
    setenv("HOME", "/home/someone", 1);
    CHECK(default_settings_path() == "/home/someone/.config/fp8lab/settings.ini");
}

TEST_CASE("Markdown becomes headings, paragraphs with styled runs, list items and code blocks") {
    const auto blocks = parse_markdown(
        "# Title\n\nSome *em* and **bold** and `code` and [a link](https://x.org).\n\n"
        "- one\n- two\n\n1. first\n2. second\n\n```\nint x;\n```\n");
    REQUIRE(blocks.size() == 7);
    CHECK(blocks[0].kind == MarkdownBlock::Heading);
    CHECK(blocks[0].level == 1);
    CHECK(blocks[0].runs.at(0).text == "Title");
    const MarkdownBlock& p = blocks[1];
    CHECK(p.kind == MarkdownBlock::Paragraph);
    bool em = false, bold = false, code = false, link = false;
    for (const TextRun& r : p.runs) {
        em |= r.text == "em" && r.style == Style_Italic;
        bold |= r.text == "bold" && r.style == Style_Bold;
        code |= r.text == "code" && r.style == Style_Code;
        link |= r.text == "a link" && r.style == Style_Link && r.link == "https://x.org";
    }
    CHECK(em);
    CHECK(bold);
    CHECK(code);
    CHECK(link);
    CHECK(blocks[2].kind == MarkdownBlock::ListItem);
    CHECK(blocks[2].bullet == "\xE2\x80\xA2");
    CHECK(blocks[3].runs.at(0).text == "two");
    CHECK(blocks[4].bullet == "1.");
    CHECK(blocks[5].bullet == "2.");
    CHECK(blocks[6].kind == MarkdownBlock::CodeBlock);
    CHECK(blocks[6].runs.at(0).text == "int x;\n");
}
