// SPDX-License-Identifier: Apache-2.0
// An exclusive lock on an output folder, so that two runs writing into it take turns
// instead of interleaving their files.
#pragma once

#include <string>

namespace fp8lab::files {

class FolderLock {
  public:
    // Locks FOLDER/.fp8lab.lock (created if absent, never through a link); when another
    // process holds it, says so on stderr and waits. Throws std::runtime_error on failure.
    explicit FolderLock(const std::string& folder);
    ~FolderLock();
    FolderLock(const FolderLock&) = delete;
    FolderLock& operator=(const FolderLock&) = delete;

  private:
    int fd_ = -1;
};

}  // namespace fp8lab::files
