// SPDX-License-Identifier: Apache-2.0
// The adversarial suite: one case per class of misuse that once lost or clobbered a file,
// reported success after a failure, or accepted nonsense. Each runs the program as a user
// (or an attacker) would, through the shell.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "tests/cli/run_command.hpp"

namespace {

namespace fs = std::filesystem;
using fp8lab::test::read_file;
using fp8lab::test::run_command;

const std::string kExe = FP8LAB_EXE;

struct TempDir {
    fs::path path;
    TempDir() {
        char name[] = "/tmp/fp8lab-adversarial-XXXXXX";
        path = mkdtemp(name);
    }
    ~TempDir() { fs::remove_all(path); }
    std::string operator/(const std::string& name) const { return (path / name).string(); }
};

bool ends_with(const std::string& s, const std::string& tail) {
    return s.size() >= tail.size() && s.compare(s.size() - tail.size(), tail.size(), tail) == 0;
}

// Every file under DIR is whole: PNGs end with their IEND chunk, SVGs with their closing
// tag, and no temporary file (a dot file other than the folder's lock) is left.
void check_every_file_whole(const fs::path& dir) {
    for (const auto& entry : fs::recursive_directory_iterator(dir)) {
        if (!entry.is_regular_file()) continue;
        const std::string name = entry.path().filename().string();
        CAPTURE(entry.path());
        CHECK((name.front() != '.' || name == ".fp8lab.lock"));
        const std::string content = read_file(entry.path().string());
        if (ends_with(name, ".png")) CHECK(ends_with(content, std::string("IEND\xae\x42\x60\x82", 8)));
        if (ends_with(name, ".svg")) CHECK(ends_with(content, "</svg>\n"));
    }
}

// `figures` needs the export layer (Cairo); a build without it skips those cases.
#ifdef FP8LAB_HAS_FIGURES
constexpr bool kNoFigures = false;
#else
constexpr bool kNoFigures = true;
#endif

}  // namespace

TEST_CASE("an export killed half-way leaves whole files, no temporary and no stale manifest" *
          doctest::skip(kNoFigures)) {
    TempDir dir;
    const std::string out = dir / "out";
    REQUIRE(run_command(kExe + " figures --out " + out + " --lab formats --format svg").exit_code == 0);
    const std::string old_manifest = read_file(out + "/manifest.json");
    REQUIRE(!old_manifest.empty());
    // The whole catalog as SVG and PNG takes seconds: stop it after one.
    const auto r = run_command("{ " + kExe + " figures --out " + out +
                               " --format svg,png 2>/dev/null & pid=$!; sleep 1; "
                               "kill -TERM $pid; wait $pid; echo status $?; }");
    CHECK(r.out.find("status 143") != std::string::npos);  // ended by SIGTERM, as a killed program does
    // Either no new file came yet and the old manifest stands, or it was replaced by one that
    // says the export is unfinished before the first new file came.
    const std::string manifest = read_file(out + "/manifest.json");
    CHECK((manifest == old_manifest || manifest.find("\"finished\":false") != std::string::npos));
    check_every_file_whole(out);
    // The next export may replace every file the stopped one wrote.
    const auto again = run_command(kExe + " figures --out " + out + " --lab formats --format svg,png");
    CHECK_MESSAGE(again.exit_code == 0, again.err);
    CHECK(read_file(out + "/manifest.json").find("\"finished\":true") != std::string::npos);
}

TEST_CASE("two exports into one folder take turns and both finish whole" * doctest::skip(kNoFigures)) {
    TempDir dir;
    const std::string out = dir / "out";
    const std::string one = kExe + " figures --out " + out + " --lab rounding --format svg,png";
    const auto r = run_command("{ (" + one + " 2>" + (dir / "a.err") + "; echo a $?) & (" + one + " 2>" +
                               (dir / "b.err") + "; echo b $?) & wait; }");
    CHECK(r.out.find("a 0") != std::string::npos);
    CHECK(r.out.find("b 0") != std::string::npos);
    const std::string errors = read_file(dir / "a.err") + read_file(dir / "b.err");
    CHECK(errors.find("waiting for another fp8lab writing into") != std::string::npos);
    check_every_file_whole(out);
    const std::string manifest = read_file(out + "/manifest.json");
    CHECK(manifest.find("\"failures\":[]") != std::string::npos);
}

