// SPDX-License-Identifier: Apache-2.0
// Files a user names, read and checked before any work: only regular files are read (a
// FIFO would hang, a folder or device is not an input), within a size limit, and an output
// path must be a place a regular file can be written.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace fp8lab::emu {

// The largest input file fp8lab reads (an experiment, a trace, a progress file): far past
// any it writes, so that /dev/zero or a wrong file fails at once with a message.
inline constexpr std::size_t kMaxInputFileBytes = std::size_t(256) << 20;

// The whole of `path` when it is a regular file (or a link to one) of at most `max_bytes`.
// Throws std::invalid_argument "WHAT PATH: is a folder, not a file" (a FIFO, a socket, a
// device: likewise, by name), "cannot be read: REASON" or "is larger than N MiB".
std::string read_user_file(std::string_view what, const std::string& path, std::size_t max_bytes = kMaxInputFileBytes);

// Checks, before any work, that a regular file can be written at `path`: not empty, not an
// existing folder, FIFO, socket or device (nor a link to one), not the same file as any of
// `inputs`, in a folder that exists and is writable. Throws std::invalid_argument naming
// `what` and the reason.
void check_output_path(std::string_view what, const std::string& path, const std::vector<std::string>& inputs = {});

}  // namespace fp8lab::emu
