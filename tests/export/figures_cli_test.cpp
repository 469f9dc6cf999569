// SPDX-License-Identifier: Apache-2.0
// `fp8lab figures`, `labs` and `run` as a user runs them: files, validity, determinism, errors.
#include <doctest/doctest.h>

#include <algorithm>

#include "app/export/export_settings.hpp"

#include <filesystem>

#include "labs/logic/curriculum.hpp"
#include "tests/cli/run_command.hpp"
#include "tests/labs/light_step_runs.hpp"

using fp8lab::test::read_file;
using fp8lab::test::run_command;
namespace fs = std::filesystem;

namespace {

const std::string kExe = FP8LAB_EXE;

std::string temp_dir() {
    char tmpl[] = "/tmp/fp8lab-figures-XXXXXX";
    return mkdtemp(tmpl);
}

// PNG: the IHDR chunk holds width and height big-endian at bytes 16..23.
std::pair<unsigned, unsigned> png_size(const std::string& data) {
    auto be = [&](std::size_t at) {
        return (unsigned(std::uint8_t(data[at])) << 24) | (unsigned(std::uint8_t(data[at + 1])) << 16) |
               (unsigned(std::uint8_t(data[at + 2])) << 8) | unsigned(std::uint8_t(data[at + 3]));
    };
    return {be(16), be(20)};
}

// The whole catalog, as one export. In the sanitizer tree, the steps without a "steps"
// parameter as one export, and of the others those that reach the figure features the rest
// do not (light_step_runs.hpp; the labs suite checks that together they reach all), light,
// one export each.
std::vector<std::string> catalog_exports() {
    std::vector<std::string> sets;
    std::string rest;
    for (const fp8lab::labs::Lab& lab : fp8lab::labs::load_curriculum().labs)
        for (const fp8lab::labs::Step& step : lab.steps) {
            const std::string id = lab.id + "/" + step.logic.id;
            if (fp8lab::test::kSanitizerTree && !fp8lab::test::exported_under_sanitizers(id, step)) continue;
            if (const auto light = fp8lab::test::light_steps(step))
                sets.push_back(" --lab " + id + " --set steps=" + std::to_string(*light));
            else
                rest += (rest.empty() ? "" : ",") + id;
        }
    sets.push_back(sets.empty() ? std::string() : " --lab " + rest);
    return sets;
}

}  // namespace

// In the release tree a second export of the catalog writes the same SVG and CSV, byte for
// byte (the same formats: Cairo numbers its surfaces across them). The sanitizer tree
// exports a subset with every figure feature once, its training steps light.
TEST_CASE("figures writes well-formed SVG, PNG of the requested size, PDF, CSV, manifest and gallery, twice alike") {
    int svgs = 0, pngs = 0, table_images = 0;
    for (const std::string& selection : catalog_exports()) {
        const std::string out = temp_dir();
        const auto r = run_command(kExe + " figures --out " + out + " --format svg,png,pdf --size 900x600" + selection);
        REQUIRE_MESSAGE(r.exit_code == 0, r.err);
        CHECK(r.err.find("[1/") != std::string::npos);  // progress on the terminal
        CHECK(fs::exists(out + "/index.html"));
        const std::string manifest = read_file(out + "/manifest.json");
        CHECK(manifest.find("\"backend\":\"cpu\"") != std::string::npos);
        CHECK(manifest.find("\"seed\":1") != std::string::npos);
        for (const auto& entry : fs::recursive_directory_iterator(out)) {
            const std::string path = entry.path().string();
            if (entry.path().extension() == ".svg") {
                ++svgs;
                table_images += entry.path().stem().string().find("-table-") != std::string::npos;
                if (fs::exists("/usr/bin/xmllint")) {
                    const auto lint = run_command("xmllint --noout " + path);
                    CHECK_MESSAGE(lint.exit_code == 0, (path + ": " + lint.err));
                }
                CHECK(fs::exists(entry.path().parent_path() / (entry.path().stem().string() + ".csv")));
                CHECK(fs::exists(entry.path().parent_path() / (entry.path().stem().string() + ".pdf")));
                CHECK(manifest.find(entry.path().filename().string()) != std::string::npos);
            }
            if (entry.path().extension() == ".png") {
                ++pngs;
                const std::string data = read_file(path);
                REQUIRE(data.size() > 24);
                CHECK(data.substr(1, 3) == "PNG");
                CHECK(png_size(data) == std::pair<unsigned, unsigned>{900, 600});
                CHECK(data.size() > 5000);  // a blank PNG of this size compresses to about 2 KB
            }
        }
        if (!fp8lab::test::kSanitizerTree) {
            const std::string again = temp_dir();
            REQUIRE(run_command(kExe + " figures --out " + again + " --format svg,png,pdf --size 900x600" + selection)
                        .exit_code == 0);
            int compared = 0;
            for (const auto& entry : fs::recursive_directory_iterator(again)) {
                const std::string ext = entry.path().extension().string();
                if (ext != ".svg" && ext != ".csv") continue;
                const fs::path rel = fs::relative(entry.path(), again);
                CHECK_MESSAGE(read_file(entry.path().string()) == read_file((fs::path(out) / rel).string()),
                              rel.string());
                ++compared;
            }
            CHECK(compared > 10);
            fs::remove_all(again);
        }
        fs::remove_all(out);
    }
    CHECK(svgs >= 7);
    CHECK(table_images >= 20);  // tables as slide images too
    CHECK(pngs == svgs);
    if (!fs::exists("/usr/bin/xmllint")) MESSAGE("xmllint not installed (libxml2-utils): SVGs not validated");
}

