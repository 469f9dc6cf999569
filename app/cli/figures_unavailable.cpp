// SPDX-License-Identifier: Apache-2.0
// `fp8lab figures` in a build without Cairo: says so instead of pretending.
#include <CLI/CLI.hpp>

#include "app/cli/commands.hpp"
#include "app/options/usage_error.hpp"

namespace fp8lab::cli {
using options::UsageError;

void add_figures_command(CLI::App& app, CommandStatus&) {
    CLI::App* cmd = app.add_subcommand("figures", "Write every figure (this build has no Cairo: unavailable)");
    cmd->allow_extras();
    cmd->callback([] {
        throw UsageError(
            "figures: this fp8lab was built without Cairo; install libcairo2-dev and rebuild "
            "(FP8LAB_EXPORT=ON)");
    });
}

}  // namespace fp8lab::cli
