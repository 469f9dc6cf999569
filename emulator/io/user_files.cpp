// SPDX-License-Identifier: Apache-2.0
// Reading a user's input file and checking an output path, with messages that say why not.
#include "emulator/io/user_files.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <system_error>
#include <stdexcept>

#include "emulator/base/quoted_input.hpp"

namespace fp8lab::emu {
namespace {

// What a file that is not a regular one is, in words; "" for a regular file.
std::string kind_of(mode_t mode) {
    if (S_ISREG(mode)) return "";
    if (S_ISDIR(mode)) return "a folder";
    if (S_ISFIFO(mode)) return "a FIFO";
    if (S_ISSOCK(mode)) return "a socket";
    if (S_ISCHR(mode) || S_ISBLK(mode)) return "a device";
    return "not a regular file";
}

// A path is quoted whole up to PATH_MAX (a message that cuts it names no file), escaped.
std::string named(std::string_view what, const std::string& path) {
    return std::string(what) + " " + quoted_input(path, 4096);
}

}  // namespace

std::string read_user_file(std::string_view what, const std::string& path, std::size_t max_bytes) {
    if (path.empty()) throw std::invalid_argument(std::string(what) + ": an empty path names no file");
    // O_NONBLOCK: opening a FIFO for reading would otherwise wait for a writer.
    const int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0) throw std::invalid_argument(named(what, path) + ": cannot be read: " + std::strerror(errno));
    struct Closer {
        int fd;
        ~Closer() { ::close(fd); }
    } closer{fd};
    struct stat st {};
    if (::fstat(fd, &st) != 0)
        throw std::invalid_argument(named(what, path) + ": cannot be read: " + std::strerror(errno));
    if (const std::string kind = kind_of(st.st_mode); !kind.empty())
        throw std::invalid_argument(named(what, path) + ": is " + kind + ", not a file");
    // One byte past the limit is room enough to tell a file that is too long; st_size may be
    // short of the end (a file still growing, a /proc file), so the buffer grows as it fills.
    const std::string too_large = named(what, path) + ": is larger than " + std::to_string(max_bytes >> 20) +
                                  " MiB, more than any file fp8lab reads";
    if (std::uint64_t(st.st_size) > max_bytes) throw std::invalid_argument(too_large);
    std::string text(std::min(max_bytes + 1, std::max<std::size_t>(std::size_t(st.st_size) + 1, 4096)), '\0');
    std::size_t done = 0;
    for (;;) {
        if (done == text.size()) {
            if (text.size() > max_bytes) throw std::invalid_argument(too_large);
            text.resize(std::min(max_bytes + 1, 2 * text.size()));
        }
        const ssize_t n = ::read(fd, text.data() + done, text.size() - done);
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) throw std::invalid_argument(named(what, path) + ": reading failed: " + std::strerror(errno));
        if (n == 0) break;
        done += std::size_t(n);
    }
    text.resize(done);
    return text;
}

void check_output_path(std::string_view what, const std::string& path, const std::vector<std::string>& inputs) {
    namespace fs = std::filesystem;
    if (path.empty()) throw std::invalid_argument(std::string(what) + ": an empty path names no file");
    struct stat st {};
    if (::stat(path.c_str(), &st) == 0) {  // follows a link: what the path reaches
        if (const std::string kind = kind_of(st.st_mode); !kind.empty())
            throw std::invalid_argument(named(what, path) + ": is " + kind +
                                        "; fp8lab writes only regular files, and leaves it as it is");
        for (const std::string& input : inputs) {
            struct stat in {};
            if (!input.empty() && ::stat(input.c_str(), &in) == 0 && in.st_dev == st.st_dev && in.st_ino == st.st_ino)
                throw std::invalid_argument(named(what, path) + ": is the input " + quoted_input(input, 4096) +
                                            "; writing it would replace what is being read");
        }
    }
    // Paths compared as they resolve, whether they exist yet or not: two outputs of one run
    // naming one new file, or an output inside an input folder (a corpus of text files,
    // which would read it next time, or which a second run would read back).
    std::error_code error;
    const fs::path resolved = fs::weakly_canonical(path, error);
    for (const std::string& input : inputs) {
        if (input.empty() || error) continue;
        std::error_code input_error;
        const fs::path other = fs::weakly_canonical(input, input_error);
        if (input_error) continue;
        if (other == resolved)
            throw std::invalid_argument(named(what, path) + ": is also " + quoted_input(input, 4096) +
                                        ", which this run reads or writes; name another file");
        struct stat in {};
        if (::stat(other.c_str(), &in) == 0 && S_ISDIR(in.st_mode)) {
            const std::string folder = other.string() + "/";
            if (resolved.string().starts_with(folder))
                throw std::invalid_argument(named(what, path) + ": lies in the folder " + quoted_input(input, 4096) +
                                            ", which this run reads; write it elsewhere");
        }
    }
    const fs::path parent = fs::path(path).parent_path().empty() ? fs::path(".") : fs::path(path).parent_path();
    if (::stat(parent.c_str(), &st) != 0 || !S_ISDIR(st.st_mode))
        throw std::invalid_argument(named(what, path) + ": its folder " + quoted_input(parent.string(), 4096) +
                                    " does not exist");
    if (::access(parent.c_str(), W_OK | X_OK) != 0)
        throw std::invalid_argument(named(what, path) + ": cannot write in " + quoted_input(parent.string(), 4096) +
                                    ": " + std::strerror(errno));
}

}  // namespace fp8lab::emu