TEST_CASE("a figure and a table of one id write apart: each has its own image and CSV") {
    const std::string out = temp_dir();
    const auto r = run_command(kExe + " figures --format svg --lab transformer/gpu-speed --out " + out);
    REQUIRE_MESSAGE(r.exit_code == 0, r.err);
    const std::string figure = read_file(out + "/transformer/gpu-speed-speed.csv");
    const std::string table = read_file(out + "/transformer/gpu-speed-table-speed.csv");
    CHECK(fs::exists(out + "/transformer/gpu-speed-table-speed.svg"));
    CHECK(figure != table);
    CHECK(table.find("preset") != std::string::npos);
    const std::string manifest = read_file(out + "/manifest.json");
    CHECK(manifest.find("\"tables\":[{\"id\":\"speed\"") != std::string::npos);
    fs::remove_all(out);
}

TEST_CASE("figures --set draws the selected step with those parameters") {
    const std::string a = temp_dir(), b = temp_dir();
    const std::string step = " figures --format svg --lab formats/bits-to-value";
    REQUIRE(run_command(kExe + step + " --out " + a).exit_code == 0);
    const auto set = run_command(kExe + step + " --set format=e5m2 --set code=0x7b --out " + b);
    REQUIRE_MESSAGE(set.exit_code == 0, set.err);
    int compared = 0;
    for (const auto& entry : fs::recursive_directory_iterator(a)) {
        if (entry.path().extension() != ".svg") continue;
        const fs::path rel = fs::relative(entry.path(), a);
        CHECK_MESSAGE(read_file(entry.path().string()) != read_file((fs::path(b) / rel).string()), rel.string());
        ++compared;
    }
    CHECK(compared >= 1);
    const std::string manifest = read_file(b + "/manifest.json");
    CHECK(manifest.find("\"format\":\"e5m2\"") != std::string::npos);
    CHECK(manifest.find("\"code\":123") != std::string::npos);
    const auto unknown = run_command(kExe + step + " --set size=3 --out " + b);
    CHECK(unknown.exit_code == 2);
    CHECK(unknown.err.find("unknown parameter 'size'") != std::string::npos);
    const auto refused = run_command(kExe + " figures --format svg --lab formats --set nonsense=1 --out " + b);
    CHECK(refused.exit_code == 2);
    CHECK(refused.err.find("no selected step has a parameter 'nonsense'") != std::string::npos);
    fs::remove_all(a);
    fs::remove_all(b);
}

TEST_CASE("figures --theme, --font-scale and --png-scale draw a figure for a slide") {
    const std::string dir = temp_dir();
    const std::string step = kExe + " figures --format svg,png --size 400x300 --lab formats/bits-to-value --out " + dir;
    const auto files = [&](const std::string& options) {
        std::string name = options;
        std::replace(name.begin(), name.end(), ' ', '-');
        const std::string at = dir + "/" + name;
        REQUIRE(run_command(step + "/" + name + (options == "plain" ? "" : " --" + options)).exit_code == 0);
        return std::pair{read_file(at + "/formats/bits-to-value-value-by-code.svg"),
                         read_file(at + "/formats/bits-to-value-value-by-code.png")};
    };
    const auto plain = files("plain");
    // --theme dark paints the background the dark theme's colour (rgb(30,30,34) = 11.8%, 13.3%)
    const auto dark = files("theme dark");
    CHECK(plain.first.find("rgb(11.764706%,11.764706%,13.333333%)") == std::string::npos);
    CHECK(dark.first.find("rgb(11.764706%,11.764706%,13.333333%)") != std::string::npos);
    CHECK(files("theme projector").first != plain.first);
    // Larger text changes the drawing, not the size; --png-scale changes only the pixels.
    const auto large = files("font-scale 1.5");
    CHECK(large.first != plain.first);
    CHECK(png_size(large.second) == std::pair<unsigned, unsigned>{400, 300});
    const auto sharp = files("png-scale 2");
    CHECK(sharp.first == plain.first);
    CHECK(png_size(sharp.second) == std::pair<unsigned, unsigned>{800, 600});
    const std::string manifest = read_file(dir + "/theme-dark/manifest.json");
    CHECK(manifest.find("\"theme\":\"dark\"") != std::string::npos);
    const auto bad_theme = run_command(step + "/x --theme blue");
    CHECK(bad_theme.exit_code == 2);
    CHECK(bad_theme.err.find("light, dark or projector") != std::string::npos);
    CHECK(run_command(step + "/x --font-scale 9").exit_code == 2);
    CHECK(run_command(step + "/x --size 4000x3000 --png-scale 8").exit_code == 2);
    CHECK(!fs::exists(dir + "/x"));
    fs::remove_all(dir);
}

