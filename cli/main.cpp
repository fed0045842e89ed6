// main.cpp - `mans`: command-line front end of the mans library.
//
//   mans compress   -i IN -o OUT -t DTYPE [--dims AxBxC] [--block-size 128K] [--verify] ...
//   mans compress   -i IN -o OUT -t f32 [--dims AxBxC] --error-bound E [--rel] ...   (lossy, PRISM)
//   mans decompress -i IN -o OUT [--error-bound E [--rel] | --psnr DB | --bytes N] [--original F]
//   mans info IN [--json]
//   mans h5-args [--lossless | --error-bound E [--rel]] [--dataset NAME] [--optional]
//   mans --version
//
// SZ-style options (-f/-d, -1..-4 fastest first, -M/-A/-R) are rewritten
// before parsing, see sz_args.hpp.
//
// Exit codes: 0 ok; 1 usage error; 2 I/O, format or unusable-input error (also a
// forced backend that is unavailable here, and a retrieval
// target the archive cannot reach); 3 --verify / --original check failed.
#include <CLI/CLI.hpp>

#include <cstdio>
#include <exception>
#include <new>
#include <string>
#include <vector>

#include "commands.hpp"
#include "file_io.hpp"
#include "h5_args.hpp"
#include "sz_args.hpp"

namespace {

void add_common(CLI::App* sub, mans_cli::CommonOptions& o) {
    sub->add_option("-i,--input", o.input, "Input file, '-' for stdin")->required();
    sub->add_option("-o,--output", o.output, "Output file (written atomically), '-' for stdout")->required();
    sub->add_option("--threads", o.threads, "Worker threads, 0 = all (never changes the output)")
        ->check(CLI::Range(0, 65536));
    sub->add_option("--backend", o.backend, "auto, cpu, cuda or hip (GPU modules are loaded at run time; "
                                       "a forced one that is unavailable fails with the reason)");
    sub->add_flag("--scalar", o.scalar, "Disable SIMD kernels (output is identical)");
    sub->add_flag("--stats", o.stats, "Print a one-line summary on stderr");
    sub->add_flag("--json", o.json, "Print a JSON summary on stdout (stderr when -o -)");
}

const char* kCompressFooter =
    "Lossless (MANS): integer dtypes u8 u16 u32 u64 i16 i32 i64.\n"
    "Lossy (PRISM, progressive): -t f32|f64 (float32, float64, float, double) with an\n"
    "error bound; the archive can later be read at any coarser precision.\n"
    "\n"
    "Dimensions: --dims lists them SLOWEST to FASTEST (C order, as in file names such\n"
    "as echam5_t_17x96x192.f32). Without --dims the input is one-dimensional.\n"
    "\n"
    "SZ-style options (for existing SZ/SZ3 scripts):\n"
    "  -f | -d                 same as -t f32 | -t f64\n"
    "  -1 nx | -2 nx ny | -3 nx ny nz | -4 nx ny nz nw\n"
    "                          dimensions FASTEST FIRST (SZ order):\n"
    "                          -3 192 96 17 equals --dims 17x96x192\n"
    "  -M ABS -A E             same as --error-bound E\n"
    "  -M REL -R E             same as --error-bound E --rel\n"
    "  -A E | -R E             alone: absolute | relative bound\n"
    "\n"
    "Example: mans compress -t f32 --dims 17x96x192 --error-bound 1e-6 --rel -i t.f32 -o t.prism\n"
    "         mans compress -f -3 192 96 17 -M REL -R 1e-6 -i t.f32 -o t.prism   (same archive)";

const char* kDecompressFooter =
    "On a PRISM archive, at most one retrieval target (default: full precision):\n"
    "  --error-bound E [--rel]  max |x - x'| <= E (or E x value range); -M/-A/-R work too\n"
    "  --psnr DB                estimated PSNR of at least DB dB\n"
    "  --bytes N                read at most N bytes of the archive (suffix K, M: binary)\n"
    "Only the needed byte ranges of an input file are read. A bound tighter than the\n"
    "archive's is an error (exit 2). --original FILE measures the actual error and\n"
    "exits 3 when the bound is not met. These options on a lossless MANS stream are\n"
    "a usage error (exit 1).";

int run(int argc, char** argv) {
    CLI::App app{"mans: lossless compression of integer arrays and progressive, error-bounded "
                 "lossy compression of float arrays (PRISM)",
                 "mans"};
    app.set_version_flag("-V,--version", mans_cli::version_text());
    app.require_subcommand(1);
    app.footer(
        "Exit codes: 0 ok, 1 usage error, 2 I/O or format error (also an unreachable retrieval "
        "target), 3 verification failure.");

    mans_cli::CompressOptions co;
    CLI::App* comp =
        app.add_subcommand("compress", "Compress a raw little-endian array (integers: lossless; f32/f64: lossy)");
    add_common(comp, co);
    comp->add_option("-t,--dtype", co.dtype,
                     "Element type: u8 u16 u32 u64 i16 i32 i64 (or uint16, int32, ...) lossless; "
                     "f32 f64 (float32, float64, float, double) lossy, needs --error-bound")
        ->required();
    comp->add_option("--dims", co.dims,
                     "Shape, slowest to fastest (C order), e.g. 17x96x192; SZ-style -3 192 96 17 "
                     "gives the same shape fastest first")
        ->type_name("AxBxC");
    comp->add_option("--block-size", co.block_size, "Raw bytes per block, suffix K or M (binary; lossless only)");
    comp->add_flag("--verify", co.verify,
                   "Decompress in memory and check before writing (lossless: identical bytes; "
                   "lossy: error within the bound)");
    comp->add_option("--error-bound", co.error_bound,
                     "Lossy: max |x - x'| (absolute unless --rel); selects PRISM")
        ->type_name("E");
    comp->add_flag("--rel", co.rel, "Lossy: --error-bound is relative to the value range (max - min)")
        ->needs("--error-bound");
    comp->add_option("--planes", co.planes, "Lossy: bitplane coding, negabinary (default) or sign-magnitude")
        ->type_name("CODING");
    comp->add_option("--fill", co.fills, "Lossy: a fill value kept exactly (repeatable), e.g. --fill -1e10")
        ->allow_extra_args(false)
        ->type_name("V");
    comp->add_flag("--no-detect-fill", co.no_detect_fill,
                   "Lossy: do not detect a huge, frequent fill value (e.g. -1e10, 9.97e36) automatically");
    comp->footer(kCompressFooter);

    mans_cli::DecompressOptions dco;
    CLI::App* decomp = app.add_subcommand("decompress", "Decompress a MANS stream or retrieve from a PRISM archive");
    add_common(decomp, dco);
    CLI::Option* eb = decomp->add_option("--error-bound", dco.error_bound,
                                         "PRISM: retrieve with max |x - x'| <= E (absolute unless --rel)")
                         ->type_name("E");
    decomp->add_flag("--rel", dco.rel, "PRISM: --error-bound is relative to the value range")->needs(eb);
    CLI::Option* psnr = decomp->add_option("--psnr", dco.psnr, "PRISM: retrieve for an estimated PSNR (dB)")
                             ->type_name("DB");
    CLI::Option* bytes = decomp->add_option("--bytes", dco.bytes, "PRISM: read at most N bytes (suffix K, M)")
                              ->type_name("N");
    eb->excludes(psnr)->excludes(bytes);
    psnr->excludes(bytes);
    decomp->add_option("--original", dco.original,
                       "PRISM: raw original file; report max_abs_error, psnr, ... and check the bound (exit 3)")
        ->type_name("FILE");
    decomp->footer(kDecompressFooter);

    mans_cli::InfoOptions io;
    CLI::App* info = app.add_subcommand("info", "Describe a mans stream or PRISM archive");
    info->add_option("input,-i,--input", io.input, "Stream file, '-' for stdin")->required();
    info->add_flag("--json", io.json, "Print one JSON object");

    mans_cli::H5ArgsOptions ho;
    CLI::App* h5 = app.add_subcommand(
        "h5-args", "Print the h5repack -f argument (UD=...) for the mans HDF5 filter (formats/hdf5)");
    CLI::Option* h5_lossless = h5->add_flag("--lossless", ho.lossless, "Lossless for every dataset (the default)");
    CLI::Option* h5_eb = h5->add_option("--error-bound", ho.error_bound,
                                        "Float datasets: PRISM with max |x - x'| <= E (integers stay lossless)")
                             ->type_name("E");
    h5_lossless->excludes(h5_eb);
    h5->add_flag("--rel", ho.rel, "--error-bound is relative to each chunk's value range")->needs(h5_eb);
    h5->add_option("--dataset", ho.dataset, "Only this object: prints NAME:UD=...")->type_name("NAME");
    h5->add_flag("--optional", ho.optional, "Optional filter: HDF5 skips it for datasets it cannot take");
    h5->footer("Example: h5repack -f \"$(mans h5-args --error-bound 1e-3 --rel)\" -l CHUNK=20x90x180 in.h5 out.h5\n"
               "The plugin must be on HDF5_PLUGIN_PATH (see formats/hdf5/README.md).");

    // SZ-style options are rewritten first (they may throw a usage CliError).
    std::vector<std::string> args = mans_cli::translate_sz_args(std::vector<std::string>(argv, argv + argc));
    std::vector<char*> cargs;
    for (std::string& a : args) cargs.push_back(a.data());
    try {
        app.parse(static_cast<int>(cargs.size()), cargs.data());
    } catch (const CLI::ParseError& e) {
        const int rc = app.exit(e);  // prints help/version/message
        return rc == 0 ? mans_cli::kExitOk : mans_cli::kExitUsage;
    }

    mans_cli::install_cleanup_handlers();
    if (*comp) return mans_cli::run_compress(co);
    if (*decomp) return mans_cli::run_decompress(dco);
    if (*info) return mans_cli::run_info(io);
    if (*h5) return mans_cli::run_h5_args(ho);
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
