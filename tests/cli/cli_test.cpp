// SPDX-License-Identifier: Apache-2.0
// The `fp8lab` program as a user runs it: output format, parse errors, exit codes.
#include <doctest/doctest.h>

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <string>

#include "tests/cli/run_command.hpp"

using fp8lab::test::run_command;

namespace {
const std::string exe = FP8LAB_EXE;
}

TEST_CASE("convert prints input, code, hex float and decimal, tab-separated") {
    const auto r = run_command(exe + " convert --to e4m3 464 0x1.8p+3 -431.99999999999994 nan inf -inf");
    CHECK(r.exit_code == 0);
    CHECK(r.out ==
          "464\t0x7e\t0x1.cp+8\t448\n"
          "0x1.8p+3\t0x54\t0x1.8p+3\t12\n"
          "-431.99999999999994\t0xfd\t-0x1.ap+8\t-416\n"
          "nan\t0x7f\tnan\tnan\n"
          "inf\t0x7e\t0x1.cp+8\t448\n"
          "-inf\t0xfe\t-0x1.cp+8\t-448\n");
}

TEST_CASE("convert options: case, rounding, saturation, f32 parsing") {
    CHECK(run_command(exe + " convert --to E5M2 --saturate none 1e6").out == "1e6\t0x7c\tinf\tinf\n");
    CHECK(run_command(exe + " convert --to e4m3 --round toward-zero 479").out == "479\t0x7e\t0x1.cp+8\t448\n");
    CHECK(run_command(exe + " convert --to e4m3 --round UP 1.01").out == "1.01\t0x39\t0x1.2p+0\t1.125\n");
    // Parsed to float first, -431.99999999999994 is -432: a tie that goes to -448.
    CHECK(run_command(exe + " convert --to e4m3 --from f32 -431.99999999999994").out ==
          "-431.99999999999994\t0xfe\t-0x1.cp+8\t-448\n");
    CHECK(run_command(exe + " convert --to e2m1 5").out == "5\t0x6\t0x1p+2\t4\n");
    CHECK(run_command(exe + " convert --to bf16 1.00390625").out == "1.00390625\t0x3f80\t0x1p+0\t1\n");
}

// Decimal text is rounded once, from its exact value: the nearest double of each of these
// is a grid value or a tie of the format, and rounding that double would go the wrong way.
TEST_CASE("convert rounds decimal text once, never through the nearest double") {
    const auto code = [&](const std::string& args) {
        const std::string out = run_command(exe + " convert " + args).out;
        return out.substr(out.find('\t') + 1, out.find('\t', out.find('\t') + 1) - out.find('\t') - 1);
    };
    CHECK(code("--to e4m3 --round toward-zero 1.9999999999999999999") == "0x3f");  // 1.875, not 2
    CHECK(code("--to e4m3 --round toward-zero -- -1.9999999999999999999") == "0xbf");
    CHECK(code("--to e4m3 1.0625000000000000000001") == "0x39");  // just past the tie: 1.125
    CHECK(code("--to e4m3 1.0625") == "0x38");                    // the tie itself: even, 1
    CHECK(code("--to e4m3 --round up 1e-400") == "0x01");         // positive, however small
    CHECK(code("--to e4m3 --round down 1e-400") == "0x00");
    CHECK(code("--to bf16 --round up 1.0000000000000000000001") == "0x3f81");
    CHECK(code("--to e4m3 --round odd 2.0000000000000000001") == "0x41");  // inexact: odd
    // float32 text stands for a float32: it is a float32 first, by design.
    CHECK(code("--to e4m3 --from f32 --round toward-zero 1.9999999999999999999") == "0x40");
}

TEST_CASE("stochastic rounding is reproducible with a seed") {
    const std::string cmd = exe + " convert --to e4m3 --round stochastic --seed 9";
    std::string input;
    for (int i = 0; i < 200; ++i) input += "1.0625\n";
    const auto a = run_command(cmd, input), b = run_command(cmd, input);
    CHECK(a.exit_code == 0);
    CHECK(a.out == b.out);
    CHECK(a.out.find("0x38\t") != std::string::npos);  // 1
    CHECK(a.out.find("0x39\t") != std::string::npos);  // 1.125
    CHECK(run_command(exe + " convert --to e4m3 --round stochastic --seed 10", input).out != a.out);
}