TEST_CASE("figures --slides draws slides: PNG at 1280x720 in the projector theme, text 1.5x; given options win") {
    const std::string dir = temp_dir();
    const std::string step = kExe + " figures --slides --lab formats/bits-to-value --out " + dir;
    REQUIRE(run_command(step + "/slides").exit_code == 0);
    CHECK(png_size(read_file(dir + "/slides/formats/bits-to-value-value-by-code.png")) ==
          std::pair<unsigned, unsigned>{1280, 720});
    CHECK(!fs::exists(dir + "/slides/formats/bits-to-value-value-by-code.svg"));
    const std::string manifest = read_file(dir + "/slides/manifest.json");
    CHECK(manifest.find("\"theme\":\"projector\"") != std::string::npos);
    CHECK(manifest.find("\"font_scale\":1.5") != std::string::npos);
    REQUIRE(run_command(step + "/dark --theme dark --size 640x360").exit_code == 0);
    CHECK(png_size(read_file(dir + "/dark/formats/bits-to-value-value-by-code.png")) ==
          std::pair<unsigned, unsigned>{640, 360});
    CHECK(read_file(dir + "/dark/manifest.json").find("\"theme\":\"dark\"") != std::string::npos);
    fs::remove_all(dir);
}

TEST_CASE("the GUI's export settings are figures options that draw the same") {
    fp8lab::exporter::ExportSettings e;
    e.svg = false;
    e.pdf = true;
    e.width = 1024;
    e.height = 768;
    e.style = {fp8lab::plot::Theme::Dark, 1.5};
    e.png_scale = 3;
    CHECK(e.figures_options() == "--format png,pdf --size 1024x768 --theme dark --font-scale 1.5 --png-scale 3");
    const std::string dir = temp_dir();
    const auto r = run_command(kExe + " figures --lab formats/bits-to-value " + e.figures_options() + " --out " + dir);
    REQUIRE_MESSAGE(r.exit_code == 0, r.err);
    CHECK(png_size(read_file(dir + "/formats/bits-to-value-value-by-code.png")) ==
          std::pair<unsigned, unsigned>{3072, 2304});
    CHECK(fs::exists(dir + "/formats/bits-to-value-value-by-code.pdf"));
    CHECK(!fs::exists(dir + "/formats/bits-to-value-value-by-code.svg"));
    fs::remove_all(dir);
}

TEST_CASE("figures and run refuse bad input with exit code 2") {
    CHECK(run_command(kExe + " figures --out /tmp/x --format gif").exit_code == 2);
    CHECK(run_command(kExe + " figures --out /tmp/x --size 10x10").exit_code == 2);
    CHECK(run_command(kExe + " figures --out /tmp/x --lab nope").err.find("no lab 'nope'") != std::string::npos);
    const auto set = run_command(kExe + " run values/number-line --set format=e9m9");
    CHECK(set.exit_code == 2);
    CHECK(set.err.find("parameter 'format'") != std::string::npos);
    CHECK(set.err.find("one of e4m3") != std::string::npos);
    const auto unknown = run_command(kExe + " run formats/bits-to-value --set size=3");
    CHECK(unknown.exit_code == 2);
    CHECK(unknown.err.find("unknown parameter 'size'") != std::string::npos);
    const auto range = run_command(kExe + " run formats/bits-to-value --set code=300");
    CHECK(range.exit_code == 2);
    CHECK(range.err.find("from 0 to 255") != std::string::npos);
    const auto step = run_command(kExe + " run formats/nope");
    CHECK(step.exit_code == 2);
    CHECK(step.err.find("its steps: bits-to-value") != std::string::npos);
    const auto gpu = run_command(kExe + " run formats --backend gpu");
    CHECK(gpu.exit_code == 2);
    CHECK(gpu.err.find("--backend gpu") != std::string::npos);
}

