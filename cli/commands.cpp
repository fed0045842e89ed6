// commands.cpp - compress, decompress and info on top of the public mans API.
#include "commands.hpp"

#include <fcntl.h>
#include <omp.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <limits>
#include <new>
#include <vector>

#include "command_util.hpp"
#include "file_io.hpp"
#include "mans/mans.hpp"
#include "mans/prism.hpp"
#include "prism_commands.hpp"
#include "report.hpp"

namespace mans_cli {

// ---------------------------------------------------------------- shared helpers

std::string lib_error(const std::string& shown, mans::Errc e) {
    return shown + ": " + mans::errc_message(e) + " (" + mans::errc_name(e) + ")";
}

mans::Backend parse_backend(const std::string& name) {
    std::string n = name;
    std::transform(n.begin(), n.end(), n.begin(), [](unsigned char c) { return std::tolower(c); });
    if (n == "auto") return mans::Backend::automatic;
    if (n == "cpu") return mans::Backend::cpu;
    if (n == "cuda") return mans::Backend::cuda;
    if (n == "hip") return mans::Backend::hip;
    throw CliError(kExitUsage, "unknown backend '" + name + "' (expected auto, cpu, cuda or hip)");
}

mans::Backend require_backend(const std::string& name, mans::Operation op) {
    const mans::Backend b = parse_backend(name);
    if (mans::backend_status(b, op) != mans::Errc::ok)
        throw CliError(kExitIo, "backend '" + name + "' is unavailable: " + mans::backend_report(b, op));
    return b;
}

std::string backend_label(const std::string& name, mans::Operation op, bool scalar) {
    return mans::backend_report(parse_backend(name), op, scalar);
}

int resolve_threads(int requested) { return requested > 0 ? requested : omp_get_max_threads(); }

double seconds_since(Clock::time_point t0) {
    return std::chrono::duration<double>(Clock::now() - t0).count();
}

namespace {

// Progress callback for reading/writing: starts the indicator once the size is
// known and large, and shows the fraction done.
IoProgress io_progress(Progress& p, const char* label, std::uint64_t fallback_total) {
    return [&p, label, fallback_total, started = false](std::uint64_t done, std::uint64_t total) mutable {
        if (!total) total = fallback_total;
        if (!started) {
            started = true;
            p.start(total);
            p.phase(label);
        }
        if (total) p.set_fraction(static_cast<double>(done) / static_cast<double>(total));
    };
}

}  // namespace

std::vector<std::uint8_t> read_with_progress(const std::string& path, Progress& p) {
    try {
        return read_input(path, io_progress(p, "reading", 0));
    } catch (const IoError& e) {
        p.stop();
        throw CliError(kExitIo, e.what());
    }
}

std::vector<std::uint8_t> read_elements(const std::string& path, const std::string& shown, std::size_t esize,
                                        const std::string& dtname, Progress& p) {
    std::vector<std::uint8_t> src = read_with_progress(path, p);
    if (src.size() % esize)
        throw CliError(kExitIo, shown + ": input size " + std::to_string(src.size()) +
                                    " bytes is not a multiple of the " + dtname + " element size (" +
                                    std::to_string(esize) + " bytes)");
    return src;
}

void write_with_progress(const std::string& path, const void* data, std::size_t size, Progress& p) {
    try {
        p.phase("writing");
        write_output(path, data, size, io_progress(p, "writing", size));
    } catch (const IoError& e) {
        p.stop();
        throw CliError(kExitIo, e.what());
    }
}

void flush_stdout(const char* what) {
    errno = 0;
    if (std::fflush(stdout) != 0 || std::ferror(stdout))
        throw CliError(kExitIo, std::string("<stdout>: ") + (errno ? std::strerror(errno) : "write error") +
                                    " (writing " + what + ")");
}

bool file_is_prism_archive(const std::string& path) {
    // Peeking at a FIFO or a device would consume the bytes: those are read
    // whole and dispatched in memory.
    if (!is_regular_file(path)) return false;
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) return false;
    std::uint8_t head[16];
    std::size_t got = 0;
    while (got < sizeof head) {
        const ssize_t r = ::read(fd, head + got, sizeof head - got);
        if (r < 0 && errno == EINTR) continue;
        if (r <= 0) break;
        got += static_cast<std::size_t>(r);
    }
    ::close(fd);
    return mans::prism::is_archive(head, got);
}

