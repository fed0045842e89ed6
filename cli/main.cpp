// main.cpp - `mans`: command-line front end of the mans library.
//
//   mans compress   -i IN -o OUT -t DTYPE [--dims AxBxC] [--block-size 128K] [--verify] ...
//   mans decompress -i IN -o OUT [...]
//   mans info IN [--json]
//   mans --version
//
// Exit codes: 0 ok; 1 usage error; 2 I/O, format or unusable-input error (also a
// backend that exists in the project but not in this build); 3 --verify mismatch.
#include <CLI/CLI.hpp>

#include <cstdio>
#include <exception>
#include <new>

#include "commands.hpp"
#include "file_io.hpp"

namespace {

void add_common(CLI::App* sub, mans_cli::CommonOptions& o) {
    sub->add_option("-i,--input", o.input, "Input file, '-' for stdin")->required();
    sub->add_option("-o,--output", o.output, "Output file (written atomically), '-' for stdout")->required();
    sub->add_option("--threads", o.threads, "Worker threads, 0 = all (never changes the output)")
        ->check(CLI::Range(0, 65536));
    sub->add_option("--backend", o.backend, "auto or cpu (cuda, hip: not in this build)");
    sub->add_flag("--scalar", o.scalar, "Disable SIMD kernels (output is identical)");
    sub->add_flag("--stats", o.stats, "Print a one-line summary on stderr");
    sub->add_flag("--json", o.json, "Print a JSON summary on stdout (stderr when -o -)");
}

int run(int argc, char** argv) {
    CLI::App app{"mans: lossless compression of integer arrays", "mans"};
    app.set_version_flag("-V,--version", mans_cli::version_text());
    app.require_subcommand(1);
    app.footer(
        "Exit codes: 0 ok, 1 usage error, 2 I/O or format error, 3 verification failure.");

    mans_cli::CompressOptions co;
    CLI::App* comp = app.add_subcommand("compress", "Compress a raw little-endian integer array");
    add_common(comp, co);
    comp->add_option("-t,--dtype", co.dtype,
                     "Element type: u8 u16 u32 u64 i16 i32 i64 (or uint16, int32, ...)")
        ->required();
    comp->add_option("--dims", co.dims, "Shape to record, slowest to fastest, e.g. 17x96x192");
    comp->add_option("--block-size", co.block_size, "Raw bytes per block, suffix K or M (binary)");
    comp->add_flag("--verify", co.verify, "Decompress in memory and compare before writing");

    mans_cli::CommonOptions dco;
    CLI::App* decomp = app.add_subcommand("decompress", "Decompress a mans stream");
    add_common(decomp, dco);

    mans_cli::InfoOptions io;
    CLI::App* info = app.add_subcommand("info", "Describe a mans stream");
    info->add_option("input,-i,--input", io.input, "Stream file, '-' for stdin")->required();
    info->add_flag("--json", io.json, "Print one JSON object");

    try {
        app.parse(argc, argv);
    } catch (const CLI::ParseError& e) {
        const int rc = app.exit(e);  // prints help/version/message
        return rc == 0 ? mans_cli::kExitOk : mans_cli::kExitUsage;
    }

    mans_cli::install_cleanup_handlers();
    if (*comp) return mans_cli::run_compress(co);
    if (*decomp) return mans_cli::run_decompress(dco);
    if (*info) return mans_cli::run_info(io);
    return mans_cli::kExitUsage;
}

}  // namespace

int main(int argc, char** argv) {
    try {
        return run(argc, argv);
    } catch (const mans_cli::CliError& e) {
        std::fprintf(stderr, "mans: error: %s\n", e.what());
        return e.code();
    } catch (const std::bad_alloc&) {
        std::fprintf(stderr, "mans: error: out of memory\n");
        return mans_cli::kExitIo;
    } catch (const std::exception& e) {
        std::fprintf(stderr, "mans: error: %s\n", e.what());
        return mans_cli::kExitIo;
    } catch (...) {
        std::fprintf(stderr, "mans: error: unexpected failure\n");
        return mans_cli::kExitIo;
    }
}
