// command_util.hpp - helpers shared by the lossless (commands.cpp) and the
// lossy (prism_commands.cpp) subcommands. Failures are thrown as CliError.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <new>
#include <stdexcept>
#include <string>
#include <vector>

#include "commands.hpp"
#include "mans/mans.hpp"
#include "report.hpp"

namespace mans_cli {

using Clock = std::chrono::steady_clock;

// "<path>: <message> (<MANS_ERR_...>)"
std::string lib_error(const std::string& shown, mans::Errc e);

// "auto" | "cpu" | "cuda" | "hip"; anything else -> CliError(kExitUsage).
mans::Backend parse_backend(const std::string& name);
// parse_backend(), then CliError(kExitIo) with the library's reason when the
// backend cannot run op here (a GPU module missing, no device, no kernel).
mans::Backend require_backend(const std::string& name, mans::Operation op);
// The library's one-line report: backend and kernels, and why GPU backends
// are not used ("cpu (avx2); cuda: libmans_backend_cuda.so not found; ...").
std::string backend_label(const std::string& name, mans::Operation op, bool scalar);
// --threads 0 -> the OpenMP thread count the library will use.
int resolve_threads(int requested);
double seconds_since(Clock::time_point t0);

// Whole-input read and atomic write with the progress indicator; I/O errors
// become CliError(kExitIo).
std::vector<std::uint8_t> read_with_progress(const std::string& path, Progress& p);
// The whole input, which must hold whole elements of esize bytes (else
// CliError(kExitIo) naming the dtype); `shown` is the path as displayed.
std::vector<std::uint8_t> read_elements(const std::string& path, const std::string& shown, std::size_t esize,
                                        const std::string& dtname, Progress& p);
void write_with_progress(const std::string& path, const void* data, std::size_t size, Progress& p);

// Flushes stdout; a failed write (a full disk, a closed pipe) is
// CliError(kExitIo) naming `what` was being written.
void flush_stdout(const char* what);

// True when `path` (a file, not "-") starts like a PRISM archive. Reads the
// first bytes only; false when it cannot be read (the caller reports that)
// or is not a regular file (a FIFO is read whole instead).
bool file_is_prism_archive(const std::string& path);

// Bytes left uninitialized: pages are touched (resident) only once written,
// so a compress_bound-sized output costs memory only for what is used.
struct RawBuffer {
    std::unique_ptr<std::uint8_t[]> bytes;
    std::size_t size = 0;
    std::uint8_t* data() const { return bytes.get(); }
};
inline RawBuffer allocate_raw(std::size_t n, const std::string& what) {
    RawBuffer b;
    b.bytes.reset(new (std::nothrow) std::uint8_t[n ? n : 1]);
    if (!b.bytes) throw CliError(kExitIo, "out of memory allocating " + std::to_string(n) + " bytes for " + what);
    b.size = n;
    return b;
}

template <typename T>
std::vector<T> allocate(std::size_t n, const std::string& what) {
    try {
        return std::vector<T>(n);
    } catch (const std::bad_alloc&) {
        throw CliError(kExitIo, "out of memory allocating " + std::to_string(n) + " bytes for " + what);
    } catch (const std::length_error&) {
        throw CliError(kExitIo, "out of memory allocating " + std::to_string(n) + " bytes for " + what);
    }
}

}  // namespace mans_cli
