// commands.hpp - the mans subcommands, independent of the argument parser.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>

namespace mans_cli {

// Exit codes of the mans tool.
enum ExitCode : int {
    kExitOk = 0,
    kExitUsage = 1,   // bad arguments (parse errors, unknown dtype/backend, bad --dims)
    kExitIo = 2,      // I/O or format error, unusable input, backend unavailable
    kExitVerify = 3,  // --verify found a mismatch
};

// A failure that ends the command: message (without the "mans: error: " prefix)
// and exit code.
class CliError : public std::runtime_error {
public:
    CliError(int code, const std::string& msg) : std::runtime_error(msg), code_(code) {}
    int code() const { return code_; }

private:
    int code_;
};

struct CommonOptions {
    std::string input;
    std::string output;
    int threads = 0;
    std::string backend = "auto";
    bool scalar = false;
    bool stats = false;
    bool json = false;
};

struct CompressOptions : CommonOptions {
    std::string dtype;
    std::string dims;        // "17x96x192", empty = none
    std::string block_size;  // "131072", "128K", "1M", empty = library default
    bool verify = false;
};

struct InfoOptions {
    std::string input;
    bool json = false;
};

int run_compress(const CompressOptions& o);
int run_decompress(const CommonOptions& o);
int run_info(const InfoOptions& o);

// "mans 0.1.0 (stream format 1)"
std::string version_text();

// Parsers, exposed for reuse; they throw CliError(kExitUsage, ...).
std::uint64_t parse_byte_size(const std::string& text);
unsigned parse_dims(const std::string& text, std::uint64_t dims[4]);

}  // namespace mans_cli