TEST_CASE("standard input: one value per line; bad lines are reported and skipped") {
    const auto r = run_command(exe + " convert --to e4m3", "1\n  2.5 \r\nabc\n\n-0x1p-2\n448");
    CHECK(r.exit_code == 1);
    CHECK(r.out ==
          "1\t0x38\t0x1p+0\t1\n2.5\t0x42\t0x1.4p+1\t2.5\n"
          "-0x1p-2\t0xa8\t-0x1p-2\t-0.25\n448\t0x7e\t0x1.cp+8\t448\n");
    CHECK(r.err.find("line 3: cannot parse 'abc'") != std::string::npos);
    CHECK(r.err.find("line 4: empty line") != std::string::npos);
}

TEST_CASE("bad usage exits with status 2 and says what was wrong") {
    struct Case {
        const char* args;
        const char* message;
    } cases[] = {
        {" convert --to e9m9 1", "unknown format 'e9m9'"},
        {" convert --to e4m3 --round sideways 1", "unknown rounding mode 'sideways'"},
        {" convert --to e4m3 --saturate maybe 1", "unknown saturation 'maybe'"},
        {" convert --to e4m3 --from f16 1", "--from"},
        {" convert --to e4m3 --random-bits 40 1", "--random-bits"},
        {" convert --to e4m3 --bogus 1", "unknown option '--bogus'"},
        {" convert 1", "--to is required"},
        {" decode --format e4m3", "codes is required"},
        {" frobnicate", ""},
        {"", ""},
    };
    for (const Case& c : cases) {
        CAPTURE(c.args);
        const auto r = run_command(exe + c.args);
        CHECK(r.exit_code == 2);
        CHECK(r.err.find(c.message) != std::string::npos);
    }
}

TEST_CASE("--help works on every level") {
    for (const char* args : {" --help", " convert --help", " formats --help", " decode --help", " bench --help",
                             " bench emulator --help"}) {
        CAPTURE(args);
        const auto r = run_command(exe + args);
        CHECK(r.exit_code == 0);
        CHECK(r.out.find("Usage") != std::string::npos);
    }
}

TEST_CASE("formats and decode") {
    const auto f = run_command(exe + " formats");
    CHECK(f.exit_code == 0);
    CHECK(f.out.find("e4m3 ") != std::string::npos);
    CHECK(f.out.find("448") != std::string::npos);
    CHECK(f.out.find("57344") != std::string::npos);
    const auto j = run_command(exe + " formats --json");
    CHECK(j.out.find("\"name\": \"e2m1\"") != std::string::npos);
    CHECK(j.out.find("\"max_finite\": 6,") != std::string::npos);
    const auto d = run_command(exe + " decode --format e4m3 0x7e 0x7f 1 0x100");
    CHECK(d.exit_code == 1);
    CHECK(d.out ==
          "0x7e\t0.1111.110\tnormal\t0x1.cp+8\t448\n"
          "0x7f\t0.1111.111\tnan\tnan\tnan\n"
          "0x01\t0.0000.001\tsubnormal\t0x1p-9\t0.001953125\n");
    CHECK(d.err.find("'0x100' is not a code of e4m3") != std::string::npos);
}

TEST_CASE("scaling delayed prints step, amax, scale used and scale_inv") {
    const auto r = run_command(exe + " scaling delayed --format e4m3 --history 2", "2\n4\n");
    CHECK(r.exit_code == 0);
    CHECK(r.out == "0\t0x1p+1\t0x1p+0\t0x1p+0\n1\t0x1p+2\t0x1.cp+7\t0x1.24924ap-8\n");
    const auto current = run_command(exe + " scaling current --format e5m2", "0\n");
    CHECK(current.out == "0\t0x0p+0\t0x1p+0\t0x1p+0\n");
}

