// SPDX-License-Identifier: Apache-2.0
// FolderLock: flock(2) on a lock file inside the folder (folder_lock.hpp).
#include "app/files/folder_lock.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <stdexcept>

namespace fp8lab::files {

FolderLock::FolderLock(const std::string& folder) {
    const std::string path = folder + "/.fp8lab.lock";
    fd_ = ::open(path.c_str(), O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0644);
    if (fd_ < 0) throw std::runtime_error("cannot lock " + folder + ": " + path + ": " + std::strerror(errno));
    if (::flock(fd_, LOCK_EX | LOCK_NB) == 0) return;
    if (errno == EWOULDBLOCK) {
        std::fprintf(stderr, "waiting for another fp8lab writing into %s to finish...\n", folder.c_str());
        int rc;
        while ((rc = ::flock(fd_, LOCK_EX)) != 0 && errno == EINTR) {
        }
        if (rc == 0) return;
    }
    const int error = errno;
    ::close(fd_);
    throw std::runtime_error("cannot lock " + folder + ": " + std::strerror(error));
}

FolderLock::~FolderLock() {
    if (fd_ >= 0) ::close(fd_);  // closing releases the lock
}

}  // namespace fp8lab::files