TEST_CASE("run prints tables and metrics; labs lists steps with parameters") {
    const auto r = run_command(kExe + " run formats/bits-to-value --set code=0x7e");
    REQUIRE(r.exit_code == 0);
    CHECK(r.out.find("value: 448") != std::string::npos);
    CHECK(r.out.find("0x7e") != std::string::npos);
    // At the exercise's code the value is the answer: hidden, unless answered or an instructor asks.
    const auto j = run_command(kExe + " run formats/bits-to-value --json");
    REQUIRE(j.exit_code == 0);
    CHECK(j.out.find("\"metrics\":[{\"name\":\"value\"") == std::string::npos);
    CHECK(j.out.find("Hidden until the exercise is answered") != std::string::npos);
    for (const std::string shown : {" --instructor", " --answer 20"}) {
        const auto k = run_command(kExe + " run formats/bits-to-value --json" + shown);
        REQUIRE(k.exit_code == 0);
        CHECK(k.out.find("\"metrics\":[{\"name\":\"value\",\"value\":20") != std::string::npos);
    }
    const auto wrong = run_command(kExe + " run formats/bits-to-value --answer 24");
    CHECK(wrong.out.find("value: 20") == std::string::npos);
    const auto l = run_command(kExe + " labs --json");
    REQUIRE(l.exit_code == 0);
    CHECK(l.out.find("\"id\":\"bits-to-value\"") != std::string::npos);
    CHECK(l.out.find("\"errors\":[]") != std::string::npos);
}

// Files are written beside the target under a name of their own and renamed over it: a
// link planted at a trace is replaced, never followed, and no temporary file is left. A
// link planted in an export folder is a file no export wrote: refused, left as it is.
TEST_CASE("figures refuses a planted link; train --trace replaces one instead of writing through it") {
    char name[] = "/tmp/fp8lab-links-XXXXXX";
    const std::filesystem::path dir = mkdtemp(name);
    const std::filesystem::path victim = dir / "victim.txt";
    std::ofstream(victim) << "keep me";
    std::filesystem::create_directories(dir / "out" / "formats");
    std::filesystem::create_symlink(victim, dir / "out" / "manifest.json");
    std::filesystem::create_symlink(victim, dir / "out" / "formats" / "bits-to-value-value-by-code.svg");
    std::filesystem::create_symlink(victim, dir / "trace.csv");
    const std::string figures =
        kExe + " figures --out " + (dir / "out").string() + " --lab formats/bits-to-value --format svg";
    CHECK(run_command(figures).exit_code == 2);
    std::filesystem::remove(dir / "out" / "manifest.json");
    CHECK(run_command(figures).exit_code == 2);
    CHECK(std::filesystem::is_symlink(dir / "out" / "formats" / "bits-to-value-value-by-code.svg"));
    CHECK(run_command("umask 022; " + kExe + " train --steps 3 --trace " + (dir / "trace.csv").string()).exit_code ==
          0);
    // A new file gets the mode a file written in place would have (mkostemp's is rw-------).
    CHECK((std::filesystem::status(dir / "trace.csv").permissions() & std::filesystem::perms::others_read) !=
          std::filesystem::perms::none);
    CHECK(fp8lab::test::read_file(victim.string()) == "keep me");
    CHECK_FALSE(std::filesystem::is_symlink(dir / "trace.csv"));
    CHECK(std::filesystem::file_size(dir / "trace.csv") > 100);
    for (const auto& entry : std::filesystem::recursive_directory_iterator(dir)) {
        const std::string name = entry.path().filename().string();
        CHECK_MESSAGE((name.front() != '.' || name == ".fp8lab.lock"), "left behind: " << entry.path());
    }
    std::filesystem::remove_all(dir);
}

TEST_CASE("a selection is a comma-separated list of labs and steps, each taken once") {
    const auto r = run_command(kExe + " run formats/bits-to-value,rounding/modes,formats/bits-to-value --json");
    REQUIRE_MESSAGE(r.exit_code == 0, r.err);
    CHECK(r.out.find("\"step\":\"bits-to-value\"") != std::string::npos);
    CHECK(r.out.find("\"step\":\"modes\"") != std::string::npos);
    CHECK(r.out.find("\"step\":\"bits-to-value\"") == r.out.rfind("\"step\":\"bits-to-value\""));
    const auto empty = run_command(kExe + " run formats,,rounding");
    CHECK(empty.exit_code == 2);
    CHECK(empty.err.find("an empty item in the list") != std::string::npos);
    const auto unknown = run_command(kExe + " run formats,nope");
    CHECK(unknown.exit_code == 2);
    CHECK(unknown.err.find("no lab 'nope'") != std::string::npos);
}