TEST_CASE("recipe commands refuse bad input before printing anything") {
    struct Case {
        const char* args;
        const char* input;
        const char* message;
    } cases[] = {
        {" scaling delayed", "1\nabc\n", "line 2: 'abc' is not a number"},
        {" scaling current", "1\n-3\n", "line 2: amax '-3' is negative; amax is a magnitude"},
        {" quantize --recipe current --to e4m3 --block 32", "1\n", "one scale per tensor; --block does not apply"},
        {" run ''", "", "an empty selection names no lab or step"},
        {" figures --out /tmp/never --lab ''", "", "an empty selection names no lab or step"},
        {" scaling delayed", "-1e-30\n", "line 1: amax '-1e-30' is negative"},
        {" scaling delayed --history -1", "1\n", "--history"},
        {" scaling delayed --format e2m1", "1\n", "--format"},
        {" scaling delayed --algo mean", "1\n", "--algo"},
        {" quantize --recipe magic --to e4m3", "1\n", "'magic' is not a recipe"},
        {" quantize --recipe delayed --to e4m3", "1\n", "needs a history of steps"},
        {" quantize --recipe nvfp4 --to e4m3", "1\n", "e2m1 elements"},
        {" quantize --recipe mx-floor --to e4m3", "", "no values"},
        {" train --steps 0", "", "--steps"},
        {" train --recipe magic", "", "--recipe"},
        {" trace replay /nonexistent/trace.csv", "", "cannot be read"},
    };
    for (const Case& c : cases) {
        CAPTURE(c.args);
        const auto r = run_command(exe + c.args, c.input);
        CHECK(r.exit_code == 2);
        CHECK(r.out.empty());
        CHECK(r.err.find(c.message) != std::string::npos);
    }
}

TEST_CASE("quantize prints codes and the scale of each block") {
    std::string input;
    for (int i = 0; i < 31; ++i) input += "1\n";
    input += "957\n";
    const auto r = run_command(exe + " quantize --recipe mx-floor --to e4m3", input);
    CHECK(r.exit_code == 0);
    CHECK(r.out.find("element\t31\t957\t0x7e\t896\t0\n") != std::string::npos);
    CHECK(r.out.find("block\t0\t957\t0x80\t0x1p+1\t2\n") != std::string::npos);
}

TEST_CASE("train writes a trace that trace replay reads") {
    const std::string trace = "/tmp/fp8lab-cli-test-trace.csv";
    const auto t = run_command(exe + " train --steps 5 --hidden 16 --tokens 16 --trace " + trace);
    CHECK(t.exit_code == 0);
    CHECK(t.out.rfind("step\tloss\n0\t", 0) == 0);
    const auto r = run_command(exe + " trace replay " + trace + " --history 4");
    CHECK(r.exit_code == 0);
    CHECK(r.out.find("0\tfc1.input\t") != std::string::npos);
    std::remove(trace.c_str());
}

TEST_CASE("train --seeds trains every seed and reports the final loss's spread") {
    const auto t = run_command(exe + " train --steps 12 --hidden 16 --tokens 16 --seeds 3");
    CHECK(t.exit_code == 0);
    CHECK(t.err.find("seed 3 of 3: final loss") != std::string::npos);
    CHECK(t.err.find("final loss over 3 seeds: mean") != std::string::npos);
    CHECK(run_command(exe + " train --seeds 0").exit_code == 2);
}

TEST_CASE("train --model transformer trains on text and names the corpus; bad settings are refused") {
    const std::string corpus = "/tmp/fp8lab-cli-test-corpus-" + std::to_string(getpid()) + ".txt";
    {
        std::ofstream out(corpus);
        for (int i = 0; i < 1000; ++i) out << "Every format has a largest value and a smallest step.\n";
    }
    const std::string small = " --model transformer --width 32 --ffn 64 --sequence 16 --tokens 32 --corpus " + corpus;
    const auto t = run_command(exe + " train --steps 4 --eval-every 2" + small);
    CHECK(t.exit_code == 0);
    CHECK(t.out.rfind("step\tloss\n0\t", 0) == 0);
    CHECK(t.err.find("corpus: " + corpus + ": 54000 bytes") != std::string::npos);
    CHECK(t.err.find("validation loss (bits per byte): step 2 ") != std::string::npos);
    CHECK(t.err.find("\ngreedy:  ") != std::string::npos);
    const auto missing = run_command(exe + " train --steps 2" + small + "-missing");
    CHECK(missing.exit_code == 2);
    CHECK(missing.err.find("task.corpus: " + corpus + "-missing: does not exist") != std::string::npos);
    const auto heads = run_command(exe + " train --steps 2 --heads 3" + small);
    CHECK(heads.exit_code == 2);
    CHECK(heads.err.find("--heads (model.transformer.heads: 3 does not divide the width (32)") != std::string::npos);
    const auto mlp = run_command(exe + " train --width 64");
    CHECK(mlp.exit_code == 2);
    CHECK(mlp.err.find("--width: is a transformer setting (add --model transformer)") != std::string::npos);
    const auto gpu = run_command(exe + " train --backend gpu --steps 2" + small);
    CHECK(gpu.exit_code != 0);
    std::remove(corpus.c_str());
}

