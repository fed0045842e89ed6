// report.hpp - what the mans CLI prints about a run: the --stats line, the
// --json object, the `info` text and the stderr progress indicator.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <string>
#include <thread>

#include "mans/mans.hpp"

namespace mans_cli {

// Measurements of one compress or decompress run.
struct RunStats {
    std::string command;  // "compress" | "decompress"
    std::string input;    // as displayed ("<stdin>" for "-")
    std::string output;   // as displayed ("<stdout>" for "-")
    std::string dtype;
    std::uint64_t elements = 0;
    std::uint64_t raw_bytes = 0;
    std::uint64_t compressed_bytes = 0;
    double seconds = 0;  // library call only
    int threads = 0;
    std::string backend;  // e.g. "cpu (avx2)"
    bool has_verified = false;
    bool verified = false;
};

double ratio(std::uint64_t raw, std::uint64_t compressed);
double bits_per_value(std::uint64_t compressed, std::uint64_t elements);

// "mans: compress a.u16: 1048576 -> 526401 B, ratio 1.992, ..." (no newline).
std::string stats_line(const RunStats& s);
// One JSON object on one line (no newline).
std::string stats_json(const RunStats& s);

// `mans info` output.
std::string info_text(const std::string& input, const mans::FrameInfo& fi);
std::string info_json(const std::string& input, const mans::FrameInfo& fi);

std::string json_escape(const std::string& s);
std::string shape_string(const mans::FrameInfo& fi);

// The shortest "%.{15,16,17}g" text that reads back as exactly v.
std::string shortest_double(double v);

// One JSON object built field by field, in insertion order:
//   JsonObject j; j.str("codec", "prism").uint("elements", n).num("psnr", p);
//   j.text() == "{\"codec\":\"prism\",\"elements\":313344,\"psnr\":84.2}"
// Non-finite numbers become null (JSON has no inf/nan).
class JsonObject {
public:
    JsonObject& str(const char* key, const std::string& v);
    JsonObject& uint(const char* key, std::uint64_t v);
    JsonObject& num(const char* key, double v);  // shortest exact text
    JsonObject& boolean(const char* key, bool v);
    JsonObject& null(const char* key);
    JsonObject& raw(const char* key, const std::string& json);  // already JSON
    std::string text() const { return "{" + body_ + "}"; }

private:
    JsonObject& key(const char* k);
    std::string body_;
};

// JSON number (shortest exact text) or null when not finite.
std::string json_double(double v);

// A one-line progress indicator on stderr, drawn by a watcher thread every
// 100 ms. It draws nothing unless start() was called, and start() does nothing
// unless stderr is a terminal and the data is larger than kThresholdBytes.
// With a known fraction it shows "reading  35%", otherwise a spinner and the
// elapsed time of the phase (the library calls are one shot).
class Progress {
public:
    static constexpr std::uint64_t kThresholdBytes = std::uint64_t(64) << 20;

    Progress() = default;
    ~Progress();
    Progress(const Progress&) = delete;
    Progress& operator=(const Progress&) = delete;

    // Enables the indicator if stderr is a tty and bytes > kThresholdBytes.
    void start(std::uint64_t bytes);
    bool active() const { return running_; }
    // A new phase; fraction unknown until set_fraction() is called.
    void phase(const std::string& label);
    void set_fraction(double f);  // 0..1
    // Stops the thread and erases the line. Safe to call more than once.
    void stop();

private:
    void loop();
    void draw();

    bool running_ = false;
    std::thread thread_;
    std::mutex mu_;
    std::condition_variable cv_;
    bool stop_ = false;
    std::string label_;
    std::chrono::steady_clock::time_point phase_start_;
    std::atomic<int> permille_{-1};
    unsigned tick_ = 0;
};

}  // namespace mans_cli
