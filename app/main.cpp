// SPDX-License-Identifier: Apache-2.0
// fp8lab: one program, many subcommands. Bad usage exits with status 2, failures at run
// time (a write that did not arrive among them) with 1.
#include <CLI/CLI.hpp>
#if defined(__GLIBC__)
#include <malloc.h>
#endif

#include <cerrno>
#include <cstdio>
#include <csignal>
#include <cstring>
#include <exception>
#include <iostream>
#include <string>

#include "emulator/base/quoted_input.hpp"
#include "app/cli/commands.hpp"
#include "app/options/usage_error.hpp"

namespace {

// Results that did not reach their destination (a full disk, /dev/full, a closed file)
// are a failure, not a success: flush and close standard output and check both.
int delivered(int code) {
    std::cout.flush();
    const bool stream_failed = std::cout.fail();
    errno = 0;
    const bool flush_failed = std::fflush(stdout) != 0 || std::ferror(stdout);
    const int flush_errno = errno;
    const bool close_failed = std::fclose(stdout) != 0;
    if (!stream_failed && !flush_failed && !close_failed) return code;
    const int why = flush_errno ? flush_errno : errno;
    std::fprintf(stderr, "fp8lab: failed: the output could not be written%s%s\n", why ? ": " : "",
                 why ? std::strerror(why) : "");
    return code == 0 ? 1 : code;
}

// CLI11 reports a word that is no command as "A subcommand is required"; name the word, at
// whatever level it stands ("fp8lab trace nope": 'nope' is not a trace command).
std::string unknown_command(const CLI::App& app, int argc, char** argv) {
    const CLI::App* level = &app;
    std::string path = "";
    for (int i = 1; i < argc && argv[i][0] != '-'; ++i) {
        const auto subs = level->get_subcommands([](const CLI::App*) { return true; });
        if (subs.empty()) return {};  // a command's own arguments: CLI11 judges them
        std::string names;
        const CLI::App* next = nullptr;
        for (const CLI::App* sub : subs) {
            if (sub->check_name(argv[i])) next = sub;
            names += (names.empty() ? "" : ", ") + sub->get_name();
        }
        if (!next)
            return fp8lab::emu::quoted_input(argv[i]) + " is not a " + path + "command (" + path +
                   "commands: " + names + ")";
        level = next;
        path += next->get_name() + " ";
    }
    return {};
}

// A training step frees buffers of 64-400 KiB (a quantised operand's block scales, a
// layer's gradient) that the next step allocates again. glibc returned them to the kernel
// and took them back, zeroing every page anew: `bench trainer --size notebook` spent 3.5 s
// of its 30 s of CPU time in the kernel (0.5 s with this), and its steps were 3-7% slower.
// Up to 64 MiB of freed memory is kept, and blocks up to 16 MiB come from the heap: with
// 32 MiB the GUI's tour peaked 48 MB higher (463 MB against 415); with 16 it peaks as it
// did. (The Python module leaves the interpreter's allocator as it is.)
void keep_freed_memory() {
#if defined(__GLIBC__)
    mallopt(M_MMAP_THRESHOLD, 16 << 20);
    mallopt(M_TRIM_THRESHOLD, 64 << 20);
#endif
}

}  // namespace

int main(int argc, char** argv) {
    keep_freed_memory();
    // Past the file-size limit (ulimit -f) the kernel would kill the program mid-write with
    // SIGXFSZ, leaving a hidden temporary file and no word; ignored, the write fails with
    // EFBIG, which every writer reports, removing its temporary file.
    std::signal(SIGXFSZ, SIG_IGN);
    CLI::App app{"fp8lab: a lab for low-precision number formats and FP8 training"};
    app.require_subcommand(1);
    app.set_version_flag("--version", std::string("fp8lab ") + FP8LAB_VERSION);
    fp8lab::cli::CommandStatus status;
    fp8lab::cli::add_convert_command(app, status);
    fp8lab::cli::add_formats_command(app, status);
    fp8lab::cli::add_decode_command(app, status);
    fp8lab::cli::add_scaling_command(app, status);
    fp8lab::cli::add_quantize_command(app, status);
    fp8lab::cli::add_train_command(app, status);
    fp8lab::cli::add_trace_command(app, status);
    fp8lab::cli::add_labs_command(app, status);
    fp8lab::cli::add_run_command(app, status);
    fp8lab::cli::add_figures_command(app, status);
    fp8lab::cli::add_bench_command(app, status);
    fp8lab::cli::add_gui_command(app, status);
    fp8lab::cli::add_progress_command(app, status);
    if (const std::string unknown = unknown_command(app, argc, argv); !unknown.empty()) {
        std::fprintf(stderr, "fp8lab: error: %s\n", unknown.c_str());
        return 2;
    }
    // "--" ends the options: what follows is values, which only convert takes.
    for (int i = 1; i < argc; ++i) {
        if (std::strcmp(argv[i], "--") != 0) continue;
        if (i == 1 || std::strcmp(argv[1], "convert") != 0) {
            std::fprintf(stderr, "fp8lab: error: '--' ends the options before values; only convert takes values\n");
            return 2;
        }
        status.after_options.assign(argv + i + 1, argv + argc);
        argc = i;
        break;
    }
    try {
        app.parse(argc, argv);
    } catch (const CLI::ParseError& e) {
        if (e.get_exit_code() == 0) return delivered(app.exit(e));  // --help, --version
        std::fprintf(stderr,
                     "fp8lab: error: %s\nRun 'fp8lab --help' (or 'fp8lab COMMAND --help') "
                     "for usage.\n",
                     e.what());
        return 2;
    } catch (const fp8lab::options::UsageError& e) {
        std::fflush(stdout);
        std::fprintf(stderr, "fp8lab: error: %s\n", e.what());
        return 2;
    } catch (const std::exception& e) {
        std::fflush(stdout);
        std::fprintf(stderr, "fp8lab: failed: %s\n", e.what());
        return 1;
    }
    return delivered(status.exit_code);
}
