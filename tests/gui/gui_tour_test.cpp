// SPDX-License-Identifier: Apache-2.0
// The desktop app in a real window under Xvfb: the tour walks every step, the bit inspector
// and the training panel, and saves a PNG of each; bad options are refused before a window.
#include <doctest/doctest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "labs/logic/curriculum.hpp"
#include "tests/cli/run_command.hpp"

using fp8lab::test::run_command;
namespace fs = std::filesystem;

namespace {

std::string exe() { return FP8LAB_EXE; }

// Width and height from a PNG's IHDR chunk (big-endian at offsets 16 and 20).
std::pair<unsigned, unsigned> png_size(const std::string& path) {
    const std::string bytes = fp8lab::test::read_file(path);
    if (bytes.size() < 24 || bytes.compare(1, 3, "PNG") != 0) return {0, 0};
    auto be32 = [&](std::size_t at) {
        return (unsigned(std::uint8_t(bytes[at])) << 24) | (unsigned(std::uint8_t(bytes[at + 1])) << 16) |
               (unsigned(std::uint8_t(bytes[at + 2])) << 8) | unsigned(std::uint8_t(bytes[at + 3]));
    };
    return {be32(16), be32(20)};
}

}  // namespace

TEST_CASE("the tour shows every step in a real window and saves a screenshot of each") {
    REQUIRE_MESSAGE(std::system("command -v xvfb-run >/dev/null 2>&1") == 0,
                    "xvfb-run is missing: apt-get install xvfb xauth (./run.sh installs it)");
    char name[] = "/tmp/fp8lab-tour-XXXXXX";
    const fs::path dir = mkdtemp(name);
    // A corrupt settings file: reported, kept aside, and the tour still runs. The steps run
    // in full; 8 frames timed a stop, as in the presentation tours, since no test reads the
    // frame times (30 of them were a quarter of this test's CPU time).
    std::ofstream(dir / "settings.ini") << "version = 1\ntheme = neon\n";
    const auto r =
        run_command("xvfb-run -a -s '-screen 0 1600x900x24' " + exe() + " gui --tour --frames 8 --screenshots " +
                    (dir / "shots").string() + " --settings " + (dir / "settings.ini").string() + " --size 1600x900");
    INFO(r.out);
    INFO(r.err);
    CHECK(r.exit_code == 0);
    CHECK(r.out.find(" 0 failed") != std::string::npos);
    CHECK(r.out.find("presenter keys: 19 checked, 0 failed") != std::string::npos);
    CHECK(r.out.find("start-up to first frame") != std::string::npos);
    CHECK(r.out.find("frames timed at each stop: 8\n") != std::string::npos);
    CHECK(r.out.find("renderer draws with vertex offsets: yes") != std::string::npos);
    CHECK(r.err.find("theme 'neon'") != std::string::npos);
    CHECK(fs::exists(dir / "settings.ini.corrupt"));

    std::size_t steps = 0;
    for (const auto& lab : fp8lab::labs::load_curriculum().labs) steps += lab.steps.size();
    std::size_t pngs = 0;
    for (const auto& entry : fs::directory_iterator(dir / "shots")) {
        CAPTURE(entry.path().string());
        ++pngs;
        CHECK(png_size(entry.path().string()) == std::pair<unsigned, unsigned>{1600, 900});
        CHECK(fs::file_size(entry.path()) > 20000);  // a blank 1600x900 PNG is a few kB
    }
    CHECK(pngs == steps + 3);  // every step, the bit inspector, the training panel, the export dialog
    CHECK(fs::exists(dir / "shots" / "01-formats-bits-to-value.png"));
    fs::remove_all(dir);
}

namespace {

// One size of projector (a test case each, so that CTest runs them side by side).
void presentation_tour(const std::string& size) {
    REQUIRE(std::system("command -v xvfb-run >/dev/null 2>&1") == 0);
    char name[] = "/tmp/fp8lab-tour-XXXXXX";
    const fs::path dir = mkdtemp(name);
    const auto r = run_command("xvfb-run -a -s '-screen 0 " + size + "x24' " + exe() +
                               " gui --tour --quick-runs --presentation --theme projector --size " + size +
                               " --settings " + (dir / "settings.ini").string());
    INFO(r.out);
    INFO(r.err);
    CHECK(r.exit_code == 0);
    CHECK(r.out.find(" 0 failed") != std::string::npos);                             // a cut title fails its stop
    CHECK(r.out.find("presenter keys: 19 checked, 0 failed") != std::string::npos);  // paging included
    // The steps that train ran at their smallest "steps": the window tour shows them in full.
    CHECK(r.out.find("quick runs: ") != std::string::npos);
    CHECK(r.out.find("quick runs: 0 ") == std::string::npos);
    CHECK(r.out.find("frames timed at each stop: 8\n") != std::string::npos);  // --quick-runs' default
    fs::remove_all(dir);
}

}  // namespace

