// SPDX-License-Identifier: Apache-2.0
// `fp8lab gui` in a build without the desktop app: says why instead of pretending.
#include <CLI/CLI.hpp>

#include "app/cli/commands.hpp"
#include "app/options/usage_error.hpp"

namespace fp8lab::cli {
using options::UsageError;

void add_gui_command(CLI::App& app, CommandStatus&) {
    CLI::App* cmd = app.add_subcommand("gui", "Open the desktop lab (this build has no GUI: unavailable)");
    cmd->allow_extras();
    cmd->callback([] {
        throw UsageError(
            "gui: this fp8lab was built without the desktop app; install libglfw3-dev libimgui-dev "
            "libmd4c-dev libcairo2-dev and rebuild (FP8LAB_GUI=ON)");
    });
}

}  // namespace fp8lab::cli
