// Atomic whole-file writes for everything the program saves (atomic_file.hpp).
#include "app/cli/atomic_file.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <stdexcept>

namespace fp8lab::cli {
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

}  // namespace

void write_file_atomically(const std::string& path, const std::string& content) {
    const std::filesystem::path target(path);
    const std::filesystem::path folder = target.has_parent_path() ? target.parent_path() : ".";
    // mkostemp creates the name exclusively (O_EXCL): never an existing file or a link.
    std::string temporary = (folder / ("." + target.filename().string() + ".XXXXXX")).string();
    const int fd = mkostemp(temporary.data(), O_CLOEXEC);
    if (fd < 0) throw std::runtime_error("cannot write " + path + ": cannot create a file in " + folder.string() + ": " +
                                         std::strerror(errno));
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
    if (std::rename(temporary.c_str(), path.c_str()) != 0) fail("rename", errno);
}

}  // namespace fp8lab::cli