TEST_CASE("one file that cannot be written is reported; the rest of the export goes on" * doctest::skip(kNoFigures)) {
    TempDir dir;
    const std::string out = dir / "out";
    // A folder where a figure an earlier export wrote should go: renaming the finished file over it fails.
    REQUIRE(run_command(kExe + " figures --out " + out + " --lab formats --format svg").exit_code == 0);
    fs::remove(out + "/formats/bits-to-value-value-by-code.svg");
    fs::create_directories(out + "/formats/bits-to-value-value-by-code.svg");
    const auto r = run_command(kExe + " figures --out " + out + " --lab formats --format svg");
    CHECK(r.exit_code == 1);
    CHECK(r.err.find("error: formats/bits-to-value-value-by-code.svg: cannot write") != std::string::npos);
    CHECK(r.err.find("1 part(s) of the export failed") != std::string::npos);
    const std::string manifest = read_file(out + "/manifest.json");
    CHECK(manifest.find("\"failures\":[\"formats/bits-to-value-value-by-code.svg: cannot write") != std::string::npos);
    // The steps (before "failures") list what this export wrote: not the figure, its data yes.
    const std::string steps = manifest.substr(0, manifest.find("\"failures\""));
    CHECK(steps.find("\"formats/bits-to-value-value-by-code.svg\"") == std::string::npos);
    CHECK(steps.find("bits-to-value-value-by-code.csv") != std::string::npos);
    CHECK(fs::exists(out + "/formats/bits-to-value-value-by-code.csv"));
}

TEST_CASE("a training run killed half-way keeps the previous trace") {
    TempDir dir;
    const std::string trace = dir / "trace.csv";
    std::ofstream(trace) << "the previous trace";
    const auto r = run_command("{ " + kExe + " train --steps 100000 --trace " + trace +
                               " >/dev/null 2>&1 & pid=$!; sleep 1; kill -TERM $pid; wait $pid; echo status $?; }");
    CHECK(r.out.find("status 143") != std::string::npos);
    CHECK(read_file(trace) == "the previous trace");
    for (const auto& entry : fs::directory_iterator(dir.path)) CHECK(entry.path().filename() == "trace.csv");
}

TEST_CASE("trace replay refuses a truncated or malformed trace with file:line") {
    TempDir dir;
    const std::string trace = dir / "trace.csv";
    REQUIRE(run_command(kExe + " train --steps 4 --trace " + trace).exit_code == 0);
    REQUIRE(run_command(kExe + " trace replay " + trace).exit_code == 0);
    const std::string whole = read_file(trace);
    // Cut the file at its last record, as a full disk or a crash would have under the old writer.
    const std::string cut = whole.substr(0, whole.rfind("# records:"));
    std::ofstream(dir / "cut.csv", std::ios::binary) << cut;
    auto r = run_command(kExe + " trace replay " + (dir / "cut.csv"));
    CHECK(r.exit_code == 2);
    CHECK(r.out.empty());
    CHECK(r.err.find((dir / "cut.csv") + ":") != std::string::npos);
    CHECK(r.err.find("truncated") != std::string::npos);
    // A record whose step is -1 (once read as 2^64-1).
    std::string negative = whole;
    negative.replace(negative.find("\n0,") + 1, 1, "-1");
    std::ofstream(dir / "negative.csv", std::ios::binary) << negative;
    r = run_command(kExe + " trace replay " + (dir / "negative.csv"));
    CHECK(r.exit_code == 2);
    CHECK(r.err.find("step '-1' is not a count") != std::string::npos);
}

