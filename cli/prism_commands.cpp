// prism_commands.cpp - lossy compression into a PRISM archive and retrieval
// from one, on top of the public mans::prism API (see prism_commands.hpp).
#include "prism_commands.hpp"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <memory>

#include "command_util.hpp"
#include "file_io.hpp"
#include "mans/prism.hpp"
#include "prism_report.hpp"
#include "report.hpp"

namespace mans_cli {
namespace {

namespace prism = mans::prism;

std::string lower(std::string s) {
    std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return std::tolower(c); });
    return s;
}

bool parse_float_dtype(const std::string& name, prism::FloatType* out) {
    const std::string n = lower(name);
    if (n == "f32" || n == "float32" || n == "float") *out = prism::FloatType::f32;
    else if (n == "f64" || n == "float64" || n == "double") *out = prism::FloatType::f64;
    else return false;
    return true;
}

}  // namespace

// A whole-string decimal number (strtod syntax; "inf" only when allowed).
double parse_number(const std::string& text, const std::string& option, bool allow_inf) {
    const std::string bad = "invalid " + option + " '" + text + "': expected a number";
    if (text.empty() || std::isspace(static_cast<unsigned char>(text[0]))) throw CliError(kExitUsage, bad);
    errno = 0;
    char* end = nullptr;
    const double v = std::strtod(text.c_str(), &end);
    if (end == text.c_str() || *end != '\0' || std::isnan(v)) throw CliError(kExitUsage, bad);
    if (!allow_inf && !std::isfinite(v)) throw CliError(kExitUsage, bad + " (finite)");
    return v;
}

double parse_bound(const std::string& text, const std::string& option) {
    const double v = parse_number(text, option);
    if (!(v > 0)) throw CliError(kExitUsage, "invalid " + option + " '" + text + "': must be positive");
    return v;
}

namespace {

prism::PlaneCoding parse_planes(const std::string& text) {
    const std::string n = lower(text);
    if (n.empty() || n == "negabinary") return prism::PlaneCoding::negabinary;
    if (n == "sign-magnitude" || n == "sign_magnitude" || n == "signmagnitude") return prism::PlaneCoding::sign_magnitude;
    throw CliError(kExitUsage, "invalid --planes '" + text + "' (expected negabinary or sign-magnitude)");
}

std::uint64_t product(const std::uint64_t* dims, unsigned rank, bool* overflow) {
    std::uint64_t p = 1;
    *overflow = false;
    for (unsigned d = 0; d < rank; ++d) {
        if (dims[d] && p > std::numeric_limits<std::uint64_t>::max() / dims[d]) *overflow = true;
        p *= dims[d];
    }
    return p;
}

// Opens the archive: from memory when given, else the file (ranges on demand).
prism::Reader open_reader(const std::string& path, const std::vector<std::uint8_t>* in_memory,
                          const std::string& shown) {
    std::unique_ptr<prism::Source> src;
    if (in_memory) {
        src = prism::memory_source(in_memory->data(), in_memory->size());
    } else {
        mans::Errc e = mans::Errc::ok;
        src = prism::file_source(path, &e);
        if (!src) throw CliError(kExitIo, lib_error(shown, e == mans::Errc::ok ? mans::Errc::io : e));
    }
    prism::Reader reader;
    if (mans::Errc e = prism::Reader::open(std::move(src), &reader); e != mans::Errc::ok)
        throw CliError(kExitIo, lib_error(shown, e));
    return reader;
}

// Relative bounds of the info table: decades from 1e-1 down to the archive's
// own bound (plus that bound when it is not a decade), then "full".
std::vector<RetrievalRow> retrieval_table(const prism::Reader& reader) {
    const prism::ArchiveInfo& i = reader.info();
    const double range = i.value_max - i.value_min;
    std::vector<double> rels;
    if (range > 0 && std::isfinite(range)) {
        const double own = i.mode == prism::ErrorMode::relative ? i.requested_bound : i.abs_bound / range;
        for (int k = 1; k <= 30; ++k) {
            const double d = std::pow(10.0, -k);
            if (d < own * (1 - 1e-9)) break;
            rels.push_back(d);
        }
        if (own > 0 && own < 1 && (rels.empty() || std::fabs(rels.back() - own) > 1e-9 * own)) rels.push_back(own);
    }
    std::vector<RetrievalRow> rows;
    for (double r : rels) {
        RetrievalRow row;
        row.rel_bound = r;
        row.abs_bound = r * range;
        const mans::Errc e = reader.plan(prism::Target::rel(r), nullptr, &row.plan);
        if (e == mans::Errc::target_unreachable) row.reachable = false;
        else if (e != mans::Errc::ok) throw CliError(kExitIo, lib_error("planning a retrieval", e));
        rows.push_back(row);
    }
    RetrievalRow full;
    full.full = true;
    if (mans::Errc e = reader.plan(prism::Target::full(), nullptr, &full.plan); e != mans::Errc::ok)
        throw CliError(kExitIo, lib_error("planning a full retrieval", e));
    rows.push_back(full);
    return rows;
}

std::string g4(double v) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.4g", v);
    return buf;
}