namespace {

// The fields every compress/decompress report shares (verification is set
// by the caller).
void fill_run_stats(RunStats* s, const char* command, const CommonOptions& o, const std::string& input,
                    const std::string& dtype, std::uint64_t elements, std::uint64_t raw_bytes,
                    std::uint64_t compressed_bytes, double seconds) {
    s->command = command;
    s->input = input;
    s->output = display_output(o.output);
    s->dtype = dtype;
    s->elements = elements;
    s->raw_bytes = raw_bytes;
    s->compressed_bytes = compressed_bytes;
    s->seconds = seconds;
    s->threads = resolve_threads(o.threads);
    // Only when shown: the line for --backend auto opens the GPU modules.
    if (!o.stats && !o.json) return;
    const bool compressing = std::strcmp(command, "compress") == 0;
    s->backend = backend_label(o.backend, compressing ? mans::Operation::compress : mans::Operation::decompress,
                               o.scalar);
}

void emit(const RunStats& s, const CommonOptions& o) {
    if (o.stats) std::fprintf(stderr, "%s\n", stats_line(s).c_str());
    if (o.json) {
        // Keep stdout clean for the data when the data goes there.
        FILE* sink = o.output == "-" ? stderr : stdout;
        std::fprintf(sink, "%s\n", stats_json(s).c_str());
        if (sink == stdout) flush_stdout("the report");
        else std::fflush(sink);
    }
}

}  // namespace

std::uint64_t parse_byte_size(const std::string& text, const char* option) {
    const std::string bad = std::string("invalid ") + option + " '" + text +
                            "': expected a byte count with an optional suffix K or M "
                            "(binary: 1K = 1024), e.g. 131072, 128K, 1M";
    std::size_t i = 0;
    std::uint64_t v = 0;
    while (i < text.size() && std::isdigit(static_cast<unsigned char>(text[i]))) {
        const unsigned d = static_cast<unsigned>(text[i] - '0');
        if (v > (std::numeric_limits<std::uint64_t>::max() - d) / 10) throw CliError(kExitUsage, bad);
        v = v * 10 + d;
        ++i;
    }
    if (i == 0) throw CliError(kExitUsage, bad);
    std::string suffix = text.substr(i);
    std::transform(suffix.begin(), suffix.end(), suffix.begin(),
                   [](unsigned char c) { return std::toupper(c); });
    std::uint64_t mult = 1;
    if (suffix.empty() || suffix == "B")
        mult = 1;
    else if (suffix == "K" || suffix == "KB" || suffix == "KIB")
        mult = 1024;
    else if (suffix == "M" || suffix == "MB" || suffix == "MIB")
        mult = 1024 * 1024;
    else
        throw CliError(kExitUsage, bad);
    if (v > std::numeric_limits<std::uint64_t>::max() / mult) throw CliError(kExitUsage, bad);
    if (v == 0) throw CliError(kExitUsage, std::string("invalid ") + option + " '" + text + "': must be positive");
    return v * mult;
}

unsigned parse_dims(const std::string& text, std::uint64_t dims[4]) {
    const std::string bad = "invalid --dims '" + text +
                            "': expected 1 to 4 positive integers separated by 'x', "
                            "slowest to fastest (e.g. 17x96x192)";
    unsigned rank = 0;
    std::size_t i = 0;
    for (;;) {
        if (rank == 4) throw CliError(kExitUsage, bad);
        std::uint64_t v = 0;
        const std::size_t start = i;
        while (i < text.size() && std::isdigit(static_cast<unsigned char>(text[i]))) {
            const unsigned d = static_cast<unsigned>(text[i] - '0');
            if (v > (std::numeric_limits<std::uint64_t>::max() - d) / 10) throw CliError(kExitUsage, bad);
            v = v * 10 + d;
            ++i;
        }
        if (i == start || v == 0) throw CliError(kExitUsage, bad);
        dims[rank++] = v;
        if (i == text.size()) break;
        if (text[i] != 'x' && text[i] != 'X' && text[i] != ',') throw CliError(kExitUsage, bad);
        ++i;
    }
    for (unsigned d = rank; d < 4; ++d) dims[d] = 0;
    return rank;
}

std::string version_text() {
    char buf[128];
    std::snprintf(buf, sizeof buf, "mans %s (library %s, stream format %u)", MANS_VERSION_STRING,
                  mans_version_string(), static_cast<unsigned>(mans_format_version()));
    return buf;
}

