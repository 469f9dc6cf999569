// SPDX-License-Identifier: Apache-2.0
// Runs a shell command for CLI tests: feeds stdin, captures stdout, stderr and the status.
#pragma once

#include <sys/wait.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>

namespace fp8lab::test {

struct CommandResult {
    int exit_code = -1;
    std::string out, err;
};

inline std::string read_file(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
}

inline CommandResult run_command(const std::string& command, const std::string& input = "") {
    char dir_template[] = "/tmp/fp8lab-cli-XXXXXX";
    const std::string dir = mkdtemp(dir_template);
    const std::string in = dir + "/in", out = dir + "/out", err = dir + "/err";
    std::ofstream(in, std::ios::binary) << input;
    const std::string full = command + " <" + in + " >" + out + " 2>" + err;
    const int status = std::system(full.c_str());
    CommandResult r;
    r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    r.out = read_file(out);
    r.err = read_file(err);
    std::system(("rm -rf " + dir).c_str());
    return r;
}

}  // namespace fp8lab::test