// Why a target cannot be met, in the archive's terms.
std::string unreachable_message(const std::string& shown, const prism::Reader& reader, const prism::Target& t,
                                double requested_abs) {
    const prism::ArchiveInfo& i = reader.info();
    std::string archive_bound = i.mode == prism::ErrorMode::relative
                                    ? "rel " + shortest_double(i.requested_bound) + " = abs " + shortest_double(i.abs_bound)
                                    : "abs " + shortest_double(i.abs_bound);
    std::string what;
    switch (t.kind) {
        case prism::Target::Kind::absolute:
        case prism::Target::Kind::relative:
            what = "error bound " + std::string(t.kind == prism::Target::Kind::relative ? "rel " : "abs ") +
                   shortest_double(t.value) +
                   (t.kind == prism::Target::Kind::relative ? " (abs " + shortest_double(requested_abs) + ")" : "") +
                   " is tighter than the archive's bound " + archive_bound + " (full retrieval max error " +
                   shortest_double(i.full_max_error) + "); compress again with a smaller --error-bound";
            break;
        case prism::Target::Kind::psnr: {
            prism::Plan full;
            const bool have = reader.plan(prism::Target::full(), nullptr, &full) == mans::Errc::ok;
            what = "PSNR " + shortest_double(t.value) + " dB is above what the full archive gives" +
                   (have ? " (estimated " + g4(full.psnr_estimate) + " dB" : std::string(" (")) +
                   ", archive's bound " + archive_bound + ")";
            break;
        }
        case prism::Target::Kind::bytes:
            what = "--bytes " + shortest_double(t.value) + " is below the " +
                   std::to_string(i.header_bytes + i.base_bytes) +
                   " bytes of header and base that every retrieval reads";
            break;
        case prism::Target::Kind::full: what = "full retrieval failed"; break;
    }
    return shown + ": " + what + " (" + mans::errc_name(mans::Errc::target_unreachable) + ")";
}

// Measures `reconstructed` against `original`; bound_met when the error is
// within every bound given (and no exactly-kept value differs).
QualityCheck check_quality(const void* original, const void* reconstructed, const prism::ArchiveInfo& info,
                           const std::vector<double>& bounds) {
    QualityCheck c;
    c.present = true;
    if (mans::Errc e = prism::measure_quality(original, reconstructed, info.type, info.count, info.fill_values, &c.q);
        e != mans::Errc::ok)
        throw CliError(kExitIo, lib_error("measuring the error", e));
    c.bound_met = c.q.mismatch_count == 0;
    for (double b : bounds) c.bound_met = c.bound_met && c.q.max_abs_error <= b;
    return c;
}

void emit_report(bool stats, bool json, const std::string& output, const std::string& line, const std::string& obj) {
    if (stats) std::fprintf(stderr, "%s\n", line.c_str());
    if (json) {
        FILE* sink = output == "-" ? stderr : stdout;  // stdout carries the data then
        std::fprintf(sink, "%s\n", obj.c_str());
        if (sink == stdout) flush_stdout("the report");
        else std::fflush(sink);
    }
}

}  // namespace

bool is_float_dtype(const std::string& name) {
    prism::FloatType t;
    return parse_float_dtype(name, &t);
}

// ---------------------------------------------------------------- compress