TEST_CASE("out-of-range and malformed numbers are usage errors before any work") {
    struct Case {
        const char* arguments;
        const char* message;
    };
    const Case cases[] = {
        {"trace replay --history 2147483647 x.csv", "--history: '2147483647' is not in [1, 65536]"},
        {"trace replay --history 20000000 x.csv", "is not in [1, 65536]"},
        {"scaling delayed --margin 1000", "--margin: '1000' is not in [0, 64]"},
        {"train --margin 1000", "--margin: '1000' is not in [0, 64]"},
        {"train --lr inf", "--lr: 'inf' is not a finite number"},
        {"train --lr nan", "--lr: 'nan' is not a finite number"},
        {"train --steps 1e3", "--steps: '1e3' is not a whole number"},
        {"train --tokens 4294967297", "--tokens: '4294967297' is not in [1, 1048576]"},
        {"train --seed 18446744073709551616", "--seed: '18446744073709551616' is not a seed"},
        {"train --seed -1", "--seed: '-1' is not a seed"},
        {"convert --to e4m3 --random-bits 33 1", "--random-bits: '33' is not in [1, 32]"},
        {"figures --out /tmp/never --size 4294967496x800", "--size: '4294967496x800' is not WIDTHxHEIGHT"},
        {"gui --size 99999999999x1", "--size: '99999999999x1' is not WIDTHxHEIGHT"},
        {"figures --out /tmp/never --font-scale nan", "--font-scale: 'nan' is not a finite number"},
        {"figures --out /tmp/never --png-scale inf", "--png-scale: 'inf' is not a finite number"},
        {"figures --out /tmp/never --png-scale -nan", "--png-scale: '-nan' is not a finite number"},
        {"run formats/bits-to-value --set code=256", "256 is out of range"},
        {"train --hidden 65536 --layers 16", "need about"},
        // The trace's records count: this run fits without a trace, not with one.
        {"train --steps 1000000 --layers 16 --trace /tmp/never.csv", "need about"},
        {"formats -- x", "only convert takes values"},
        {"trace nope", "'nope' is not a trace command (trace commands: replay)"},
        {"bench gpu-fast", "'gpu-fast' is not a bench command"},
    };
    for (const Case& c : cases) {
        const std::string arguments = c.arguments;
        CAPTURE(arguments);
        const auto r = run_command(kExe + " " + c.arguments);
        CAPTURE(r.err);
        CHECK(r.exit_code == 2);
        CHECK(r.out.empty());
        CHECK(r.err.find(c.message) != std::string::npos);
    }
    // A seed is a whole uint64 everywhere, printed as one (never as a negative number).
    const auto top = run_command(kExe + " train --seed 18446744073709551615 --print-experiment");
    CHECK(top.out.find("\"seed\":18446744073709551615") != std::string::npos);
    // 010 is ten, as a person reads it, not C's octal eight.
    CHECK(run_command(kExe + " run formats/bits-to-value --set code=010").out.find("code=10 ") != std::string::npos);
    // "--" ends the options: -nan is a value.
    const auto nan = run_command(kExe + " convert --to e4m3 -- -nan");
    CHECK(nan.exit_code == 0);
    CHECK(nan.out.find("-nan\t0xff") == 0);
}

TEST_CASE("a bad input is quoted short and escaped, and JSON stays valid UTF-8") {
    const std::string long_word(100000, 'z');
    const auto r = run_command(kExe + " train --algo " + long_word);
    CHECK(r.exit_code == 2);
    CHECK(r.err.size() < 400);
    CHECK(r.err.find("(100000 bytes)") != std::string::npos);
    const auto bytes = run_command(kExe + " convert --to $(printf 'e4\\377\\001') 1");
    CHECK(bytes.exit_code == 2);
    CHECK(bytes.err.find("'e4\\xff\\x01'") != std::string::npos);
}

TEST_CASE("a run whose loss becomes NaN stops there with its own exit status") {
    const auto r = run_command(kExe + " train --saturation none --lr 10 --steps 50");
    CHECK(r.exit_code == 3);
    CHECK(r.err.find("the loss became NaN at step") != std::string::npos);
    CHECK(r.out.find("nan") != std::string::npos);
    CHECK(r.out.find("\n49\t") == std::string::npos);  // it did not run on to the end
}

