// SPDX-License-Identifier: Apache-2.0
// The subcommands of `fp8lab`; each adds itself to the CLI11 app and records its status.
#pragma once

#include <string>
#include <vector>

namespace CLI {
class App;
}

namespace fp8lab::cli {

// Every command's callback stores its exit status here (0 ok, 1 some input failed).
struct CommandStatus {
    int exit_code = 0;
    // The words after "--" (the end of the options): values that look like options, such
    // as -nan. CLI11 2.1 hands them to the top level, so main() takes them off first.
    std::vector<std::string> after_options;
};

void add_convert_command(CLI::App& app, CommandStatus& status);
void add_formats_command(CLI::App& app, CommandStatus& status);
void add_decode_command(CLI::App& app, CommandStatus& status);
void add_bench_command(CLI::App& app, CommandStatus& status);
void add_bench_gemm_command(CLI::App& bench);       // a subcommand of bench
void add_bench_gpu_command(CLI::App& bench);        // a subcommand of bench
void add_bench_crossover_command(CLI::App& bench);  // a subcommand of bench
void add_scaling_command(CLI::App& app, CommandStatus& status);
void add_quantize_command(CLI::App& app, CommandStatus& status);
void add_train_command(CLI::App& app, CommandStatus& status);
void add_trace_command(CLI::App& app, CommandStatus& status);
void add_labs_command(CLI::App& app, CommandStatus& status);
void add_run_command(CLI::App& app, CommandStatus& status);
void add_figures_command(CLI::App& app, CommandStatus& status);
void add_gui_command(CLI::App& app, CommandStatus& status);
void add_progress_command(CLI::App& app, CommandStatus& status);

}  // namespace fp8lab::cli
