// Atomic whole-file writes for the commands that save results.
#include "app/cli/atomic_file.hpp"

#include <cstdio>
#include <fstream>
#include <stdexcept>

namespace fp8lab::cli {

void write_file_atomically(const std::string& path, const std::string& content) {
    const std::string tmp = path + ".tmp";
    {
        std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
        out << content;
        if (!out.flush()) throw std::runtime_error("cannot write " + tmp);
    }
    if (std::rename(tmp.c_str(), path.c_str()) != 0) throw std::runtime_error("cannot replace " + path);
}

}  // namespace fp8lab::cli