#ifdef FP8LAB_CUDA_MODULE_PATH
// The CUDA part is a library opened on the first GPU call: commands without a GPU never
// load it (glibc's LD_DEBUG lists every library a process opens), a GPU command does, and
// a missing or broken library is named in the refusal.
TEST_CASE("only GPU commands open the CUDA part, and a missing one is named") {
    for (const std::string command :
         {" --version", " formats", " convert --to e4m3 3.14", " run formats/bits-to-value"}) {
        INFO(command);
        const auto r = run_command("LD_DEBUG=files " + exe + command);
        CHECK(r.exit_code == 0);
        CHECK(r.err.find("libfp8lab_cuda") == std::string::npos);
        CHECK(r.err.find("libcublasLt") == std::string::npos);
        CHECK(r.err.find("libcudart") == std::string::npos);
    }
    CHECK(run_command("LD_DEBUG=files " + exe + " bench gpu").err.find(FP8LAB_CUDA_MODULE_PATH) != std::string::npos);

    const auto missing = run_command("FP8LAB_CUDA_MODULE=/no/such/libfp8lab_cuda.so " + exe + " bench gpu");
    CHECK(missing.exit_code != 0);
    CHECK(missing.err.find("GPU part (libfp8lab_cuda.so) is not installed; looked for /no/such/libfp8lab_cuda.so") !=
          std::string::npos);
    const auto broken =
        run_command("FP8LAB_CUDA_MODULE=" + exe + " " + exe + " run inference/serving-speed --backend gpu");
    CHECK(broken.exit_code != 0);
    CHECK(broken.err.find("cannot be loaded") != std::string::npos);
}
#endif

// Results that cannot be written are a failure with a message, never a silent success.
TEST_CASE("every command that prints fails when its output cannot be written") {
    for (const std::string command : {" convert --to e4m3 3.14", " formats", " labs", " --version", " --help",
                                      " run formats/bits-to-value", " scaling --help"}) {
        INFO(command);
        const auto r = run_command("(" + exe + command + " >/dev/full)");
        CHECK(r.exit_code == 1);
        CHECK(r.err.find("the output could not be written") != std::string::npos);
    }
    CHECK(run_command(exe + " formats").exit_code == 0);
}

TEST_CASE("a word that is no command is named, with the commands") {
    const auto r = run_command(exe + " frobnicate --to e4m3");
    CHECK(r.exit_code == 2);
    CHECK(r.err.find("'frobnicate' is not a command (commands: convert, formats") != std::string::npos);
}

TEST_CASE("progress summarises the students' files; a bad file is named and the rest shown") {
    char name[] = "/tmp/fp8lab-progress-XXXXXX";
    const std::string dir = mkdtemp(name);
    {
        std::ofstream(dir + "/ada.txt") << "# fp8lab progress v1\nstudent = ada\nsolved = formats/bits-to-value\n"
                                           "solved = formats/ocp-vs-ieee\nsolved = rounding/modes\n";
        std::ofstream(dir + "/bob.txt") << "# fp8lab progress v1\nstudent = bob\n";
        std::ofstream(dir + "/bad.txt") << "hello\n";
    }
    const auto r = run_command(exe + " progress " + dir + "/ada.txt " + dir + "/bad.txt " + dir + "/bob.txt");
    CHECK(r.exit_code == 1);
    CHECK(r.err.find("bad.txt:1: not an fp8lab progress file") != std::string::npos);
    CHECK(r.out.find("lab 1") != std::string::npos);
    const auto ada = r.out.find("ada"), bob = r.out.find("bob");
    REQUIRE(ada != std::string::npos);
    REQUIRE(bob != std::string::npos);
    CHECK(r.out.substr(ada, r.out.find('\n', ada) - ada).find(" 2/") !=
          std::string::npos);  // lab 1: two of its exercises
    CHECK(r.out.substr(ada).find("3/") != std::string::npos);
    CHECK(r.out.substr(bob, r.out.find('\n', bob) - bob).find(" 0/") != std::string::npos);
    std::filesystem::remove_all(dir);
}

