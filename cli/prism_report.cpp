// prism_report.cpp - see prism_report.hpp.
#include "prism_report.hpp"

#include <cmath>
#include <cstdio>
#include <sstream>

#include "report.hpp"

namespace mans_cli {
namespace {

using mans::prism::ArchiveInfo;
using mans::prism::Quality;

std::string fmt(const char* f, double v) {
    char buf[64];
    std::snprintf(buf, sizeof buf, f, v);
    return buf;
}

// "1.319e-04"-style for bounds and errors, "inf" when not finite.
std::string g4(double v) { return std::isfinite(v) ? fmt("%.4g", v) : (v > 0 ? "inf" : "nan"); }

double mb_per_s(std::uint64_t raw, double seconds) {
    return seconds > 0 ? static_cast<double>(raw) / 1e6 / seconds : 0.0;
}

double percent(std::uint64_t part, std::uint64_t whole) {
    return whole ? 100.0 * static_cast<double>(part) / static_cast<double>(whole) : 0.0;
}

std::string dims_json(const ArchiveInfo& info) {
    std::string s = "[";
    for (std::uint32_t d = 0; d < info.rank && d < 4; ++d) s += (d ? "," : "") + std::to_string(info.dims[d]);
    return s + "]";
}

std::string doubles_json(const std::vector<double>& v) {
    std::string s = "[";
    for (std::size_t i = 0; i < v.size(); ++i) s += (i ? "," : "") + json_double(v[i]);
    return s + "]";
}

std::string uints_json(const std::vector<std::uint32_t>& v) {
    std::string s = "[";
    for (std::size_t i = 0; i < v.size(); ++i) s += (i ? "," : "") + std::to_string(v[i]);
    return s + "]";
}

// The fields that describe the data of an archive.
void archive_fields(JsonObject& j, const ArchiveInfo& info) {
    j.str("codec", "prism")
        .str("dtype", mans::prism::float_name(info.type) ? mans::prism::float_name(info.type) : "?")
        .raw("dims", dims_json(info))
        .uint("elements", info.count)
        .uint("raw_bytes", raw_bytes(info));
}

// How the archive was compressed: bound, value range, plane coding.
void compression_fields(JsonObject& j, const ArchiveInfo& i) {
    j.str("error_mode", error_mode_name(i.mode))
        .num("requested_bound", i.requested_bound)
        .num("error_bound", i.abs_bound)
        .num("value_min", i.value_min)
        .num("value_max", i.value_max)
        .str("planes", plane_coding_name(i.planes))
        .uint("levels", i.levels);
}

// "rel 1e-06 = abs 0.0001319" / "abs 0.001"
std::string bound_text(const ArchiveInfo& info) {
    if (info.mode == mans::prism::ErrorMode::relative)
        return "rel " + shortest_double(info.requested_bound) + " = abs " + g4(info.abs_bound);
    return "abs " + shortest_double(info.abs_bound);
}

void quality_fields(JsonObject& j, const QualityCheck& c) {
    j.num("max_abs_error", c.q.max_abs_error)
        .num("max_rel_error", c.q.max_rel_error)
        .num("psnr", c.q.psnr)
        .num("nrmse", c.q.nrmse)
        .num("rmse", c.q.rmse)
        .num("value_range", c.q.value_range)
        .uint("mismatches", c.q.mismatch_count)
        .boolean("bound_met", c.bound_met);
}

std::string quality_text(const QualityCheck& c) {
    std::string s = "max_abs_error " + g4(c.q.max_abs_error) + ", max_rel_error " + g4(c.q.max_rel_error) +
                    ", psnr " + g4(c.q.psnr) + " dB, nrmse " + g4(c.q.nrmse);
    if (c.q.mismatch_count) s += ", " + std::to_string(c.q.mismatch_count) + " exact value(s) differ";
    return s + (c.bound_met ? ", bound met" : ", BOUND NOT MET");
}

std::string target_text(const mans::prism::Target& t) {
    using K = mans::prism::Target::Kind;
    switch (t.kind) {
        case K::absolute: return "abs " + shortest_double(t.value);
        case K::relative: return "rel " + shortest_double(t.value);
        case K::psnr: return "psnr " + shortest_double(t.value) + " dB";
        case K::bytes: return "bytes " + shortest_double(t.value);
        case K::full: break;
    }
    return "full";
}

std::string row_label(const RetrievalRow& r) { return r.full ? "full" : "rel " + fmt("%.3g", r.rel_bound); }

}  // namespace

const char* error_mode_name(mans::prism::ErrorMode m) {
    return m == mans::prism::ErrorMode::relative ? "rel" : "abs";
}

const char* plane_coding_name(mans::prism::PlaneCoding c) {
    return c == mans::prism::PlaneCoding::sign_magnitude ? "sign-magnitude" : "negabinary";
}

const char* target_kind_name(mans::prism::Target::Kind k) {
    using K = mans::prism::Target::Kind;
    switch (k) {
        case K::absolute: return "abs";
        case K::relative: return "rel";
        case K::psnr: return "psnr";
        case K::bytes: return "bytes";
        case K::full: break;
    }
    return "full";
}

std::string dims_text(const ArchiveInfo& info) {
    std::string s;
    for (std::uint32_t d = 0; d < info.rank && d < 4; ++d) s += (d ? "x" : "") + std::to_string(info.dims[d]);
    return s;
}

std::uint64_t raw_bytes(const ArchiveInfo& info) { return info.count * mans::prism::float_size(info.type); }

// ---------------------------------------------------------------- compress

std::string prism_compress_line(const PrismCompressReport& r) {
    const ArchiveInfo& i = r.info;
    const std::uint64_t raw = raw_bytes(i);
    std::ostringstream o;
    o << "mans: compress " << r.input << ": " << raw << " -> " << i.archive_bytes << " B, ratio "
      << fmt("%.3f", ratio(raw, i.archive_bytes)) << ", "
      << fmt("%.3f", bits_per_value(i.archive_bytes, i.count)) << " bits/value, "
      << fmt("%.1f", mb_per_s(raw, r.seconds)) << " MB/s, prism " << mans::prism::float_name(i.type) << ' '
      << dims_text(i) << ", bound " << bound_text(i) << ", max error " << g4(i.full_max_error) << ", backend "
      << r.backend << ", " << r.threads << " thread(s)";
    if (r.check.present) o << "; verified: " << quality_text(r.check);
    return o.str();
}

std::string prism_compress_json(const PrismCompressReport& r) {
    const ArchiveInfo& i = r.info;
    const std::uint64_t raw = raw_bytes(i);
    JsonObject j;
    j.str("command", "compress").str("input", r.input).str("output", r.output);
    archive_fields(j, i);
    j.uint("compressed_bytes", i.archive_bytes)
        .num("ratio", ratio(raw, i.archive_bytes))
        .num("bits_per_value", bits_per_value(i.archive_bytes, i.count));
    compression_fields(j, i);
    j.uint("masked", i.masked_count)
        .uint("outliers", i.outlier_count)
        .raw("fill_values", doubles_json(i.fill_values))
        .num("full_max_error", i.full_max_error)
        .num("seconds", r.seconds)
        .num("mb_per_s", mb_per_s(raw, r.seconds))
        .uint("threads", static_cast<std::uint64_t>(r.threads))
        .str("backend", r.backend);
    if (r.check.present) {
        j.boolean("verified", r.check.bound_met);
        quality_fields(j, r.check);
    }
    return j.text();
}

// ---------------------------------------------------------------- decompress

std::string prism_retrieve_line(const PrismRetrieveReport& r) {
    const ArchiveInfo& i = r.info;
    const std::uint64_t raw = raw_bytes(i);
    std::ostringstream o;
    o << "mans: decompress " << r.input << ": read " << r.bytes_read << " of " << i.archive_bytes << " B ("
      << fmt("%.1f", percent(r.bytes_read, i.archive_bytes)) << "%) -> " << raw << " B, prism "
      << mans::prism::float_name(i.type) << ' ' << dims_text(i) << ", target " << target_text(r.target)
      << ", max error bound " << g4(r.stats.max_abs_error_bound) << ", psnr estimate "
      << g4(r.stats.psnr_estimate) << " dB, " << (r.stats.complete ? "complete" : "partial") << ", "
      << fmt("%.1f", mb_per_s(raw, r.seconds)) << " MB/s, backend " << r.backend << ", " << r.threads
      << " thread(s)";
    if (r.check.present) o << "; vs original: " << quality_text(r.check);
    return o.str();
}

std::string prism_retrieve_json(const PrismRetrieveReport& r) {
    const ArchiveInfo& i = r.info;
    const std::uint64_t raw = raw_bytes(i);
    JsonObject j;
    j.str("command", "decompress").str("input", r.input).str("output", r.output);
    archive_fields(j, i);
    j.uint("archive_bytes", i.archive_bytes).str("target", target_kind_name(r.target.kind));
    if (r.target.kind == mans::prism::Target::Kind::full)
        j.null("target_value");
    else
        j.num("target_value", r.target.value);
    if (r.has_requested_bound) j.num("requested_bound", r.requested_bound);
    j.uint("bytes_read", r.bytes_read)
        .num("bytes_read_fraction",
             i.archive_bytes ? static_cast<double>(r.bytes_read) / static_cast<double>(i.archive_bytes) : 0.0)
        .num("max_abs_error_bound", r.stats.max_abs_error_bound)
        .num("psnr_estimate", r.stats.psnr_estimate)
        .boolean("complete", r.stats.complete)
        .raw("planes", uints_json(r.stats.planes))
        .num("seconds", r.seconds)
        .num("mb_per_s", mb_per_s(raw, r.seconds))
        .uint("threads", static_cast<std::uint64_t>(r.threads))
        .str("backend", r.backend);
    if (r.check.present) quality_fields(j, r.check);
    return j.text();
}

// ---------------------------------------------------------------- info

std::string prism_info_text(const std::string& input, const ArchiveInfo& i, const std::vector<RetrievalRow>& rows) {
    const std::uint64_t raw = raw_bytes(i);
    std::ostringstream o;
    o << input << ":\n"
      << "  codec             prism (PRISM progressive lossy)\n"
      << "  dtype             " << mans::prism::float_name(i.type) << "\n"
      << "  dims              " << dims_text(i) << " (slowest to fastest, rank " << i.rank << ")\n"
      << "  elements          " << i.count << "\n"
      << "  raw bytes         " << raw << "\n"
      << "  error mode        " << (i.mode == mans::prism::ErrorMode::relative ? "relative (x value range)"
                                                                                 : "absolute")
      << "\n"
      << "  requested bound   " << shortest_double(i.requested_bound) << "\n"
      << "  absolute bound    " << shortest_double(i.abs_bound) << "\n"
      << "  value range       " << shortest_double(i.value_min) << " .. " << shortest_double(i.value_max)
      << " (range " << g4(i.value_max - i.value_min) << ")\n"
      << "  plane coding      " << plane_coding_name(i.planes) << "\n"
      << "  levels            " << i.levels << "\n"
      << "  archive bytes     " << i.archive_bytes << "\n"
      << "  header bytes      " << i.header_bytes << "\n"
      << "  base bytes        " << i.base_bytes << "\n"
      << "  ratio             " << fmt("%.3f", ratio(raw, i.archive_bytes)) << "\n"
      << "  bits/value        " << fmt("%.3f", bits_per_value(i.archive_bytes, i.count)) << "\n"
      << "  masked values     " << i.masked_count << "\n"
      << "  outliers          " << i.outlier_count << "\n"
      << "  fill values       ";
    if (i.fill_values.empty()) o << "none";
    for (std::size_t k = 0; k < i.fill_values.size(); ++k) o << (k ? ", " : "") << shortest_double(i.fill_values[k]);
    o << "\n"
      << "  full max error    " << shortest_double(i.full_max_error) << "\n"
      << "  retrieval (requested bound -> bytes to read):\n";
    char line[200];
    std::snprintf(line, sizeof line, "    %-13s %12s %12s %8s %10s %12s %10s\n", "requested", "abs bound", "bytes",
                  "archive", "bits/value", "bound", "psnr est");
    o << line;
    for (const RetrievalRow& r : rows) {
        const std::string abs = r.full ? "-" : g4(r.abs_bound);
        if (!r.reachable) {
            std::snprintf(line, sizeof line, "    %-13s %12s %12s\n", row_label(r).c_str(), abs.c_str(),
                          "unreachable");
        } else {
            std::snprintf(line, sizeof line, "    %-13s %12s %12llu %7.2f%% %10.3f %12s %10s\n",
                          row_label(r).c_str(), abs.c_str(), static_cast<unsigned long long>(r.plan.bytes_to_read),
                          percent(r.plan.bytes_to_read, i.archive_bytes),
                          bits_per_value(r.plan.bytes_to_read, i.count), g4(r.plan.max_abs_error_bound).c_str(),
                          g4(r.plan.psnr_estimate).c_str());
        }
        o << line;
    }
    return o.str();
}

std::string prism_info_json(const std::string& input, const ArchiveInfo& i, const std::vector<RetrievalRow>& rows) {
    const std::uint64_t raw = raw_bytes(i);
    JsonObject j;
    j.str("command", "info").str("input", input);
    archive_fields(j, i);
    j.str("codec_name", "PRISM progressive lossy")
        .uint("rank", i.rank);
    compression_fields(j, i);
    j.uint("archive_bytes", i.archive_bytes)
        .uint("compressed_bytes", i.archive_bytes)
        .uint("header_bytes", i.header_bytes)
        .uint("base_bytes", i.base_bytes)
        .num("ratio", ratio(raw, i.archive_bytes))
        .num("bits_per_value", bits_per_value(i.archive_bytes, i.count))
        .uint("masked", i.masked_count)
        .uint("outliers", i.outlier_count)
        .raw("fill_values", doubles_json(i.fill_values))
        .num("full_max_error", i.full_max_error);
    std::string table = "[";
    for (std::size_t k = 0; k < rows.size(); ++k) {
        const RetrievalRow& r = rows[k];
        JsonObject row;
        row.str("requested", row_label(r));
        if (r.full) row.null("rel_bound").null("abs_bound");
        else row.num("rel_bound", r.rel_bound).num("abs_bound", r.abs_bound);
        row.boolean("reachable", r.reachable);
        if (r.reachable) {
            row.uint("bytes", r.plan.bytes_to_read)
                .num("percent", percent(r.plan.bytes_to_read, i.archive_bytes))
                .num("bits_per_value", bits_per_value(r.plan.bytes_to_read, i.count))
                .num("max_abs_error_bound", r.plan.max_abs_error_bound)
                .num("psnr_estimate", r.plan.psnr_estimate)
                .boolean("complete", r.plan.complete);
        }
        table += (k ? "," : "") + row.text();
    }
    j.raw("retrieval_table", table + "]");
    return j.text();
}

}  // namespace mans_cli
