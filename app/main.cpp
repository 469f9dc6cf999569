// fp8lab: one program, many subcommands. Bad usage exits with status 2.
#include <CLI/CLI.hpp>

#include <cstdio>
#include <exception>

#include "app/cli/commands.hpp"
#include "app/cli/usage_error.hpp"

int main(int argc, char** argv) {
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
    try {
        app.parse(argc, argv);
    } catch (const CLI::ParseError& e) {
        if (e.get_exit_code() == 0) return app.exit(e);  // --help, --version
        std::fprintf(stderr, "fp8lab: error: %s\nRun 'fp8lab --help' (or 'fp8lab COMMAND --help') "
                             "for usage.\n", e.what());
        return 2;
    } catch (const fp8lab::cli::UsageError& e) {
        std::fflush(stdout);
        std::fprintf(stderr, "fp8lab: error: %s\n", e.what());
        return 2;
    } catch (const std::exception& e) {
        std::fflush(stdout);
        std::fprintf(stderr, "fp8lab: failed: %s\n", e.what());
        return 1;
    }
    return status.exit_code;
}