// A student's name reaches the terminal as text: control characters (an escape sequence
// that would recolour or clear it) and bytes that are not UTF-8 are escaped; valid UTF-8 is
// kept and counted as one column a character, so every row's columns line up; a file that
// begins with a byte-order mark reads.
TEST_CASE("progress shows names escaped, valid UTF-8 and aligned; a byte-order mark is read") {
    char name[] = "/tmp/fp8lab-progress-XXXXXX";
    const std::string dir = mkdtemp(name);
    const std::string names[] = {"plain", "Zo\xc3\xab \xc3\x85str\xc3\xb6m", "evil\x1b[2Jx", "bad\xff\xc3",
                                 "long \xe6\x97\xa5\xe6\x9c\xac\xe8\xaa\x9e name that goes on and on"};
    std::string files;
    for (std::size_t i = 0; i < std::size(names); ++i) {
        const std::string path = dir + "/" + std::to_string(i) + ".txt";
        std::ofstream(path) << (i == 0 ? "\xEF\xBB\xBF" : "") << "# fp8lab progress v1\nstudent = " << names[i] << "\n";
        files += " " + path;
    }
    const auto r = run_command(exe + " progress" + files);
    CHECK_MESSAGE(r.exit_code == 0, r.err);
    CHECK(r.out.find('\x1b') == std::string::npos);
    CHECK(r.out.find("evil\\x1b[2Jx") != std::string::npos);
    CHECK(r.out.find("bad\\xff\\xc3") != std::string::npos);
    CHECK(r.out.find("Zo\xc3\xab \xc3\x85str\xc3\xb6m") != std::string::npos);
    // Every row's first column ends at the same character: count UTF-8 characters to " 0/".
    const auto characters_before_first_count = [](const std::string& line) {
        std::size_t n = 0;
        for (std::size_t i = 0; i < line.find(" 0/"); ++i) n += (static_cast<unsigned char>(line[i]) & 0xC0) != 0x80;
        return n;
    };
    std::istringstream lines(r.out);
    std::string line;
    std::getline(lines, line);  // the header
    std::set<std::size_t> widths;
    int rows = 0;
    while (std::getline(lines, line)) {
        CAPTURE(line);
        ++rows;
        widths.insert(characters_before_first_count(line));
    }
    CHECK(rows == 5);
    CHECK(widths.size() == 1);
    std::filesystem::remove_all(dir);
}

TEST_CASE(
    "the lab text holds the exercises' words and the titles: an edited content folder changes a hint and a title, a "
    "bad key is file:line") {
    namespace fs = std::filesystem;
    const fs::path dir = fs::temp_directory_path() / ("fp8lab-content-" + std::to_string(::getpid()));
    fs::remove_all(dir);
    fs::copy(FP8LAB_TEST_CONTENT_DIR, dir, fs::copy_options::recursive);
    const std::string file = (dir / "01-formats.md").string();
    std::string text = fp8lab::test::read_file(file);
    const std::string old_hint = "hint max: That is the saturating conversion (satfinite).";
    REQUIRE(text.find(old_hint) != std::string::npos);
    const std::string command = " " + exe + " run formats/special-values --answer 3 --json";
    const auto before = run_command("FP8LAB_CONTENT_DIR=" + dir.string() + command);
    REQUIRE(before.exit_code == 0);
    CHECK(before.out.find("\"hint\":\"That is the saturating conversion (satfinite).") != std::string::npos);
    text.replace(text.find(old_hint), old_hint.size(), "hint max: Saturation would give the maximum, not this.");
    // A table's title is the text's too.
    const std::string old_title = "table specials: Special values by format";
    REQUIRE(text.find(old_title) != std::string::npos);
    CHECK(before.out.find("\"title\":\"Special values by format\"") != std::string::npos);
    text.replace(text.find(old_title), old_title.size(),
                 "table specials: Zeros, infinities and NaNs, format by format");
    std::ofstream(file, std::ios::binary | std::ios::trunc) << text;
    const auto after = run_command("FP8LAB_CONTENT_DIR=" + dir.string() + command);
    REQUIRE(after.exit_code == 0);
    CHECK(after.out.find("\"hint\":\"Saturation would give the maximum, not this.") != std::string::npos);
    CHECK(after.out.find("\"title\":\"Zeros, infinities and NaNs, format by format\"") != std::string::npos);
    // A key the code does not know: the lab does not load, and the error names file and line.
    const std::size_t at = text.find("hint max:");
    const int line = int(std::count(text.begin(), text.begin() + std::ptrdiff_t(at), '\n')) + 1;
    text.replace(at, 9, "hint most:");
    std::ofstream(file, std::ios::binary | std::ios::trunc) << text;
    const auto bad = run_command("FP8LAB_CONTENT_DIR=" + dir.string() + command);
    CHECK(bad.exit_code != 0);
    CHECK(bad.err.find(file + ":" + std::to_string(line) + ": the exercise has no 'hint most'") != std::string::npos);
    fs::remove_all(dir);
}