int run_compress(const CompressOptions& o) {
    // Floating-point types and error bounds select the lossy codec (PRISM).
    if (is_float_dtype(o.dtype) || !o.error_bound.empty()) return run_prism_compress(o);
    if (o.rel || !o.planes.empty() || !o.fills.empty() || o.no_detect_fill)
        throw CliError(kExitUsage, "--rel, --planes, --fill and --no-detect-fill apply to lossy "
                                   "compression only (f32/f64 with --error-bound)");

    // 1. Settings (usage errors before any I/O).
    mans::CompressConfig cfg;
    if (!mans::parse_dtype(o.dtype.c_str(), &cfg.dtype))
        throw CliError(kExitUsage, "unknown dtype '" + o.dtype +
                                       "' (expected u8, u16, u32, u64, i16, i32, i64 or "
                                       "uint8, uint16, uint32, uint64, int16, int32, int64 for lossless "
                                       "compression; f32 or f64 with --error-bound for lossy)");
    const std::size_t esize = mans::dtype_size(cfg.dtype);
    const std::string dtname = mans::dtype_name(cfg.dtype);
    cfg.backend = require_backend(o.backend, mans::Operation::compress);
    if (o.verify) require_backend(o.backend, mans::Operation::decompress);
    cfg.threads = o.threads;
    cfg.force_scalar = o.scalar;
    if (!o.dims.empty()) cfg.rank = parse_dims(o.dims, cfg.dims);
    if (!o.block_size.empty()) {
        const std::uint64_t bs = parse_byte_size(o.block_size);
        if (bs > std::numeric_limits<std::size_t>::max())
            throw CliError(kExitUsage, "invalid --block-size '" + o.block_size + "': too large");
        cfg.block_bytes = static_cast<std::size_t>(bs);
    }
    const std::string in_shown = display_input(o.input);

    // 2. Input.
    Progress progress;
    std::vector<std::uint8_t> src = read_elements(o.input, in_shown, esize, dtname, progress);
    const std::uint64_t elements = src.size() / esize;
    if (cfg.rank) {
        std::uint64_t product = 1;
        bool overflow = false;
        for (unsigned d = 0; d < cfg.rank; ++d) {
            if (product > std::numeric_limits<std::uint64_t>::max() / cfg.dims[d]) overflow = true;
            product *= cfg.dims[d];
        }
        // Known only after reading: the input does not match (e.g. it was cut short).
        if (overflow || product != elements)
            throw CliError(kExitIo, "--dims " + o.dims + " describes " +
                                           (overflow ? std::string("too many") : std::to_string(product)) +
                                           " elements but " + in_shown + " holds " +
                                           std::to_string(elements) + " " + dtname + " elements");
    }

    // 3. Compress (timed: the library call only).
    progress.start(src.size());
    progress.phase("compressing");
    RawBuffer dst = allocate_raw(mans::compress_bound(src.size()), "the output");
    const auto t0 = Clock::now();
    const mans::Result r = mans::compress(dst.data(), dst.size, src.data(), src.size(), cfg);
    const double secs = seconds_since(t0);
    if (!r) {
        progress.stop();
        int code = kExitIo;
        std::string msg = lib_error(in_shown, r.code);
        if (r.code == mans::Errc::invalid_argument || r.code == mans::Errc::unsupported_dtype) {
            code = kExitUsage;
            if (!o.block_size.empty())
                msg = "--block-size " + o.block_size + " rejected by the library: " +
                      mans::errc_message(r.code) + " (" + mans::errc_name(r.code) + ")";
        }
        throw CliError(code, msg);
    }
    dst.size = r.size;

    // 4. Verify in memory, before anything is written.
    RunStats s;
    if (o.verify) {
        progress.phase("verifying");
        std::vector<std::uint8_t> back = allocate<std::uint8_t>(src.size(), "verification");
        mans::DecompressConfig dc;
        dc.threads = o.threads;
        dc.backend = cfg.backend;
        dc.force_scalar = o.scalar;
        const mans::Result d = mans::decompress(back.data(), back.size(), dst.data(), dst.size, dc);
        if (!d) {
            progress.stop();
            throw CliError(kExitVerify,
                           "verification failed: " + lib_error(in_shown, d.code) + " decoding the new stream");
        }
        if (d.size != src.size() || (!src.empty() && std::memcmp(back.data(), src.data(), src.size()) != 0)) {
            std::size_t at = 0;
            const std::size_t n = std::min<std::size_t>(d.size, src.size());
            while (at < n && back[at] == src[at]) ++at;
            progress.stop();
            throw CliError(kExitVerify, "verification failed: " + in_shown +
                                            ": decompressed data differs from the input at byte " +
                                            std::to_string(at) + " (decoded " + std::to_string(d.size) +
                                            " of " + std::to_string(src.size()) + " bytes)");
        }
        s.has_verified = true;
        s.verified = true;
    }

    // 5. Output (atomic).
    write_with_progress(o.output, dst.data(), dst.size, progress);
    progress.stop();

    fill_run_stats(&s, "compress", o, in_shown, dtname, elements, src.size(), dst.size, secs);
    emit(s, o);
    return kExitOk;
}