int run_prism_compress(const CompressOptions& o) {
    // 1. Settings (usage errors before any I/O).
    prism::CompressConfig cfg;
    if (!parse_float_dtype(o.dtype, &cfg.type)) {
        mans::DType integer;
        if (mans::parse_dtype(o.dtype.c_str(), &integer))
            throw CliError(kExitUsage, "--error-bound applies to f32/f64 (lossy) only; " + o.dtype +
                                           " is compressed losslessly, without a bound");
        throw CliError(kExitUsage, "unknown dtype '" + o.dtype + "' (lossy compression takes f32 or f64)");
    }
    const std::string dtname = prism::float_name(cfg.type);
    if (o.error_bound.empty())
        throw CliError(kExitUsage, "dtype " + dtname +
                                       " is compressed lossily (PRISM) and needs an error bound: "
                                       "--error-bound E [--rel], or SZ-style -M ABS -A E / -M REL -R E");
    if (!o.block_size.empty()) throw CliError(kExitUsage, "--block-size applies to lossless (integer) compression only");
    cfg.backend = require_backend(o.backend, mans::Operation::prism_compress);  // exit 2 with the reason
    cfg.error_bound = parse_bound(o.error_bound, "--error-bound");
    cfg.mode = o.rel ? prism::ErrorMode::relative : prism::ErrorMode::absolute;
    cfg.planes = parse_planes(o.planes);
    for (const std::string& f : o.fills) cfg.fill_values.push_back(parse_number(f, "--fill", true));
    cfg.detect_fill = !o.no_detect_fill;
    cfg.threads = o.threads;
    if (!o.dims.empty()) cfg.rank = parse_dims(o.dims, cfg.dims);
    const std::size_t esize = prism::float_size(cfg.type);
    const std::string in_shown = display_input(o.input);

    // 2. Input.
    Progress progress;
    std::vector<std::uint8_t> src = read_elements(o.input, in_shown, esize, dtname, progress);
    const std::uint64_t elements = src.size() / esize;
    if (o.dims.empty()) {
        cfg.rank = 1;  // one-dimensional, as long as the file
        cfg.dims[0] = elements;
    }
    bool overflow = false;
    const std::uint64_t described = product(cfg.dims, cfg.rank, &overflow);
    // Known only after reading: the input does not match (e.g. it was cut short).
    if (overflow || described != elements)
        throw CliError(kExitIo, "--dims " + o.dims + " describes " +
                                       (overflow ? std::string("too many") : std::to_string(described)) +
                                       " elements but " + in_shown + " holds " + std::to_string(elements) + " " +
                                       dtname + " elements");

    // 3. Compress (timed: the library call only).
    progress.start(src.size());
    progress.phase("compressing");
    std::vector<std::uint8_t> archive;
    const auto t0 = Clock::now();
    const mans::Errc e = prism::compress(src.data(), src.size(), cfg, &archive);
    const double secs = seconds_since(t0);
    if (e != mans::Errc::ok) {
        progress.stop();
        const int code = e == mans::Errc::invalid_argument || e == mans::Errc::unsupported_dtype ? kExitUsage : kExitIo;
        throw CliError(code, lib_error(in_shown, e));
    }

    PrismCompressReport rep;
    rep.input = in_shown;
    rep.output = display_output(o.output);
    rep.seconds = secs;
    rep.threads = resolve_threads(o.threads);
    // Only when shown: the line for --backend auto opens the GPU modules.
    if (o.stats || o.json) rep.backend = backend_label(o.backend, mans::Operation::prism_compress, o.scalar);
    prism::Reader reader = open_reader("", &archive, "the new archive");
    rep.info = reader.info();

    // 4. Verify in memory (full retrieval), before anything is written.
    if (o.verify) {
        progress.phase("verifying");
        prism::Retrieval back;
        if (mans::Errc d = reader.retrieve(prism::Target::full(), &back, o.threads); d != mans::Errc::ok) {
            progress.stop();
            throw CliError(kExitVerify, "verification failed: " + lib_error(in_shown, d) + " retrieving the new archive");
        }
        rep.check = check_quality(src.data(), back.data(), rep.info,
                                  {rep.info.abs_bound, back.stats().max_abs_error_bound});
        if (!rep.check.bound_met) {
            progress.stop();
            throw CliError(kExitVerify, "verification failed: " + in_shown + ": max_abs_error " +
                                            shortest_double(rep.check.q.max_abs_error) + " exceeds the bound " +
                                            shortest_double(rep.info.abs_bound) +
                                            (rep.check.q.mismatch_count
                                                 ? " or " + std::to_string(rep.check.q.mismatch_count) +
                                                       " exactly kept value(s) differ"
                                                 : std::string()));
        }
    }

    // 5. Output (atomic).
    write_with_progress(o.output, archive.data(), archive.size(), progress);
    progress.stop();
    emit_report(o.stats, o.json, o.output, prism_compress_line(rep), prism_compress_json(rep));
    return kExitOk;
}

// ---------------------------------------------------------------- decompress

