// commands.hpp - the mans subcommands, independent of the argument parser.
// Lossless MANS streams are handled in commands.cpp, lossy PRISM archives in
// prism_commands.cpp (run_compress/run_decompress/run_info dispatch there).
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

namespace mans_cli {

// Exit codes of the mans tool.
enum ExitCode : int {
    kExitOk = 0,
    kExitUsage = 1,   // bad arguments (parse errors, unknown dtype/backend, bad --dims,
                      // f32 without a bound, a bound with an integer dtype, lossy
                      // retrieval options on a lossless MANS stream)
    kExitIo = 2,      // I/O or format error, unusable input, backend unavailable,
                      // retrieval target the archive cannot reach (TARGET_UNREACHABLE)
    kExitVerify = 3,  // --verify found a mismatch; decompress --original: bound not met
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
    // Lossy (PRISM) settings; error_bound non-empty selects PRISM.
    std::string error_bound;        // absolute, or relative to the value range with `rel`
    bool rel = false;
    std::string planes;             // "negabinary" (default) | "sign-magnitude"
    std::vector<std::string> fills; // --fill, repeatable
    bool no_detect_fill = false;
};

struct DecompressOptions : CommonOptions {
    // Retrieval target of a PRISM archive (at most one; none = full retrieval).
    std::string error_bound;  // absolute, or relative with `rel`
    bool rel = false;
    std::string psnr;         // dB
    std::string bytes;        // read budget, "65536", "64K", "1M"
    std::string original;     // compare the result with this raw file
    bool lossy_requested() const {
        return !error_bound.empty() || rel || !psnr.empty() || !bytes.empty() || !original.empty();
    }
};

struct InfoOptions {
    std::string input;
    bool json = false;
};

int run_compress(const CompressOptions& o);
int run_decompress(const DecompressOptions& o);
int run_info(const InfoOptions& o);

// "mans 0.1.0 (stream format 1)"
std::string version_text();

// Parsers, exposed for reuse; they throw CliError(kExitUsage, ...).
// `option` names the option in messages.
std::uint64_t parse_byte_size(const std::string& text, const char* option = "--block-size");
unsigned parse_dims(const std::string& text, std::uint64_t dims[4]);
// A whole-string decimal number (strtod syntax; "inf" only when allowed), and
// one that must also be positive (error bounds).
double parse_number(const std::string& text, const std::string& option, bool allow_inf = false);
double parse_bound(const std::string& text, const std::string& option);

}  // namespace mans_cli