int run_decompress(const DecompressOptions& o) {
    mans::DecompressConfig cfg;
    cfg.backend = parse_backend(o.backend);
    cfg.threads = o.threads;
    cfg.force_scalar = o.scalar;
    const std::string in_shown = display_input(o.input);

    // A PRISM archive in a file is read in the ranges a retrieval needs only.
    if (file_is_prism_archive(o.input)) return run_prism_decompress(o, nullptr);
    const auto reject_lossy_options = [&] {
        if (o.lossy_requested())
            throw CliError(kExitUsage, in_shown +
                                           ": --error-bound, --rel, --psnr, --bytes and --original apply to "
                                           "PRISM (lossy) archives only; this is a lossless MANS stream");
    };
    if (is_regular_file(o.input)) reject_lossy_options();  // before reading the whole file

    Progress progress;
    std::vector<std::uint8_t> src = read_with_progress(o.input, progress);
    if (mans::prism::is_archive(src.data(), src.size())) {
        progress.stop();
        return run_prism_decompress(o, &src);
    }
    reject_lossy_options();
    require_backend(o.backend, mans::Operation::decompress);
    mans::FrameInfo fi{};
    if (mans::Errc e = mans::get_frame_info(src.data(), src.size(), &fi); e != mans::Errc::ok) {
        progress.stop();
        throw CliError(kExitIo, lib_error(in_shown, e));
    }
    if (fi.raw_bytes > std::numeric_limits<std::size_t>::max())
        throw CliError(kExitIo, in_shown + ": raw size " + std::to_string(fi.raw_bytes) +
                                    " bytes does not fit in memory");
    const char* dt = mans::dtype_name(static_cast<mans::DType>(fi.dtype));

    progress.start(fi.raw_bytes);
    progress.phase("decompressing");
    RawBuffer dst = allocate_raw(static_cast<std::size_t>(fi.raw_bytes), "the output");
    const auto t0 = Clock::now();
    const mans::Result r = mans::decompress(dst.data(), dst.size, src.data(), src.size(), cfg);
    const double secs = seconds_since(t0);
    if (!r) {
        progress.stop();
        throw CliError(kExitIo, lib_error(in_shown, r.code));
    }
    dst.size = r.size;

    write_with_progress(o.output, dst.data(), dst.size, progress);
    progress.stop();

    RunStats s;
    fill_run_stats(&s, "decompress", o, in_shown, dt ? dt : "?", fi.element_count, dst.size, src.size(),
                   secs);
    emit(s, o);
    return kExitOk;
}

int run_info(const InfoOptions& o) {
    const std::string in_shown = display_input(o.input);
    if (file_is_prism_archive(o.input)) return run_prism_info(o, nullptr);
    Progress progress;
    std::vector<std::uint8_t> src = read_with_progress(o.input, progress);
    progress.stop();
    if (mans::prism::is_archive(src.data(), src.size())) return run_prism_info(o, &src);
    mans::FrameInfo fi{};
    if (mans::Errc e = mans::get_frame_info(src.data(), src.size(), &fi); e != mans::Errc::ok)
        throw CliError(kExitIo, lib_error(in_shown, e));
    if (o.json)
        std::printf("%s\n", info_json(in_shown, fi).c_str());
    else
        std::fputs(info_text(in_shown, fi).c_str(), stdout);
    flush_stdout("the description");
    return kExitOk;
}

}  // namespace mans_cli
