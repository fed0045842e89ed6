// report.cpp - see report.hpp.
#include "report.hpp"

#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <sstream>

namespace mans_cli {
namespace {

std::string fmt(const char* f, double v) {
    char buf[64];
    std::snprintf(buf, sizeof buf, f, v);
    return buf;
}

// JSON has no inf/nan.
std::string json_number(const char* f, double v) {
    return std::isfinite(v) ? fmt(f, v) : "null";
}

double mbps(const RunStats& s) {
    return s.seconds > 0 ? static_cast<double>(s.raw_bytes) / 1e6 / s.seconds : 0.0;
}

const char* codec_name(std::uint32_t codec) { return codec == 1 ? "MANS lossless" : "unknown"; }

}  // namespace

double ratio(std::uint64_t raw, std::uint64_t compressed) {
    return compressed ? static_cast<double>(raw) / static_cast<double>(compressed) : 0.0;
}

double bits_per_value(std::uint64_t compressed, std::uint64_t elements) {
    return elements ? 8.0 * static_cast<double>(compressed) / static_cast<double>(elements) : 0.0;
}

std::string json_escape(const std::string& s) {
    std::string out;
    out.reserve(s.size() + 2);
    for (unsigned char c : s) {
        switch (c) {
            case '"': out += "\\\""; break;
            case '\\': out += "\\\\"; break;
            case '\n': out += "\\n"; break;
            case '\r': out += "\\r"; break;
            case '\t': out += "\\t"; break;
            default:
                if (c < 0x20) {
                    char buf[8];
                    std::snprintf(buf, sizeof buf, "\\u%04x", c);
                    out += buf;
                } else {
                    out += static_cast<char>(c);  // UTF-8 passes through
                }
        }
    }
    return out;
}

std::string shape_string(const mans::FrameInfo& fi) {
    std::string s;
    for (std::uint32_t d = 0; d < fi.rank && d < 4; ++d) {
        if (d) s += 'x';
        s += std::to_string(fi.dims[d]);
    }
    return s;
}

std::string shortest_double(double v) {
    char buf[40];
    for (int prec = 15; prec <= 17; ++prec) {
        std::snprintf(buf, sizeof buf, "%.*g", prec, v);
        if (std::strtod(buf, nullptr) == v) break;
    }
    return buf;
}

std::string json_double(double v) { return std::isfinite(v) ? shortest_double(v) : "null"; }

JsonObject& JsonObject::key(const char* k) {
    if (!body_.empty()) body_ += ',';
    body_ += '"';
    body_ += json_escape(k);
    body_ += "\":";
    return *this;
}
JsonObject& JsonObject::str(const char* k, const std::string& v) {
    key(k).body_ += "\"" + json_escape(v) + "\"";
    return *this;
}
JsonObject& JsonObject::uint(const char* k, std::uint64_t v) {
    key(k).body_ += std::to_string(v);
    return *this;
}
JsonObject& JsonObject::num(const char* k, double v) {
    key(k).body_ += json_double(v);
    return *this;
}
JsonObject& JsonObject::boolean(const char* k, bool v) {
    key(k).body_ += v ? "true" : "false";
    return *this;
}
JsonObject& JsonObject::null(const char* k) {
    key(k).body_ += "null";
    return *this;
}
JsonObject& JsonObject::raw(const char* k, const std::string& json) {
    key(k).body_ += json;
    return *this;
}

std::string stats_line(const RunStats& s) {
    const bool comp = s.command == "compress";
    const std::uint64_t from = comp ? s.raw_bytes : s.compressed_bytes;
    const std::uint64_t to = comp ? s.compressed_bytes : s.raw_bytes;
    std::ostringstream o;
    o << "mans: " << s.command << ' ' << s.input << ": " << from << " -> " << to << " B, ratio "
      << fmt("%.3f", ratio(s.raw_bytes, s.compressed_bytes)) << ", "
      << fmt("%.3f", bits_per_value(s.compressed_bytes, s.elements)) << " bits/value, "
      << fmt("%.1f", mbps(s)) << " MB/s, backend " << s.backend << ", " << s.threads
      << " thread(s)";
    if (s.has_verified) o << (s.verified ? ", verified" : ", NOT verified");
    return o.str();
}

std::string stats_json(const RunStats& s) {
    std::ostringstream o;
    o << "{\"command\":\"" << json_escape(s.command) << "\""
      << ",\"input\":\"" << json_escape(s.input) << "\""
      << ",\"output\":\"" << json_escape(s.output) << "\""
      << ",\"dtype\":\"" << json_escape(s.dtype) << "\""
      << ",\"elements\":" << s.elements << ",\"raw_bytes\":" << s.raw_bytes
      << ",\"compressed_bytes\":" << s.compressed_bytes
      << ",\"ratio\":" << json_number("%.6g", ratio(s.raw_bytes, s.compressed_bytes))
      << ",\"bits_per_value\":"
      << json_number("%.6g", bits_per_value(s.compressed_bytes, s.elements)) << ",\""
      << (s.command == "compress" ? "compress_MBps" : "decompress_MBps")
      << "\":" << json_number("%.6g", mbps(s)) << ",\"seconds\":" << json_number("%.9f", s.seconds)
      << ",\"threads\":" << s.threads << ",\"backend\":\"" << json_escape(s.backend) << "\"";
    if (s.has_verified) o << ",\"verified\":" << (s.verified ? "true" : "false");
    o << "}";
    return o.str();
}

std::string info_text(const std::string& input, const mans::FrameInfo& fi) {
    const char* dt = mans::dtype_name(static_cast<mans::DType>(fi.dtype));
    std::ostringstream o;
    o << input << ":\n"
      << "  format version    " << fi.format_version << "\n"
      << "  codec             " << fi.codec << " (" << codec_name(fi.codec) << ")\n"
      << "  dtype             " << (dt ? dt : "?") << "\n"
      << "  elements          " << fi.element_count << "\n"
      << "  raw bytes         " << fi.raw_bytes << "\n";
    if (fi.rank > 0) o << "  shape             " << shape_string(fi) << " (rank " << fi.rank << ")\n";
    o << "  block size        " << fi.block_bytes << " B\n"
      << "  block count       " << fi.block_count << "\n"
      << "  compressed bytes  " << fi.compressed_bytes << "\n"
      << "  ratio             " << fmt("%.3f", ratio(fi.raw_bytes, fi.compressed_bytes)) << "\n"
      << "  bits/value        "
      << fmt("%.3f", bits_per_value(fi.compressed_bytes, fi.element_count)) << "\n";
    return o.str();
}

std::string info_json(const std::string& input, const mans::FrameInfo& fi) {
    const char* dt = mans::dtype_name(static_cast<mans::DType>(fi.dtype));
    std::ostringstream o;
    o << "{\"command\":\"info\",\"input\":\"" << json_escape(input) << "\""
      << ",\"format_version\":" << fi.format_version << ",\"codec\":" << fi.codec
      << ",\"codec_name\":\"" << codec_name(fi.codec) << "\""
      << ",\"dtype\":\"" << (dt ? dt : "?") << "\""
      << ",\"elements\":" << fi.element_count << ",\"raw_bytes\":" << fi.raw_bytes
      << ",\"rank\":" << fi.rank << ",\"dims\":[";
    for (std::uint32_t d = 0; d < fi.rank && d < 4; ++d) o << (d ? "," : "") << fi.dims[d];
    o << "],\"block_bytes\":" << fi.block_bytes << ",\"block_count\":" << fi.block_count
      << ",\"compressed_bytes\":" << fi.compressed_bytes
      << ",\"ratio\":" << json_number("%.6g", ratio(fi.raw_bytes, fi.compressed_bytes))
      << ",\"bits_per_value\":"
      << json_number("%.6g", bits_per_value(fi.compressed_bytes, fi.element_count)) << "}";
    return o.str();
}

// ---------------------------------------------------------------- Progress

Progress::~Progress() { stop(); }

void Progress::start(std::uint64_t bytes) {
    if (running_ || bytes <= kThresholdBytes || !::isatty(STDERR_FILENO)) return;
    running_ = true;
    stop_ = false;
    phase_start_ = std::chrono::steady_clock::now();
    thread_ = std::thread([this] { loop(); });
}

void Progress::phase(const std::string& label) {
    if (!running_) return;
    std::lock_guard<std::mutex> lk(mu_);
    label_ = label;
    permille_ = -1;
    phase_start_ = std::chrono::steady_clock::now();
}

void Progress::set_fraction(double f) {
    if (!running_) return;
    if (f < 0) f = 0;
    if (f > 1) f = 1;
    permille_ = static_cast<int>(f * 1000.0);
}

void Progress::stop() {
    if (!running_) return;
    {
        std::lock_guard<std::mutex> lk(mu_);
        stop_ = true;
    }
    cv_.notify_all();
    if (thread_.joinable()) thread_.join();
    running_ = false;
    std::fputs("\r\033[K", stderr);
    std::fflush(stderr);
}

void Progress::loop() {
    std::unique_lock<std::mutex> lk(mu_);
    while (!stop_) {
        draw();
        cv_.wait_for(lk, std::chrono::milliseconds(100));
    }
}

// Called with mu_ held.
void Progress::draw() {
    static const char spin[] = "|/-\\";
    const double el = std::chrono::duration<double>(std::chrono::steady_clock::now() - phase_start_).count();
    const int pm = permille_;
    char line[160];
    if (pm >= 0)
        std::snprintf(line, sizeof line, "\r\033[Kmans: %s %5.1f%%  %.1fs", label_.c_str(), pm / 10.0, el);
    else
        std::snprintf(line, sizeof line, "\r\033[Kmans: %s %c  %.1fs", label_.c_str(), spin[tick_ % 4], el);
    ++tick_;
    std::fputs(line, stderr);
    std::fflush(stderr);
}

}  // namespace mans_cli
