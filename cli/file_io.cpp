// file_io.cpp - see file_io.hpp.
#include "file_io.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <csignal>
#include <cstdlib>
#include <cstring>

namespace mans_cli {
namespace {

constexpr std::size_t kChunk = std::size_t(4) << 20;

// Path of the temp file being written, for the signal handler (async-signal-safe
// access only: a fixed buffer and a flag).
char g_temp_path[PATH_MAX + 32];
volatile std::sig_atomic_t g_temp_active = 0;

extern "C" void cleanup_and_reraise(int sig) {
    if (g_temp_active) unlink(g_temp_path);
    std::signal(sig, SIG_DFL);
    raise(sig);
}

std::string errno_text(int err) { return std::strerror(err); }

[[noreturn]] void fail(const std::string& shown, int err) {
    throw IoError(shown + ": " + errno_text(err));
}

// Writes all bytes to fd; returns 0 or an errno value.
int write_all(int fd, const std::uint8_t* p, std::size_t n, std::size_t total_done,
              std::size_t total, const IoProgress& progress) {
    std::size_t done = 0;
    while (done < n) {
        const std::size_t want = std::min(kChunk, n - done);
        const ssize_t w = ::write(fd, p + done, want);
        if (w < 0) {
            if (errno == EINTR) continue;
            return errno;
        }
        done += static_cast<std::size_t>(w);
        if (progress) progress(total_done + done, total);
    }
    return 0;
}

void write_direct(int fd, const std::string& shown, const void* data, std::size_t size,
                  const IoProgress& progress) {
    if (int err = write_all(fd, static_cast<const std::uint8_t*>(data), size, 0, size, progress))
        fail(shown, err);
}

mode_t creation_mode() {
    const mode_t mask = ::umask(0);
    ::umask(mask);
    return static_cast<mode_t>(0666) & ~mask;
}

}  // namespace

std::string display_input(const std::string& path) { return path == "-" ? "<stdin>" : path; }
std::string display_output(const std::string& path) { return path == "-" ? "<stdout>" : path; }

std::uint64_t input_size_hint(const std::string& path) {
    if (path == "-") return 0;
    struct stat st;
    if (::stat(path.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) return 0;
    return static_cast<std::uint64_t>(st.st_size);
}

bool is_regular_file(const std::string& path) {
    struct stat st;
    return path != "-" && ::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

std::vector<std::uint8_t> read_input(const std::string& path, const IoProgress& progress) {
    const std::string shown = display_input(path);
    int fd = STDIN_FILENO;
    if (path != "-") {
        fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
        if (fd < 0) fail(shown, errno);
    }
    struct Closer {
        int fd;
        ~Closer() {
            if (fd != STDIN_FILENO) ::close(fd);
        }
    } closer{fd};

    struct stat st;
    if (::fstat(fd, &st) != 0) fail(shown, errno);
    if (S_ISDIR(st.st_mode)) fail(shown, EISDIR);
    // Bytes from the current offset: stdin may be a file that was partly read already.
    std::uint64_t known = 0;
    if (S_ISREG(st.st_mode)) {
        const off_t at = ::lseek(fd, 0, SEEK_CUR);
        if (at >= 0 && at <= st.st_size) known = static_cast<std::uint64_t>(st.st_size - at);
    }

    std::vector<std::uint8_t> buf;
    try {
        // A regular file is read into an exactly sized buffer (plus growth if it
        // grows while we read); anything else grows geometrically.
        buf.resize(known ? known : kChunk);
    } catch (const std::bad_alloc&) {
        throw IoError(shown + ": out of memory reading " + std::to_string(known) + " bytes");
    }
    if (progress) progress(0, known);
    std::size_t used = 0;
    std::uint8_t probe[4096];
    for (;;) {
        // A full buffer is probed with a small read first: growing it just to
        // see the end of a regular file would copy it (2.5x its size at peak).
        const bool full = used == buf.size();
        const std::size_t want = full ? sizeof probe : std::min(kChunk, buf.size() - used);
        const ssize_t r = ::read(fd, full ? probe : buf.data() + used, want);
        if (r < 0) {
            if (errno == EINTR) continue;
            fail(shown, errno);
        }
        if (r == 0) break;
        if (full) {
            try {
                buf.resize(buf.size() + std::max(kChunk, buf.size() / 2));
            } catch (const std::bad_alloc&) {
                throw IoError(shown + ": out of memory reading input");
            }
            std::memcpy(buf.data() + used, probe, static_cast<std::size_t>(r));
        }
        used += static_cast<std::size_t>(r);
        if (progress) progress(used, known);
    }
    // Fewer bytes than the file had at open: it was truncated (or rewritten)
    // meanwhile, and what we hold is not the file. A file that grows is read
    // to its new end.
    if (used < known)
        throw IoError(shown + ": the file shrank from " + std::to_string(known) + " to " + std::to_string(used) +
                      " bytes while it was being read");
    buf.resize(used);
    buf.shrink_to_fit();
    return buf;
}

void write_output(const std::string& path, const void* data, std::size_t size,
                  const IoProgress& progress) {
    const std::string shown = display_output(path);
    if (path == "-") {
        write_direct(STDOUT_FILENO, shown, data, size, progress);
        return;
    }

    // Resolve a symlink so that the link stays and its target is replaced.
    // A dangling link is replaced like a missing file.
    std::string target = path;
    struct stat st;
    bool exists = ::lstat(path.c_str(), &st) == 0;
    if (!exists && errno != ENOENT) fail(shown, errno);
    if (exists && S_ISLNK(st.st_mode)) {
        char resolved[PATH_MAX];
        if (::realpath(path.c_str(), resolved)) {
            target = resolved;
            exists = ::stat(target.c_str(), &st) == 0;
        } else if (errno == ENOENT) {
            exists = false;
        } else {
            fail(shown, errno);
        }
    }
    if (exists && S_ISDIR(st.st_mode)) fail(shown, EISDIR);
    if (exists && !S_ISREG(st.st_mode)) {
        // /dev/null, a FIFO, a terminal...: write in place, never rename over it.
        const int fd = ::open(target.c_str(), O_WRONLY | O_CLOEXEC);
        if (fd < 0) fail(shown, errno);
        try {
            write_direct(fd, shown, data, size, progress);
        } catch (...) {
            ::close(fd);
            throw;
        }
        if (::close(fd) != 0) fail(shown, errno);
        return;
    }

    std::string tmpl = target + ".tmp.XXXXXX";
    if (tmpl.size() >= sizeof(g_temp_path)) fail(shown, ENAMETOOLONG);
    std::memcpy(g_temp_path, tmpl.c_str(), tmpl.size() + 1);
    // Block the cleanup signals while the temp name is being created and registered.
    sigset_t block, old;
    sigemptyset(&block);
    sigaddset(&block, SIGINT);
    sigaddset(&block, SIGTERM);
    sigaddset(&block, SIGHUP);
    sigprocmask(SIG_BLOCK, &block, &old);
    const int fd = ::mkstemp(g_temp_path);
    const int mk_err = errno;
    if (fd >= 0) g_temp_active = 1;
    sigprocmask(SIG_SETMASK, &old, nullptr);
    if (fd < 0) fail(shown, mk_err);
    const std::string tmp = g_temp_path;

    auto abandon = [&](int err) {
        ::close(fd);
        ::unlink(tmp.c_str());
        g_temp_active = 0;
        fail(shown, err);
    };
    if (::fchmod(fd, creation_mode()) != 0) abandon(errno);
    if (int err = write_all(fd, static_cast<const std::uint8_t*>(data), size, 0, size, progress))
        abandon(err);
    if (::fsync(fd) != 0 && errno != EINVAL && errno != EROFS) abandon(errno);
    if (::close(fd) != 0) {
        const int err = errno;
        ::unlink(tmp.c_str());
        g_temp_active = 0;
        fail(shown, err);
    }
    if (::rename(tmp.c_str(), target.c_str()) != 0) {
        const int err = errno;
        ::unlink(tmp.c_str());
        g_temp_active = 0;
        fail(shown, err);
    }
    g_temp_active = 0;
}

void install_cleanup_handlers() {
    for (int sig : {SIGINT, SIGTERM, SIGHUP}) {
        struct sigaction sa;
        std::memset(&sa, 0, sizeof sa);
        sa.sa_handler = cleanup_and_reraise;
        sigemptyset(&sa.sa_mask);
        ::sigaction(sig, &sa, nullptr);
    }
}

}  // namespace mans_cli
