// SPDX-License-Identifier: Apache-2.0
// Atomic whole-file writes for everything the program saves (atomic_file.hpp).
#include "app/files/atomic_file.hpp"

#include <fcntl.h>
#include <pthread.h>
#include <sys/stat.h>
#include <unistd.h>

#include <csignal>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <stdexcept>

namespace fp8lab::files {
namespace {

// The mode the file would have had if written in place: an existing file's own, else
// what the umask leaves of rw-rw-rw- (mkostemp creates rw------- whatever the umask).
mode_t mode_for(const std::string& path) {
    struct stat existing {};
    if (::stat(path.c_str(), &existing) == 0 && S_ISREG(existing.st_mode)) return existing.st_mode & 07777;
    static const mode_t umask_bits = [] {
        const mode_t bits = ::umask(0);  // read once: umask has no getter
        ::umask(bits);
        return bits;
    }();
    return 0666 & ~umask_bits;
}

// The temporary file being written, for the signal handler: Ctrl-C or a kill in the middle
// of a write must not leave it behind. One slot: the program writes one file at a time.
char pending_temporary[4096];
volatile std::sig_atomic_t has_pending = 0;

extern "C" void remove_pending_and_reraise(int signal_number) {
    if (has_pending) ::unlink(pending_temporary);
    ::raise(signal_number);  // SA_RESETHAND restored the default action: the program ends as it would have
}

void remove_temporaries_on_signals() {
    static const bool installed = [] {
        struct sigaction action {};
        action.sa_handler = remove_pending_and_reraise;
        action.sa_flags = SA_RESETHAND;
        sigemptyset(&action.sa_mask);
        for (int signal_number : {SIGINT, SIGTERM, SIGHUP}) {
            struct sigaction previous {};
            // Leave a handler someone else installed (or an ignored signal) alone.
            if (::sigaction(signal_number, nullptr, &previous) == 0 && previous.sa_handler == SIG_DFL)
                ::sigaction(signal_number, &action, nullptr);
        }
        return true;
    }();
    (void)installed;
}

// Registers the temporary for removal on a signal while it exists.
class PendingTemporary {
  public:
    explicit PendingTemporary(const std::string& path, bool exists) {
        if (!exists || path.size() >= sizeof pending_temporary) return;
        std::memcpy(pending_temporary, path.c_str(), path.size() + 1);
        has_pending = 1;
    }
    ~PendingTemporary() { has_pending = 0; }
};

// Writes the temporary file and renames it to `path`, over an existing file when `replace`;
// returns false (the temporary removed) when `path` exists and must be kept.
bool write_and_rename(const std::string& path, const std::string& content, bool replace) {
    const std::filesystem::path target(path);
    const std::filesystem::path folder = target.has_parent_path() ? target.parent_path() : ".";
    // A device, FIFO, socket or folder at the target is never replaced (renaming over
    // /dev/null as root would remove the device); a link is replaced, never followed.
    struct stat existing {};
    if (::lstat(path.c_str(), &existing) == 0 && !S_ISREG(existing.st_mode) && !S_ISLNK(existing.st_mode))
        throw std::runtime_error("cannot write " + path + ": it is not a regular file; it is left as it is");
    // mkostemp creates the name exclusively (O_EXCL): never an existing file or a link.
    std::string temporary = (folder / (std::string(1, '.') + target.filename().string() + ".XXXXXX")).string();
    remove_temporaries_on_signals();
    sigset_t signals, previous_mask;
    sigemptyset(&signals);
    for (int signal_number : {SIGINT, SIGTERM, SIGHUP}) sigaddset(&signals, signal_number);
    ::pthread_sigmask(SIG_BLOCK, &signals, &previous_mask);  // no signal between creating and registering
    const int fd = mkostemp(temporary.data(), O_CLOEXEC);
    const int create_error = errno;
    const PendingTemporary pending(temporary, fd >= 0);
    ::pthread_sigmask(SIG_SETMASK, &previous_mask, nullptr);
    if (fd < 0)
        throw std::runtime_error("cannot write " + path + ": cannot create a file in " + folder.string() + ": " +
                                 std::strerror(create_error));
    const auto fail = [&](const char* what, int error) {
        ::unlink(temporary.c_str());
        throw std::runtime_error("cannot write " + path + ": " + what + ": " + std::strerror(error));
    };
    for (std::size_t done = 0; done < content.size();) {
        const ssize_t n = ::write(fd, content.data() + done, content.size() - done);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) {
            const int error = n < 0 ? errno : EIO;
            ::close(fd);
            fail("write", error);
        }
        done += std::size_t(n);
    }
    if (::fchmod(fd, mode_for(path)) != 0) {
        const int error = errno;
        ::close(fd);
        fail("fchmod", error);
    }
    if (::fsync(fd) != 0) {
        const int error = errno;
        ::close(fd);
        fail("fsync", error);
    }
    if (::close(fd) != 0) fail("close", errno);
    if (replace) {
        if (std::rename(temporary.c_str(), path.c_str()) != 0) fail("rename", errno);
        return true;
    }
    if (::renameat2(AT_FDCWD, temporary.c_str(), AT_FDCWD, path.c_str(), RENAME_NOREPLACE) == 0) return true;
    if (errno == EINVAL || errno == ENOSYS) {  // a file system without renameat2's flags: link is exclusive too
        if (::link(temporary.c_str(), path.c_str()) == 0) {
            ::unlink(temporary.c_str());
            return true;
        }
    }
    if (errno != EEXIST) fail("rename", errno);
    ::unlink(temporary.c_str());
    return false;
}

}  // namespace

void write_file_atomically(const std::string& path, const std::string& content) {
    write_and_rename(path, content, true);
}

bool write_new_file_atomically(const std::string& path, const std::string& content) {
    return write_and_rename(path, content, false);
}

std::string write_numbered_file(const std::string& stem, const std::string& extension, const std::string& content) {
    for (int n = 1; n < 100000; ++n) {
        const std::string path = stem + "-" + std::to_string(n) + extension;
        if (write_new_file_atomically(path, content)) return path;
    }
    throw std::runtime_error("cannot write " + stem + "-N" + extension + ": every number up to 99999 is taken");
}

}  // namespace fp8lab::files