TEST_CASE("presentation tour 1600x900: every step reachable on a projector, no title cut") {
    presentation_tour("1600x900");
}
TEST_CASE("presentation tour 1280x720: every step reachable on a projector, no title cut") {
    presentation_tour("1280x720");
}
TEST_CASE("presentation tour 1024x768: every step reachable on a projector, no title cut") {
    presentation_tour("1024x768");
}

TEST_CASE("a link opens its step in a real window, with what it ignored said") {
    REQUIRE(std::system("command -v xvfb-run >/dev/null 2>&1") == 0);
    char name[] = "/tmp/fp8lab-link-XXXXXX";
    const fs::path dir = mkdtemp(name);
    const auto r = run_command("xvfb-run -a -s '-screen 0 1280x800x24' " + exe() + " gui --size 1280x800 --settings " +
                               (dir / "settings.ini").string() + " --screenshot " + (dir / "link.png").string() +
                               " 'fp8lab://rounding/stochastic?format=e5m2&delta=0.0625&steps=99999999'");
    INFO(r.err);
    CHECK(r.exit_code == 0);
    CHECK(r.err.find("ignored: parameter 'steps'") != std::string::npos);
    CHECK(png_size((dir / "link.png").string()) == std::pair<unsigned, unsigned>{1280, 800});
    // Where the link went is where the user is: the settings remember the step.
    const std::string settings = fp8lab::test::read_file((dir / "settings.ini").string());
    CHECK(settings.find("lab = rounding") != std::string::npos);
    CHECK(settings.find("step = stochastic") != std::string::npos);
    fs::remove_all(dir);
}

TEST_CASE("bad gui options are refused with the option named") {
    auto r = run_command(exe() + " gui --size 10x10");
    CHECK(r.exit_code == 2);
    CHECK(r.err.find("--size") != std::string::npos);
    r = run_command(exe() + " gui --screenshots /tmp/x");
    CHECK(r.exit_code == 2);
    CHECK(r.err.find("--tour") != std::string::npos);
    r = run_command(exe() + " gui --quick-runs");
    CHECK(r.exit_code == 2);
    CHECK(r.err.find("--quick-runs needs --tour") != std::string::npos);
    r = run_command(exe() + " gui --frames 8");
    CHECK(r.exit_code == 2);
    CHECK(r.err.find("--frames needs --tour") != std::string::npos);
    r = run_command(exe() + " gui --tour --frames 1");
    CHECK(r.exit_code == 2);
    CHECK(r.err.find("--frames") != std::string::npos);
    // Usage errors (status 2), found before any settings file is read or written.
    char name[] = "/tmp/fp8lab-gui-options-XXXXXX";
    const fs::path dir = mkdtemp(name);
    const std::string settings = " --settings " + (dir / "settings.ini").string();
    r = run_command(exe() + " gui --start no-such-lab" + settings);
    CHECK(r.exit_code == 2);
    CHECK(r.err.find("--start: no lab 'no-such-lab'") != std::string::npos);
    r = run_command(exe() + " gui --open fp8lab://formats --start formats" + settings);
    CHECK(r.exit_code == 2);
    CHECK(r.err.find("--open and --start") != std::string::npos);
    r = run_command(exe() + " gui --start formats/no-such-step" + settings);
    CHECK(r.exit_code == 2);
    CHECK(r.err.find("has no step 'no-such-step'") != std::string::npos);
    r = run_command(exe() + " gui --theme neon" + settings);
    CHECK(r.exit_code == 2);
    CHECK_FALSE(fs::exists(dir / "settings.ini"));
    fs::remove_all(dir);
    CHECK(r.err.find("--theme") != std::string::npos);
}