// `figures --out DIR` replaces only what an export wrote there (its manifest lists it): a
// user's gallery, manifest or figure-named file is refused before any work, and nothing is
// written through a linked sub-folder.
TEST_CASE("an export never replaces or deletes a file it did not write" * doctest::skip(kNoFigures)) {
    TempDir dir;
    const std::string out = dir / "out";
    const std::string figures = kExe + " figures --lab formats/bits-to-value --format svg --out " + out;
    for (const char* name : {"index.html", "manifest.json", "formats/bits-to-value-value-by-code.svg"}) {
        CAPTURE(name);
        fs::remove_all(out);
        fs::create_directories(out + "/formats");
        std::ofstream(out + "/" + name) << "the user's own " << name;
        const auto r = run_command(figures);
        CHECK(r.exit_code == 2);
        CHECK(r.err.find("no fp8lab export wrote it") + r.err.find("fp8lab figures did not write") !=
              2 * std::string::npos);
        CHECK(read_file(out + "/" + name) == std::string("the user's own ") + name);
        if (std::string(name) != "manifest.json") CHECK_FALSE(fs::exists(out + "/manifest.json"));
        CHECK_FALSE(fs::exists(out + "/formats/bits-to-value-value-by-code.csv"));
    }
    // A user's file beside an export survives later exports, and the export replaces its own.
    fs::remove_all(out);
    REQUIRE(run_command(figures).exit_code == 0);
    std::ofstream(out + "/notes.txt") << "mine";
    REQUIRE(run_command(kExe + " figures --lab rounding --format svg --out " + out).exit_code == 0);
    const auto third = run_command(figures);  // formats/ was written two exports ago: still ours
    CHECK_MESSAGE(third.exit_code == 0, third.err);
    CHECK(read_file(out + "/notes.txt") == "mine");
    CHECK(read_file(out + "/manifest.json").find("\"rounding/") != std::string::npos);
}

TEST_CASE("an export does not write through a linked sub-folder" * doctest::skip(kNoFigures)) {
    TempDir dir;
    const std::string out = dir / "out";
    fs::create_directories(out);
    fs::create_directories(dir / "elsewhere");
    fs::create_directory_symlink(dir / "elsewhere", out + "/formats");
    const auto r = run_command(kExe + " figures --lab formats/bits-to-value --format svg --out " + out);
    CHECK(r.exit_code == 2);
    CHECK(r.err.find("formats is a link") != std::string::npos);
    CHECK(fs::is_empty(dir / "elsewhere"));
    CHECK(fs::is_symlink(out + "/formats"));
}

