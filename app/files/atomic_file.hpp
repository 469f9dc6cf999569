// SPDX-License-Identifier: Apache-2.0
// Writing a whole file so that a reader never sees half of it and a failure leaves the old
// one intact: a new file of its own beside the target, every write checked, synced, then
// renamed over the target (a link at the target is replaced, never followed).
#pragma once

#include <string>

namespace fp8lab::files {

// Throws std::runtime_error naming the file and the system's reason when it cannot be
// written; the temporary file is removed then.
void write_file_atomically(const std::string& path, const std::string& content);

// The same, but an existing file at `path` is kept: returns false, having written nothing.
bool write_new_file_atomically(const std::string& path, const std::string& content);

// Writes STEM-1EXTENSION, or STEM-2EXTENSION if that exists, and so on: never over an
// earlier file. Returns the path written.
std::string write_numbered_file(const std::string& stem, const std::string& extension, const std::string& content);

}  // namespace fp8lab::files
