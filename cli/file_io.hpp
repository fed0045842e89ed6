// file_io.hpp - whole-file input and atomic output for the mans CLI.
//
// "-" means stdin (input) or stdout (output). A regular output file is written
// to OUT.tmp.XXXXXX in the same directory and renamed over OUT only after every
// byte was written and synced, so a failure (or SIGINT/SIGTERM/SIGHUP) never
// leaves a partial OUT behind. Outputs that are not regular files (/dev/null,
// FIFOs, character devices) are written in place.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <stdexcept>
#include <string>
#include <vector>

namespace mans_cli {

// An I/O failure; what() is "<display path>: <reason>".
class IoError : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

// done, total (total = 0 when unknown, e.g. a pipe).
using IoProgress = std::function<void(std::uint64_t done, std::uint64_t total)>;

// "<stdin>" / "<stdout>" for "-", the path itself otherwise.
std::string display_input(const std::string& path);
std::string display_output(const std::string& path);

// Size of a regular input file, 0 when unknown (stdin, pipes) or on error.
std::uint64_t input_size_hint(const std::string& path);

// True when path (not "-") names a regular file, or a link to one: an input
// that can be read twice or in ranges (a FIFO or a device cannot).
bool is_regular_file(const std::string& path);

// Reads the whole input. A regular file that ends before the size it had when
// it was opened (cut short by another process while being read) is an error.
// Throws IoError.
std::vector<std::uint8_t> read_input(const std::string& path, const IoProgress& progress = {});

// Writes data to path atomically (see above). Throws IoError.
void write_output(const std::string& path, const void* data, std::size_t size,
                  const IoProgress& progress = {});

// Installs SIGINT/SIGTERM/SIGHUP handlers that remove a pending temp file.
void install_cleanup_handlers();

}  // namespace mans_cli