// Special files: an output that is a FIFO, a device, a folder or a link to one is refused
// before any work and left as it is; an input that is a FIFO does not hang, a folder is
// named as one, an output that is the command's own input is refused, and `--trace ''`
// names no file.
TEST_CASE("special files as inputs and outputs are refused before any work, by what they are") {
    TempDir dir;
    REQUIRE(run_command("mkfifo " + (dir / "fifo")).exit_code == 0);
    fs::create_symlink("/dev/null", dir / "null-link");
    fs::create_directories(dir / "folder");
    struct Case {
        std::string arguments, message;
    };
    const auto experiment = run_command(kExe + " train --print-experiment --steps 3");
    REQUIRE(experiment.exit_code == 0);
    std::ofstream(dir / "e.json") << experiment.out;
    std::ofstream(dir / "corpus.txt") << "Plain text that a user trains on.\n";
    fs::create_directories(dir / "texts");
    std::ofstream(dir / "texts/a.txt") << "More plain text.\n";
    const Case cases[] = {
        {"train --steps 3 --trace " + (dir / "fifo"), "is a FIFO; fp8lab writes only regular files"},
        {"train --steps 3 --trace " + (dir / "null-link"), "is a device; fp8lab writes only regular files"},
        {"train --steps 3 --trace " + (dir / "folder"), "is a folder; fp8lab writes only regular files"},
        {"train --steps 3 --trace ''", "--trace: an empty path names no file"},
        {"train --steps 3 --trace " + (dir / "missing/t.csv"), "does not exist"},
        {"train --experiment " + (dir / "e.json") + " --trace " + (dir / "e.json"), "is the input"},
        // The transformer's corpus is an input too (a file, or any file of its folder), and
        // two outputs of one run may not name one new file.
        {"train --model transformer --corpus " + (dir / "corpus.txt") + " --trace " + (dir / "corpus.txt"),
         "is the input"},
        {"train --model transformer --corpus " + (dir / "texts") + " --stats " + (dir / "texts/new.csv"),
         "lies in the folder"},
        {"train --steps 3 --trace " + (dir / "new.csv") + " --stats " + (dir / "new.csv"), "is also"},
        // The MLP's settings with the transformer are named, and another model than the
        // experiment file's would drop the file's settings: both refused.
        {"train --model transformer --hidden 64", "--hidden: is a setting of the MLP"},
        {"train --model transformer --inference-format e4m3", "--inference-format: is a setting of the MLP"},
        {"train --experiment " + (dir / "e.json") + " --model transformer", "describes the mlp model"},
        {"train --experiment " + (dir / "fifo"), "is a FIFO, not a file"},
        {"train --experiment " + (dir / "folder"), "is a folder, not a file"},
        {"trace replay " + (dir / "fifo"), "is a FIFO, not a file"},
        {"trace replay " + (dir / "folder"), "is a folder, not a file"},
    };
    for (const Case& c : cases) {
        CAPTURE(c.arguments);
        // `timeout`: a FIFO opened for reading with no writer would hang a program that waits.
        const auto r = run_command("timeout 20 " + kExe + " " + c.arguments);
        CAPTURE(r.err);
        CHECK(r.exit_code == 2);
        CHECK(r.err.find(c.message) != std::string::npos);
        CHECK(r.err.find("step ") == std::string::npos);  // refused before training
    }
    CHECK(fs::is_fifo(dir / "fifo"));
    CHECK(!fs::exists(dir / "new.csv"));
    CHECK(!fs::exists(dir / "texts/new.csv"));
    CHECK(fs::file_size(dir / "corpus.txt") == 34);  // the user's text, as it was
    CHECK(fs::is_symlink(dir / "null-link"));
    CHECK(fs::is_empty(dir / "folder"));
    // Any writer, as the last guard: a FIFO or folder at a figure's path is left as it is.
    fs::create_directories(dir / "out/formats");
    REQUIRE(run_command("mkfifo " + (dir / "out/formats/bits-to-value-value-by-code.svg")).exit_code == 0);
    const auto figures =
        run_command("timeout 20 " + kExe + " figures --lab formats/bits-to-value --format svg --out " + (dir / "out"));
    CHECK(figures.exit_code == 2);
    CHECK(fs::is_fifo(dir / "out/formats/bits-to-value-value-by-code.svg"));
    const auto screenshot = run_command("timeout 20 " + kExe + " gui --screenshot " + (dir / "null-link"));
    CHECK(screenshot.exit_code == 2);
    CHECK(screenshot.err.find("--screenshot") != std::string::npos);
    const auto progress = run_command("timeout 20 " + kExe + " progress " + (dir / "fifo"));
    CHECK(progress.exit_code == 1);
    CHECK(progress.err.find("is a FIFO, not a file") != std::string::npos);
}

TEST_CASE("an input file past its size limit is refused at once") {
    const auto r = run_command("timeout 20 " + kExe + " trace replay /dev/zero");
    CHECK(r.exit_code == 2);
    CHECK(r.err.find("is a device, not a file") != std::string::npos);
    TempDir dir;
    REQUIRE(run_command("truncate -s 300M " + (dir / "big.json")).exit_code == 0);
    const auto big = run_command("timeout 20 " + kExe + " train --experiment " + (dir / "big.json"));
    CHECK(big.exit_code == 2);
    CHECK(big.err.find("is larger than 256 MiB") != std::string::npos);
}

