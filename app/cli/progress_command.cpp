// `fp8lab progress FILE...`: the progress files students hand in, as one table per class.
#include <CLI/CLI.hpp>

#include <cstdio>
#include <fstream>
#include <memory>
#include <sstream>

#include "app/cli/commands.hpp"
#include "app/cli/lab_selection.hpp"
#include "emulator/user_files.hpp"
#include "labs/framework/progress.hpp"

namespace fp8lab::cli {
namespace {

std::string read_whole(const std::string& path) { return emu::read_user_file("progress file", path); }

// A row per file that could be read (a bad one is named on stderr, the rest still shown),
// a column per lab: solved of its exercises; then the total. Exit status 1 when any file
// was refused.
void print_progress(const std::vector<std::string>& files, CommandStatus& status) {
    const labs::Catalog& catalog = lab_catalog();
    std::printf("%-24s", "student");
    for (std::size_t l = 0; l < catalog.labs.size(); ++l) std::printf(" %6s", ("lab " + std::to_string(l + 1)).c_str());
    std::printf("  %s\n", "total");
    for (const std::string& path : files) {
        labs::ProgressFile file;
        try {
            file = labs::read_progress_file(read_whole(path), path);
        } catch (const std::exception& e) {
            std::fprintf(stderr, "fp8lab progress: %s\n", e.what());
            status.exit_code = 1;
            continue;
        }
        std::printf("%-24s", file.student.substr(0, 24).c_str());
        int solved = 0, exercises = 0;
        for (const labs::LabProgress& p : labs::progress_by_lab(catalog, file.solved)) {
            std::printf(" %6s", (std::to_string(p.solved) + "/" + std::to_string(p.exercises)).c_str());
            solved += p.solved;
            exercises += p.exercises;
        }
        std::printf("  %d/%d\n", solved, exercises);
    }
}

}  // namespace

void add_progress_command(CLI::App& app, CommandStatus& status) {
    auto files = std::make_shared<std::vector<std::string>>();
    CLI::App* cmd = app.add_subcommand("progress",
                                       "Summarise the progress files students exported from the lab "
                                       "(Progress > Export progress)");
    cmd->add_option("files", *files, "Progress files")->required();
    cmd->callback([files, &status] { print_progress(*files, status); });
}

}  // namespace fp8lab::cli
