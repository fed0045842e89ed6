// compare_peers.cpp - mans against zstd and htscodecs rANS, measured in the same
// run on the same files.
//
// For every FILE:DTYPE and every codec: compressed size, ratio (raw/compressed),
// compress and decompress speed in MB/s of RAW data (1 MB = 1e6 bytes), best of
// N repetitions, and a byte-exact check of every round trip. Output is one
// Markdown table per file plus a summary, or one TSV row per (file, codec).
//
//   mans-compare-peers [--reps N] [--threads T] [--format md|tsv] FILE:DTYPE...

extern "C" {
#include <htscodecs/htscodecs.h>  // no extern "C" guard of its own
}
#include <htscodecs/rANS_static4x16.h>
#include <zstd.h>
#ifdef MANS_PEERS_HAVE_OPENMP
#include <omp.h>
#endif

#include <algorithm>
#include <chrono>
#include <climits>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <functional>
#include <memory>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "mans/mans.hpp"

namespace {

using Clock = std::chrono::steady_clock;

constexpr double kMinSecondsPerMeasurement = 0.2;  // auto reps: run at least this long
constexpr int kMinAutoReps = 3;
constexpr long kMaxAutoReps = 1000000;
// rans_compress_to_4x16 rejects in_size > INT_MAX (it takes unsigned int sizes).
constexpr std::size_t kRansMaxInput = static_cast<std::size_t>(INT_MAX);
const char* const kRansReference = "rans4x16 o0 x32";  // speed reference in the summary

// A codec failure or a round-trip mismatch: fatal, reported by main().
struct BenchError : std::runtime_error {
    using std::runtime_error::runtime_error;
};

// ---------------------------------------------------------------------------
// Codec table

// Compresses raw_bytes of src (elements of elem bytes) into dst; returns the size.
using CompressFn = std::function<std::size_t(const std::uint8_t* src, std::size_t raw_bytes,
                                             std::size_t elem, std::uint8_t* dst,
                                             std::size_t dst_cap)>;
// Decompresses src into exactly raw_bytes of dst, or throws.
using DecompressFn = std::function<void(const std::uint8_t* src, std::size_t src_bytes,
                                        std::uint8_t* dst, std::size_t raw_bytes,
                                        std::size_t elem)>;
using BoundFn = std::function<std::size_t(std::size_t raw_bytes)>;

struct Codec {
    std::string name;
    int threads = 1;
    bool ours = false;
    std::size_t max_input = SIZE_MAX;  // larger inputs are skipped with a note
    std::string unavailable;           // non-empty: skipped with this note
    BoundFn bound;
    CompressFn compress;
    DecompressFn decompress;
};

std::string display_name(const Codec& c) {
    return c.threads > 1 ? c.name + " (" + std::to_string(c.threads) + " threads)" : c.name;
}

void expect_raw_size(const std::string& who, std::size_t got, std::size_t want) {
    if (got != want)
        throw BenchError(who + ": decompressed " + std::to_string(got) + " bytes, expected " +
                         std::to_string(want));
}

// --- mans (ours)

std::size_t mans_size_or_throw(const mans::Result& r, const char* what) {
    if (!r) throw BenchError(std::string("mans ") + what + ": " + mans::errc_name(r.code));
    return r.size;
}

Codec mans_codec(mans::DType dtype, int threads) {
    Codec c;
    c.name = "mans";
    c.threads = threads;
    c.ours = true;
    c.bound = [](std::size_t n) { return mans::compress_bound(n); };
    c.compress = [dtype, threads](const std::uint8_t* src, std::size_t n, std::size_t,
                                  std::uint8_t* dst, std::size_t cap) {
        mans::CompressConfig cfg;
        cfg.dtype = dtype;
        cfg.threads = threads;
        return mans_size_or_throw(mans::compress(dst, cap, src, n, cfg), "compress");
    };
    c.decompress = [threads](const std::uint8_t* src, std::size_t n, std::uint8_t* dst,
                             std::size_t raw, std::size_t) {
        mans::DecompressConfig cfg;
        cfg.threads = threads;
        expect_raw_size("mans", mans_size_or_throw(mans::decompress(dst, raw, src, n, cfg), "decompress"), raw);
    };
    return c;
}

// --- zstd (one persistent context per codec row, like `zstd -b`)

std::size_t zstd_or_throw(std::size_t r, const char* what) {
    if (ZSTD_isError(r)) throw BenchError(std::string("zstd ") + what + ": " + ZSTD_getErrorName(r));
    return r;
}

Codec zstd_codec(int level, int threads) {
    Codec c;
    c.name = "zstd -" + std::to_string(level);
    c.threads = threads;
    std::shared_ptr<ZSTD_CCtx> cctx(ZSTD_createCCtx(), ZSTD_freeCCtx);
    std::shared_ptr<ZSTD_DCtx> dctx(ZSTD_createDCtx(), ZSTD_freeDCtx);
    if (!cctx || !dctx) throw BenchError("zstd: cannot create contexts");
    zstd_or_throw(ZSTD_CCtx_setParameter(cctx.get(), ZSTD_c_compressionLevel, level), "level");
    // nbWorkers = 0: blocking single-thread mode (same output as ZSTD_compress).
    const std::size_t mt = ZSTD_CCtx_setParameter(cctx.get(), ZSTD_c_nbWorkers, threads > 1 ? threads : 0);
    if (ZSTD_isError(mt)) c.unavailable = std::string("libzstd without multithreading: ") + ZSTD_getErrorName(mt);
    c.bound = [](std::size_t n) { return ZSTD_compressBound(n); };
    c.compress = [cctx](const std::uint8_t* src, std::size_t n, std::size_t, std::uint8_t* dst,
                        std::size_t cap) {
        return zstd_or_throw(ZSTD_compress2(cctx.get(), dst, cap, src, n), "compress");
    };
    c.decompress = [c_name = c.name, dctx](const std::uint8_t* src, std::size_t n, std::uint8_t* dst,
                                           std::size_t raw, std::size_t) {
        expect_raw_size(c_name, zstd_or_throw(ZSTD_decompressDCtx(dctx.get(), dst, raw, src, n), "decompress"), raw);
    };
    return c;
}

// --- byte shuffle: all byte 0 of each element, then all byte 1, ...; any tail
// bytes (raw size not a multiple of elem) are kept at the end unchanged.

template <std::size_t E, bool Inverse>
void transpose_fixed(const std::uint8_t* in, std::uint8_t* out, std::size_t count) {
    for (std::size_t i = 0; i < count; ++i)
        for (std::size_t b = 0; b < E; ++b) {
            if (Inverse)
                out[i * E + b] = in[b * count + i];
            else
                out[b * count + i] = in[i * E + b];
        }
}

template <bool Inverse>
void byte_transpose(const std::uint8_t* in, std::uint8_t* out, std::size_t n, std::size_t elem) {
    const std::size_t count = elem ? n / elem : 0;
    const std::size_t body = count * elem;
    switch (elem) {
        case 2: transpose_fixed<2, Inverse>(in, out, count); break;
        case 4: transpose_fixed<4, Inverse>(in, out, count); break;
        case 8: transpose_fixed<8, Inverse>(in, out, count); break;
        default: std::memcpy(out, in, body); break;  // 1-byte elements: identity
    }
    std::memcpy(out + body, in + body, n - body);
}

// Wraps a codec: shuffle before compressing, unshuffle after decompressing.
// The (un)shuffle runs inside the timed call.
Codec with_byteshuffle(Codec inner) {
    Codec c = inner;
    c.name += " + byteshuffle";
    auto scratch = std::make_shared<std::vector<std::uint8_t>>();
    c.compress = [f = inner.compress, scratch](const std::uint8_t* src, std::size_t n, std::size_t elem,
                                               std::uint8_t* dst, std::size_t cap) {
        scratch->resize(n);
        byte_transpose<false>(src, scratch->data(), n, elem);
        return f(scratch->data(), n, elem, dst, cap);
    };
    c.decompress = [f = inner.decompress, scratch](const std::uint8_t* src, std::size_t n,
                                                   std::uint8_t* dst, std::size_t raw, std::size_t elem) {
        scratch->resize(raw);
        f(src, n, scratch->data(), raw, elem);
        byte_transpose<true>(scratch->data(), dst, raw, elem);
    };
    return c;
}

// --- htscodecs rANS 4x16. `order` is the full order word: bits 0-1 the model
// order, RANS_ORDER_* flags above, and for RANS_ORDER_STRIPE the stripe count
// in bits 8-15. Caller-owned buffers (the _to_ variants) so no malloc is timed.

Codec rans_codec(const std::string& name, int order) {
    Codec c;
    c.name = name;
    c.max_input = kRansMaxInput;
    c.bound = [order](std::size_t n) {
        return static_cast<std::size_t>(rans_compress_bound_4x16(static_cast<unsigned>(n), order));
    };
    c.compress = [name, order](const std::uint8_t* src, std::size_t n, std::size_t, std::uint8_t* dst,
                               std::size_t cap) {
        unsigned out_size = static_cast<unsigned>(std::min<std::size_t>(cap, UINT_MAX));
        if (!rans_compress_to_4x16(const_cast<std::uint8_t*>(src), static_cast<unsigned>(n), dst,
                                   &out_size, order))
            throw BenchError(name + ": rans_compress_to_4x16 failed");
        return static_cast<std::size_t>(out_size);
    };
    c.decompress = [name](const std::uint8_t* src, std::size_t n, std::uint8_t* dst, std::size_t raw,
                          std::size_t) {
        unsigned out_size = static_cast<unsigned>(raw);
        if (!rans_uncompress_to_4x16(const_cast<std::uint8_t*>(src), static_cast<unsigned>(n), dst, &out_size))
            throw BenchError(name + ": rans_uncompress_to_4x16 failed");
        expect_raw_size(name, out_size, raw);
    };
    return c;
}

// All rows for one file, ours first. `threads` > 1 adds the all-thread rows.
std::vector<Codec> make_codecs(mans::DType dtype, std::size_t elem, int threads) {
    const int stripe = RANS_ORDER_STRIPE | static_cast<int>(elem << 8);  // N = element size
    std::vector<Codec> v;
    v.push_back(mans_codec(dtype, 1));
    if (threads > 1) v.push_back(mans_codec(dtype, threads));
    for (int level : {1, 3, 19}) v.push_back(zstd_codec(level, 1));
    for (int level : {3, 19}) v.push_back(with_byteshuffle(zstd_codec(level, 1)));
    if (threads > 1) v.push_back(zstd_codec(3, threads));
    v.push_back(rans_codec("rans4x16 o0", 0));
    v.push_back(rans_codec("rans4x16 o1", 1));
    v.push_back(rans_codec("rans4x16 o0 x32", 0 | RANS_ORDER_X32));
    v.push_back(rans_codec("rans4x16 o1 x32", 1 | RANS_ORDER_X32));
    v.push_back(rans_codec("rans4x16 o0 stripe", 0 | stripe));
    v.push_back(rans_codec("rans4x16 o1 stripe", 1 | stripe));
    return v;
}

// ---------------------------------------------------------------------------
// Measurement

struct Options {
    int reps = 0;  // 0 = automatic
    int threads = 1;
    bool tsv = false;
    std::vector<std::string> specs;
};

struct FileData {
    std::string path, label, dtype_text;
    mans::DType dtype = mans::DType::u8;
    std::size_t elem = 1;
    std::vector<std::uint8_t> bytes;
};

struct Row {
    std::string codec;  // display name
    int threads = 1;
    bool ours = false;
    bool skipped = false;
    std::string note;
    std::size_t compressed = 0;
    double c_seconds = 0, d_seconds = 0;
    double ratio(std::size_t raw) const { return compressed ? double(raw) / double(compressed) : 0.0; }
};

double seconds_since(Clock::time_point t0) {
    return std::chrono::duration<double>(Clock::now() - t0).count();
}

// Best time of `reps` calls of run_once (each returns its own timed seconds);
// reps == 0: enough calls to spend kMinSecondsPerMeasurement, at least kMinAutoReps.
double best_of(int reps, const std::function<double()>& run_once) {
    double best = run_once();
    long n = reps;
    if (n <= 0) {
        const double want = std::ceil(kMinSecondsPerMeasurement / std::max(best, 1e-9));
        n = std::clamp<long>(static_cast<long>(std::min(want, double(kMaxAutoReps))), kMinAutoReps, kMaxAutoReps);
    }
    for (long i = 1; i < n; ++i) best = std::min(best, run_once());
    return best;
}

Row measure(const Codec& c, const FileData& f, int reps) {
    Row row;
    row.codec = display_name(c);
    row.threads = c.threads;
    row.ours = c.ours;
    const std::size_t raw = f.bytes.size();
    if (!c.unavailable.empty() || raw > c.max_input) {
        row.skipped = true;
        row.note = !c.unavailable.empty() ? c.unavailable
                                          : "input larger than " + std::to_string(c.max_input) + " bytes";
        return row;
    }
    std::vector<std::uint8_t> packed(c.bound(raw));
    std::vector<std::uint8_t> back(raw);

    row.c_seconds = best_of(reps, [&] {
        const auto t0 = Clock::now();
        const std::size_t n = c.compress(f.bytes.data(), raw, f.elem, packed.data(), packed.size());
        const double s = seconds_since(t0);
        if (row.compressed && n != row.compressed)
            throw BenchError(row.codec + ": compressed size changed between repetitions");
        row.compressed = n;
        return s;
    });
    row.d_seconds = best_of(reps, [&] {
        std::fill(back.begin(), back.end(), std::uint8_t{0xA5});
        const auto t0 = Clock::now();
        c.decompress(packed.data(), row.compressed, back.data(), raw, f.elem);
        const double s = seconds_since(t0);
        const auto diff = std::mismatch(back.begin(), back.end(), f.bytes.begin());
        if (diff.first != back.end())
            throw BenchError("round trip mismatch: " + row.codec + " on " + f.label + " at byte " +
                             std::to_string(diff.first - back.begin()));
        return s;
    });
    return row;
}

// ---------------------------------------------------------------------------
// Input and output

[[noreturn]] void usage(int code) {
    std::fprintf(code ? stderr : stdout,
                 "usage: mans-compare-peers [--reps N] [--threads T] [--format md|tsv] FILE:DTYPE...\n"
                 "  DTYPE: u8 u16 u32 u64 i16 i32 i64\n"
                 "  --reps N     best of N repetitions (default: >= %.1f s and >= %d reps)\n"
                 "  --threads T  threads of the all-thread rows (default: omp_get_max_threads())\n"
                 "  --format     md (default) or tsv\n",
                 kMinSecondsPerMeasurement, kMinAutoReps);
    std::exit(code);
}

int positive_int(const char* text, const char* what) {
    char* end = nullptr;
    const long v = std::strtol(text, &end, 10);
    if (!end || *end || v < 1 || v > INT_MAX) {
        std::fprintf(stderr, "error: %s must be a positive integer, got '%s'\n", what, text);
        usage(2);
    }
    return static_cast<int>(v);
}

int default_threads() {
#ifdef MANS_PEERS_HAVE_OPENMP
    return std::max(1, omp_get_max_threads());
#else
    return std::max(1u, std::thread::hardware_concurrency());
#endif
}

Options parse_args(int argc, char** argv) {
    Options o;
    o.threads = default_threads();
    for (int i = 1; i < argc; ++i) {
        const std::string a = argv[i];
        const bool has_value = i + 1 < argc;
        if (a == "-h" || a == "--help") usage(0);
        else if (a == "--reps" && has_value) o.reps = positive_int(argv[++i], "--reps");
        else if (a == "--threads" && has_value) o.threads = positive_int(argv[++i], "--threads");
        else if (a == "--format" && has_value) {
            const std::string fmt = argv[++i];
            if (fmt != "md" && fmt != "tsv") {
                std::fprintf(stderr, "error: --format must be md or tsv, got '%s'\n", fmt.c_str());
                usage(2);
            }
            o.tsv = fmt == "tsv";
        } else if (a.rfind("--", 0) == 0) {
            std::fprintf(stderr, "error: unknown or incomplete option '%s'\n", a.c_str());
            usage(2);
        } else o.specs.push_back(a);
    }
    if (o.specs.empty()) usage(2);
    return o;
}

FileData load(const std::string& spec) {
    FileData f;
    const std::size_t colon = spec.rfind(':');
    if (colon == std::string::npos || colon == 0)
        throw BenchError("expected FILE:DTYPE, got '" + spec + "'");
    f.path = spec.substr(0, colon);
    f.dtype_text = spec.substr(colon + 1);
    if (!mans::parse_dtype(f.dtype_text.c_str(), &f.dtype))
        throw BenchError("unknown dtype '" + f.dtype_text + "' in '" + spec + "'");
    f.elem = mans::dtype_size(f.dtype);
    const std::size_t slash = f.path.find_last_of('/');
    f.label = slash == std::string::npos ? f.path : f.path.substr(slash + 1);

    std::ifstream in(f.path, std::ios::binary | std::ios::ate);
    if (!in) throw BenchError("cannot open '" + f.path + "'");
    const std::streamoff size = in.tellg();
    in.seekg(0);
    f.bytes.resize(static_cast<std::size_t>(size));
    if (size > 0 && !in.read(reinterpret_cast<char*>(f.bytes.data()), size))
        throw BenchError("cannot read '" + f.path + "'");
    if (f.bytes.empty()) throw BenchError("'" + f.path + "' is empty");
    if (f.elem == 0 || f.bytes.size() % f.elem != 0)
        throw BenchError("'" + f.path + "': size " + std::to_string(f.bytes.size()) +
                         " is not a multiple of the " + f.dtype_text + " element size");
    return f;
}

double mbps(std::size_t raw, double seconds) { return seconds > 0 ? double(raw) / seconds / 1e6 : 0.0; }

void print_md_header(const Options& o) {
    const std::string reps = o.reps > 0 ? std::to_string(o.reps) + " repetitions"
                                        : "auto (>= 0.2 s and >= 3) repetitions";
    std::printf("# mans vs. peers\n\n"
                "mans %s, zstd %s, htscodecs %s; all-thread rows use %d threads. "
                "Ratio = raw/compressed; MB/s = 1e6 raw bytes per second, best of %s; "
                "every round trip verified byte-exact. x32 = htscodecs 32-way rANS (SIMD kernel "
                "picked at run time); stripe = one rANS stream per byte of the element; "
                "zstd decompression is single-threaded in every row.\n\n",
                mans_version_string(), ZSTD_versionString(), htscodecs_version(), o.threads,
                reps.c_str());
}

void print_md_file(const FileData& f, const std::vector<Row>& rows) {
    const std::size_t raw = f.bytes.size();
    std::printf("## %s (%s, %zu bytes)\n\n", f.label.c_str(), f.dtype_text.c_str(), raw);
    std::printf("| codec | size | ratio | c MB/s (1T) | d MB/s (1T) |\n|:--|--:|--:|--:|--:|\n");
    for (const Row& r : rows)
        if (!r.skipped)
            std::printf("| %s | %zu | %.3f | %.1f | %.1f |\n", r.codec.c_str(), r.compressed, r.ratio(raw),
                        mbps(raw, r.c_seconds), mbps(raw, r.d_seconds));
    std::printf("\n");
    for (const Row& r : rows)
        if (r.skipped) std::printf("- skipped %s: %s\n", r.codec.c_str(), r.note.c_str());
    std::printf("\n");
}

void print_tsv_rows(const FileData& f, const std::vector<Row>& rows) {
    const std::size_t raw = f.bytes.size();
    for (const Row& r : rows) {
        if (r.skipped) {
            std::fprintf(stderr, "note: %s: skipped %s: %s\n", f.label.c_str(), r.codec.c_str(), r.note.c_str());
            continue;
        }
        std::printf("%s\t%s\t%zu\t%s\t%d\t%zu\t%.4f\t%.2f\t%.2f\n", f.label.c_str(), f.dtype_text.c_str(), raw,
                    r.codec.c_str(), r.threads, r.compressed, r.ratio(raw), mbps(raw, r.c_seconds),
                    mbps(raw, r.d_seconds));
    }
}

// First measured row matching pred, or nullptr.
const Row* find_row(const std::vector<Row>& rows, const std::function<bool(const Row&)>& pred) {
    for (const Row& r : rows)
        if (!r.skipped && pred(r)) return &r;
    return nullptr;
}

void print_md_summary(const std::vector<FileData>& files, const std::vector<std::vector<Row>>& results) {
    std::printf("## Summary\n\n"
                "| file | dtype | mans ratio | best peer | peer ratio | mans >= best | "
                "mans c MB/s (1T) | %s c MB/s | mans d MB/s (1T) | %s d MB/s |\n"
                "|:--|:--|--:|:--|--:|:--:|--:|--:|--:|--:|\n",
                kRansReference, kRansReference);
    const auto cell = [](const Row* r, std::size_t raw, bool compress) {
        return r ? mbps(raw, compress ? r->c_seconds : r->d_seconds) : 0.0;
    };
    for (std::size_t i = 0; i < files.size(); ++i) {
        const std::vector<Row>& rows = results[i];
        const std::size_t raw = files[i].bytes.size();
        const Row* ours = find_row(rows, [](const Row& r) { return r.ours && r.threads == 1; });
        const Row* ref = find_row(rows, [](const Row& r) { return r.codec == kRansReference; });
        const Row* peer = nullptr;
        for (const Row& r : rows)
            if (!r.skipped && !r.ours && (!peer || r.ratio(raw) > peer->ratio(raw))) peer = &r;
        const double our_ratio = ours ? ours->ratio(raw) : 0.0;
        const double peer_ratio = peer ? peer->ratio(raw) : 0.0;
        std::printf("| %s | %s | %.3f | %s | %.3f | %s | %.1f | %.1f | %.1f | %.1f |\n", files[i].label.c_str(),
                    files[i].dtype_text.c_str(), our_ratio, peer ? peer->codec.c_str() : "-", peer_ratio,
                    our_ratio >= peer_ratio ? "yes" : "no", cell(ours, raw, true), cell(ref, raw, true),
                    cell(ours, raw, false), cell(ref, raw, false));
    }
    std::printf("\n");
}

}  // namespace

int main(int argc, char** argv) {
    const Options opt = parse_args(argc, argv);
    try {
        std::vector<FileData> files;
        for (const std::string& spec : opt.specs) files.push_back(load(spec));

        if (opt.tsv)
            std::printf("file\tdtype\traw_bytes\tcodec\tthreads\tcompressed_bytes\tratio\tcompress_MBps\tdecompress_MBps\n");
        else
            print_md_header(opt);
        std::fflush(stdout);

        std::vector<std::vector<Row>> results;
        for (const FileData& f : files) {
            std::vector<Row> rows;
            for (const Codec& c : make_codecs(f.dtype, f.elem, opt.threads)) {
                std::fprintf(stderr, "compare-peers: %s: %s\n", f.label.c_str(), display_name(c).c_str());
                rows.push_back(measure(c, f, opt.reps));
            }
            if (opt.tsv)
                print_tsv_rows(f, rows);
            else
                print_md_file(f, rows);
            std::fflush(stdout);
            results.push_back(std::move(rows));
        }
        if (!opt.tsv) print_md_summary(files, results);
    } catch (const std::exception& e) {
        std::fflush(stdout);
        std::fprintf(stderr, "error: %s\n", e.what());
        return 1;
    }
    return 0;
}