int run_prism_decompress(const DecompressOptions& o, const std::vector<std::uint8_t>* in_memory) {
    const std::string in_shown = display_input(o.input);
    PrismRetrieveReport rep;
    rep.input = in_shown;
    rep.output = display_output(o.output);
    rep.threads = resolve_threads(o.threads);
    const mans::Backend backend = require_backend(o.backend, mans::Operation::prism_decompress);

    // 1. Target (usage errors first).
    if (!o.error_bound.empty()) {
        const double b = parse_bound(o.error_bound, "--error-bound");
        rep.target = o.rel ? prism::Target::rel(b) : prism::Target::abs(b);
    } else if (!o.psnr.empty()) {
        rep.target = prism::Target::psnr(parse_number(o.psnr, "--psnr"));
    } else if (!o.bytes.empty()) {
        rep.target = prism::Target::bytes(parse_byte_size(o.bytes, "--bytes"));
    }

    // 2. Header (and the original, so that a bad --original fails before the work).
    prism::Reader reader = open_reader(o.input, in_memory, in_shown);
    reader.set_backend(backend);  // a backend require_backend accepted
    rep.info = reader.info();
    const std::uint64_t raw = raw_bytes(rep.info);
    if (rep.target.kind == prism::Target::Kind::absolute || rep.target.kind == prism::Target::Kind::relative) {
        rep.has_requested_bound = true;
        rep.requested_bound = rep.target.kind == prism::Target::Kind::absolute
                                  ? rep.target.value
                                  : rep.target.value * (rep.info.value_max - rep.info.value_min);
    }
    Progress progress;
    std::vector<std::uint8_t> original;
    if (!o.original.empty()) {
        original = read_with_progress(o.original, progress);
        if (original.size() != raw)
            throw CliError(kExitIo, display_input(o.original) + ": --original holds " + std::to_string(original.size()) +
                                        " bytes but the archive decodes to " + std::to_string(raw) + " bytes");
    }
    if (raw > std::numeric_limits<std::size_t>::max())
        throw CliError(kExitIo, in_shown + ": raw size " + std::to_string(raw) + " bytes does not fit in memory");

    // 3. Retrieve (timed: the library call only).
    progress.start(raw);
    progress.phase("retrieving");
    prism::Retrieval x;
    const auto t0 = Clock::now();
    const mans::Errc e = reader.retrieve(rep.target, &x, o.threads);
    rep.seconds = seconds_since(t0);
    if (e != mans::Errc::ok) {
        progress.stop();
        if (e == mans::Errc::target_unreachable)
            throw CliError(kExitIo, unreachable_message(in_shown, reader, rep.target, rep.requested_bound));
        throw CliError(e == mans::Errc::invalid_argument ? kExitUsage : kExitIo, lib_error(in_shown, e));
    }
    rep.stats = x.stats();
    rep.bytes_read = reader.bytes_read();
    // Where it ran (automatic keeps small fields on the CPU).
    rep.backend = std::string(rep.stats.backend) == "cpu"
                      ? std::string(mans::backend_description(mans::Backend::cpu, o.scalar))
                      : backend_label(rep.stats.backend, mans::Operation::prism_decompress, o.scalar);

    // 4. Against the original: the bound must hold before anything is written.
    if (!o.original.empty()) {
        std::vector<double> bounds = {rep.stats.max_abs_error_bound};
        if (rep.has_requested_bound) bounds.push_back(rep.requested_bound);
        rep.check = check_quality(original.data(), x.data(), rep.info, bounds);
        if (!rep.check.bound_met) {
            progress.stop();
            emit_report(o.stats, o.json, o.output, prism_retrieve_line(rep), prism_retrieve_json(rep));
            throw CliError(kExitVerify,
                           "check against " + display_input(o.original) + " failed: max_abs_error " +
                               shortest_double(rep.check.q.max_abs_error) + " exceeds the bound " +
                               shortest_double(rep.has_requested_bound
                                                   ? std::min(rep.requested_bound, rep.stats.max_abs_error_bound)
                                                   : rep.stats.max_abs_error_bound) +
                               (rep.check.q.mismatch_count ? " or " + std::to_string(rep.check.q.mismatch_count) +
                                                                 " exactly kept value(s) differ"
                                                           : std::string()) +
                               "; nothing written");
        }
    }

    // 5. Output (atomic).
    write_with_progress(o.output, x.data(), x.bytes(), progress);
    progress.stop();
    emit_report(o.stats, o.json, o.output, prism_retrieve_line(rep), prism_retrieve_json(rep));
    return kExitOk;
}

// ---------------------------------------------------------------- info

int run_prism_info(const InfoOptions& o, const std::vector<std::uint8_t>* in_memory) {
    const std::string in_shown = display_input(o.input);
    const prism::Reader reader = open_reader(o.input, in_memory, in_shown);
    const std::vector<RetrievalRow> rows = retrieval_table(reader);
    if (o.json)
        std::printf("%s\n", prism_info_json(in_shown, reader.info(), rows).c_str());
    else
        std::fputs(prism_info_text(in_shown, reader.info(), rows).c_str(), stdout);
    flush_stdout("the description");
    return kExitOk;
}

}  // namespace mans_cli
