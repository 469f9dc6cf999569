// Writing a whole file so that a reader never sees half of it: beside, then renamed over.
#pragma once

#include <string>

namespace fp8lab::cli {

// Throws std::runtime_error naming the file when it cannot be written.
void write_file_atomically(const std::string& path, const std::string& content);

}  // namespace fp8lab::cli