// Input that never ends a line, or a file built to make a parser quadratic, is refused at
// once: standard input lines are bounded, and an object's keys are checked for repeats in
// constant time each.
TEST_CASE("unbounded lines and many keys are refused at once") {
    // (The braces keep the command's own standard input: run_command redirects the group's.)
    const auto zero = run_command("{ timeout 20 " + kExe + " convert --to e4m3 < /dev/zero; }");
    CHECK(zero.exit_code == 1);
    CHECK(zero.err.find("standard input line 1 is longer than 4096 bytes") != std::string::npos);
    const auto scaling = run_command("{ timeout 20 " + kExe + " scaling current < /dev/zero; }");
    CHECK(scaling.exit_code == 2);
    CHECK(scaling.err.find("standard input line 1 is longer than 4096 bytes") != std::string::npos);
    const auto nul = run_command("{ printf '1\\0002\\n' | " + kExe + " scaling current; }");
    CHECK(nul.exit_code == 2);
    CHECK(nul.err.find("'1\\x002' is not a number") != std::string::npos);
    TempDir dir;
    {
        std::ofstream out(dir / "keys.json");
        out << "{\"fp8lab_experiment\": 1";
        for (int k = 0; k < 200000; ++k) out << ", \"key" << k << "\": " << k;
        out << ", \"key7\": 0}\n";
    }
    const auto keys = run_command("timeout 20 " + kExe + " train --experiment " + (dir / "keys.json"));
    CHECK(keys.exit_code == 2);
    CHECK(keys.err.find("the key 'key7' appears twice") != std::string::npos);
}

// Past the file-size limit a write fails with a message; nothing half-written is left.
TEST_CASE("a write past the file-size limit is reported and leaves no partial file") {
    TempDir dir;
    std::ofstream(dir / "trace.csv") << "the previous trace";
    const auto r = run_command("ulimit -f 8; " + kExe + " train --steps 40 --trace " + (dir / "trace.csv"));
    CHECK(r.exit_code == 1);
    CHECK(r.err.find("File too large") != std::string::npos);
    CHECK(read_file(dir / "trace.csv") == "the previous trace");
    for (const auto& entry : fs::directory_iterator(dir.path)) CHECK(entry.path().filename() == "trace.csv");
}

// A replay holds each tensor's history: a trace of many tensors and a long history is
// refused before the memory is taken.
TEST_CASE("trace replay refuses a history that would not fit its bound") {
    TempDir dir;
    REQUIRE(run_command(kExe + " train --steps 1 --trace " + (dir / "one.csv")).exit_code == 0);
    std::istringstream in(read_file(dir / "one.csv"));
    std::string line, head, record;
    while (std::getline(in, line)) {
        if (line.rfind("# records", 0) == 0) continue;
        if (line.rfind("0,fc1.input,", 0) == 0) record = line.substr(std::string("0,fc1.input").size());
        if (line[0] == '#' || line.rfind("step,", 0) == 0) head += line + "\n";
    }
    REQUIRE(!record.empty());
    {
        std::ofstream out(dir / "many.csv");
        out << head;
        for (int k = 0; k < 5000; ++k) out << "0,t" << k << ".input" << record << "\n";
        out << "# records: 5000\n";
    }
    const auto refused = run_command(kExe + " trace replay " + (dir / "many.csv") + " --history 65536");
    CHECK(refused.exit_code == 2);
    CHECK(refused.err.find("5000 tensors with a history of 65536 need 1250 MiB") != std::string::npos);
    CHECK(run_command(kExe + " trace replay " + (dir / "many.csv") + " --history 16").exit_code == 0);
}

// What a user or a file typed reaches the terminal escaped: an escape sequence in a value
// that is no number, or in a trace's tensor name, is shown as \xNN or refused.
TEST_CASE("control characters in input are escaped in messages, and refused in tensor names") {
    const auto r = run_command("{ printf '1\\n\\033[2Jx\\n' | " + kExe + " convert --to e4m3; }");
    CHECK(r.exit_code == 1);
    CHECK(r.err.find("line 2: cannot parse '\\x1b[2Jx' as a number") != std::string::npos);
    CHECK(r.err.find('\x1b') == std::string::npos);
    TempDir dir;
    REQUIRE(run_command(kExe + " train --steps 1 --trace " + (dir / "t.csv")).exit_code == 0);
    std::string text = read_file(dir / "t.csv");
    text.replace(text.find("fc1.input"), 9, "fc1\x1b[31m.input");
    std::ofstream(dir / "bad.csv") << text;
    const auto replay = run_command(kExe + " trace replay " + (dir / "bad.csv"));
    CHECK(replay.exit_code == 2);
    CHECK(replay.err.find("holds a control character") != std::string::npos);
    CHECK(replay.err.find('\x1b') == std::string::npos);
}
