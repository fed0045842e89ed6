// memtest.cpp - peak memory per input byte of both codecs, and the scale
// test (ctest large_prism): more than 4 GiB and 2^31 elements in one PRISM
// archive, with a full and a coarse retrieval, each within 2.5x its raw size.
//
// Every step runs in a child process (this executable, re-executed) so that
// its peak resident set (ru_maxrss from wait4) is that step's alone; the
// input is generated inside the step and counts, as a caller's would.
//
//   mans_memtest run                      all steps, checks the bounds (ctest)
//   mans_memtest prism-compress NZ NY NX REL ARCHIVE
//   mans_memtest prism-retrieve ARCHIVE NZ NY NX [REL]   (no REL: full)
//   mans_memtest mans-compress N STREAM  /  mans-decompress STREAM N
//
// Knobs of `run` (environment): MANS_LARGE_PRISM_DIMS (default
// 1025x1024x2048 = 2^31 + 2^21 f32, 8.0 GiB), MANS_LARGE_MANS_ELEMENTS
// (u16, default 2^31 + 4097), MANS_MEM_LIMIT (default 2.5),
// MANS_MEMTEST_DIR (default: the working directory) for the temporary
// archive and stream, MANS_SKIP_LARGE_TESTS=1 skips everything.
#include <omp.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "mans/mans.hpp"
#include "mans/prism.hpp"

namespace {

namespace prism = mans::prism;
using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

// A buffer whose pages are touched only when written (std::vector would
// zero them all, and a caller that allocates this way is the common case).
struct RawBuffer {
    std::unique_ptr<std::uint8_t[]> p;
    std::size_t n = 0;
    explicit RawBuffer(std::size_t bytes) : p(new std::uint8_t[bytes]), n(bytes) {}
};

// Smooth separable field plus a small hashed ripple (so that the finest
// codes are not all zero): the same values on every call, no table of N.
struct Field {
    std::uint64_t nz, ny, nx;
    std::vector<double> a, b, c, d;
    Field(std::uint64_t z, std::uint64_t y, std::uint64_t x) : nz(z), ny(y), nx(x), a(z), b(y), c(x), d(x) {
        for (std::uint64_t i = 0; i < z; ++i) a[i] = 20.0 * std::sin(0.0031 * static_cast<double>(i) + 0.4);
        for (std::uint64_t j = 0; j < y; ++j) b[j] = 7.0 * std::cos(0.0057 * static_cast<double>(j));
        for (std::uint64_t k = 0; k < x; ++k) {
            c[k] = 3.0 * std::sin(0.011 * static_cast<double>(k) + 1.0);
            d[k] = std::cos(0.0023 * static_cast<double>(k));
        }
    }
    float at(std::uint64_t i, std::uint64_t j, std::uint64_t k) const {
        std::uint64_t h = (i * ny + j) * nx + k;
        h = (h ^ (h >> 29)) * 0xbf58476d1ce4e5b9ull;
        h ^= h >> 32;
        const double ripple = static_cast<double>(h & 0xffff) / 65536.0 - 0.5;  // [-0.5, 0.5)
        return static_cast<float>(a[i] + b[j] * d[k] + c[k] + 0.05 * ripple);
    }
    std::uint64_t count() const { return nz * ny * nx; }
};

bool parse_dims(const char* text, std::uint64_t* z, std::uint64_t* y, std::uint64_t* x) {
    unsigned long long a = 0, b = 0, c = 0;
    if (std::sscanf(text, "%llux%llux%llu", &a, &b, &c) != 3 || !a || !b || !c) return false;
    *z = a, *y = b, *x = c;
    return true;
}

bool write_all(const std::string& path, const void* p, std::size_t n) {
    FILE* f = std::fopen(path.c_str(), "wb");
    if (!f) return false;
    const bool ok = std::fwrite(p, 1, n, f) == n;
    return std::fclose(f) == 0 && ok;
}

bool read_all(const std::string& path, std::vector<std::uint8_t>* out) {
    FILE* f = std::fopen(path.c_str(), "rb");
    if (!f) return false;
    std::fseek(f, 0, SEEK_END);
    const long n = std::ftell(f);
    std::fseek(f, 0, SEEK_SET);
    out->resize(static_cast<std::size_t>(n));
    const bool ok = std::fread(out->data(), 1, out->size(), f) == out->size();
    std::fclose(f);
    return ok;
}

// ---------------------------------------------------------------- steps

int prism_compress(std::uint64_t nz, std::uint64_t ny, std::uint64_t nx, double rel, const std::string& path) {
    const Field f(nz, ny, nx);
    const std::uint64_t n = f.count();
    RawBuffer raw(n * sizeof(float));
    auto* v = reinterpret_cast<float*>(raw.p.get());
#pragma omp parallel for schedule(static)
    for (std::int64_t i = 0; i < static_cast<std::int64_t>(nz); ++i)
        for (std::uint64_t j = 0; j < ny; ++j)
            for (std::uint64_t k = 0; k < nx; ++k)
                v[(static_cast<std::uint64_t>(i) * ny + j) * nx + k] = f.at(static_cast<std::uint64_t>(i), j, k);
    prism::CompressConfig cfg;
    cfg.rank = 3;
    cfg.dims[0] = nz, cfg.dims[1] = ny, cfg.dims[2] = nx;
    cfg.mode = prism::ErrorMode::relative;
    cfg.error_bound = rel;
    std::vector<std::uint8_t> archive;
    const auto t0 = Clock::now();
    const mans::Errc e = prism::compress(raw.p.get(), raw.n, cfg, &archive);
    const double secs = seconds_since(t0);
    if (e != mans::Errc::ok) {
        std::fprintf(stderr, "prism compress: %s\n", mans::errc_name(e));
        return 1;
    }
    std::printf("prism compress: %llu values, %zu B -> %zu B (ratio %.2f), %.1f s, %.1f MB/s\n",
                static_cast<unsigned long long>(n), raw.n, archive.size(),
                static_cast<double>(raw.n) / static_cast<double>(archive.size()), secs, raw.n / secs / 1e6);
    return write_all(path, archive.data(), archive.size()) ? 0 : 1;
}

// rel == 0: full retrieval. Checks every value against the field and the
// retrieval's own rigorous bound.
int prism_retrieve(const std::string& path, std::uint64_t nz, std::uint64_t ny, std::uint64_t nx, double rel) {
    mans::Errc e = mans::Errc::ok;
    std::unique_ptr<prism::Source> src = prism::file_source(path, &e);
    prism::Reader r;
    if (!src || (e = prism::Reader::open(std::move(src), &r)) != mans::Errc::ok) {
        std::fprintf(stderr, "open %s: %s\n", path.c_str(), mans::errc_name(e));
        return 1;
    }
    const prism::ArchiveInfo& info = r.info();
    if (info.rank != 3 || info.dims[0] != nz || info.dims[1] != ny || info.dims[2] != nx) {
        std::fprintf(stderr, "archive shape differs\n");
        return 1;
    }
    prism::Retrieval x;
    const auto t0 = Clock::now();
    e = r.retrieve(rel > 0 ? prism::Target::rel(rel) : prism::Target::full(), &x);
    const double secs = seconds_since(t0);
    if (e != mans::Errc::ok) {
        std::fprintf(stderr, "retrieve: %s\n", mans::errc_name(e));
        return 1;
    }
    const Field f(nz, ny, nx);
    const float* v = x.as<float>();
    double worst = 0;
#pragma omp parallel for schedule(static) reduction(max : worst)
    for (std::int64_t i = 0; i < static_cast<std::int64_t>(nz); ++i)
        for (std::uint64_t j = 0; j < ny; ++j)
            for (std::uint64_t k = 0; k < nx; ++k) {
                const std::uint64_t idx = (static_cast<std::uint64_t>(i) * ny + j) * nx + k;
                const double err = std::fabs(static_cast<double>(v[idx]) -
                                             static_cast<double>(f.at(static_cast<std::uint64_t>(i), j, k)));
                worst = std::max(worst, err);
            }
    const double bound = x.stats().max_abs_error_bound;
    const double requested = rel > 0 ? rel * (info.value_max - info.value_min) : info.abs_bound;
    std::printf("prism retrieve %s: %zu B, read %llu of %llu B, %.1f s, %.1f MB/s, max error %.4g "
                "(bound %.4g, requested %.4g)\n",
                rel > 0 ? "coarse" : "full", x.bytes(), static_cast<unsigned long long>(x.stats().bytes_read),
                static_cast<unsigned long long>(info.archive_bytes), secs, x.bytes() / secs / 1e6, worst, bound,
                requested);
    if (!(worst <= bound && worst <= requested)) {
        std::fprintf(stderr, "bound missed\n");
        return 1;
    }
    return 0;
}

// Detector-like u16: pedestal with noise and rare hits (from a fixed LCG).
int mans_compress(std::uint64_t n, const std::string& path) {
    RawBuffer raw(n * 2);
    auto* v = reinterpret_cast<std::uint16_t*>(raw.p.get());
#pragma omp parallel for schedule(static)
    for (std::int64_t blk = 0; blk < static_cast<std::int64_t>((n + 65535) / 65536); ++blk) {
        std::uint32_t s = 12345u + static_cast<std::uint32_t>(blk) * 2654435761u;
        const std::uint64_t first = static_cast<std::uint64_t>(blk) * 65536, last = std::min(n, first + 65536);
        for (std::uint64_t i = first; i < last; ++i) {
            s = s * 1664525u + 1013904223u;
            const unsigned noise = (s >> 24) & 15;
            v[i] = static_cast<std::uint16_t>(1500 + noise + (((s >> 8) & 1023) == 0 ? (s >> 12) & 4095 : 0));
        }
    }
    // The caller's stream buffer: compress_bound bytes, touched only where written.
    RawBuffer stream(mans::compress_bound(raw.n));
    mans::CompressConfig cfg;
    cfg.dtype = mans::DType::u16;
    const auto t0 = Clock::now();
    const mans::Result c = mans::compress(stream.p.get(), stream.n, raw.p.get(), raw.n, cfg);
    const double secs = seconds_since(t0);
    if (!c) {
        std::fprintf(stderr, "mans compress: %s\n", mans::errc_name(c.code));
        return 1;
    }
    std::printf("mans compress: %zu B -> %zu B (ratio %.2f), %.1f s, %.0f MB/s\n", raw.n, c.size,
                static_cast<double>(raw.n) / static_cast<double>(c.size), secs, raw.n / secs / 1e6);
    return write_all(path, stream.p.get(), c.size) ? 0 : 1;
}

int mans_decompress(const std::string& path, std::uint64_t n) {
    std::vector<std::uint8_t> stream;
    if (!read_all(path, &stream)) return 1;
    RawBuffer back(n * 2);
    const auto t0 = Clock::now();
    const mans::Result d = mans::decompress(back.p.get(), back.n, stream.data(), stream.size());
    const double secs = seconds_since(t0);
    if (!d || d.size != back.n) {
        std::fprintf(stderr, "mans decompress: %s\n", mans::errc_name(d.code));
        return 1;
    }
    std::printf("mans decompress: %zu B -> %zu B, %.1f s, %.0f MB/s\n", stream.size(), d.size, secs,
                d.size / secs / 1e6);
    return 0;
}

// ---------------------------------------------------------------- driver

std::string g_self;

// Runs this executable with args; returns its exit status and peak RSS in bytes.
int child(const std::vector<std::string>& args, std::uint64_t* peak) {
    std::fflush(stdout);
    const pid_t pid = fork();
    if (pid < 0) return -1;
    if (pid == 0) {
        std::vector<char*> argv;
        argv.push_back(const_cast<char*>(g_self.c_str()));
        for (const std::string& a : args) argv.push_back(const_cast<char*>(a.c_str()));
        argv.push_back(nullptr);
        execv(g_self.c_str(), argv.data());
        _exit(127);
    }
    int status = 0;
    struct rusage ru;
    std::memset(&ru, 0, sizeof ru);
    if (wait4(pid, &status, 0, &ru) != pid) return -1;
    *peak = static_cast<std::uint64_t>(ru.ru_maxrss) * 1024;
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

const char* env_or(const char* name, const char* fallback) {
    const char* v = std::getenv(name);
    return v && *v ? v : fallback;
}

// One step: runs it, prints its peak against `raw` bytes and checks the limit.
bool step(const char* name, const std::vector<std::string>& args, std::uint64_t raw, double limit) {
    std::uint64_t peak = 0;
    const int rc = child(args, &peak);
    const double per_byte = static_cast<double>(peak) / static_cast<double>(raw);
    // Fixed costs (binary, libraries, thread stacks, small tables): 64 MiB.
    const bool ok = rc == 0 && peak <= limit * static_cast<double>(raw) + (64u << 20);
    std::printf("%-22s peak %8.1f MiB = %.3f x %llu B raw  %s\n", name, peak / 1048576.0, per_byte,
                static_cast<unsigned long long>(raw), ok ? "ok" : rc ? "FAILED (exit status)" : "FAILED (memory)");
    std::fflush(stdout);
    return ok;
}

int run_all() {
    if (const char* skip = std::getenv("MANS_SKIP_LARGE_TESTS"); skip && *skip == '1') {
        std::printf("MANS_SKIP_LARGE_TESTS=1: skipped\n");
        return 0;
    }
    std::uint64_t nz = 0, ny = 0, nx = 0;
    if (!parse_dims(env_or("MANS_LARGE_PRISM_DIMS", "1025x1024x2048"), &nz, &ny, &nx)) {
        std::fprintf(stderr, "MANS_LARGE_PRISM_DIMS: expected NZxNYxNX\n");
        return 2;
    }
    const std::uint64_t mans_n = std::strtoull(env_or("MANS_LARGE_MANS_ELEMENTS", "2147487745"), nullptr, 10);
    const double limit = std::strtod(env_or("MANS_MEM_LIMIT", "2.5"), nullptr);
    const std::string dir = env_or("MANS_MEMTEST_DIR", ".");
    const std::string archive = dir + "/memtest_" + std::to_string(getpid()) + ".prism";
    const std::string stream = dir + "/memtest_" + std::to_string(getpid()) + ".mans";
    const std::string z = std::to_string(nz), y = std::to_string(ny), x = std::to_string(nx);
    const std::uint64_t prism_raw = nz * ny * nx * 4;
    std::printf("PRISM %sx%sx%s f32 (%llu values, %.2f GiB); MANS %llu u16 (%.2f GiB); limit %.2f x raw + 64 MiB\n",
                z.c_str(), y.c_str(), x.c_str(), static_cast<unsigned long long>(nz * ny * nx),
                prism_raw / 1073741824.0, static_cast<unsigned long long>(mans_n), mans_n * 2 / 1073741824.0,
                limit);
    bool ok = true;
    ok &= step("prism compress", {"prism-compress", z, y, x, "1e-4", archive}, prism_raw, limit);
    if (ok) {
        ok &= step("prism full retrieval", {"prism-retrieve", archive, z, y, x}, prism_raw, limit);
        ok &= step("prism coarse (1e-2)", {"prism-retrieve", archive, z, y, x, "1e-2"}, prism_raw, limit);
    }
    std::remove(archive.c_str());
    if (mans_n) {
        const std::string n = std::to_string(mans_n);
        const bool c = step("mans compress", {"mans-compress", n, stream}, mans_n * 2, limit);
        ok &= c;
        if (c) ok &= step("mans decompress", {"mans-decompress", stream, n}, mans_n * 2, limit);
        std::remove(stream.c_str());
    }
    std::printf("%s\n", ok ? "all steps within the limit" : "FAILED");
    return ok ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
    char self[4096];
    const ssize_t len = readlink("/proc/self/exe", self, sizeof self - 1);
    g_self = len > 0 ? std::string(self, static_cast<std::size_t>(len)) : argv[0];
    const std::string cmd = argc > 1 ? argv[1] : "run";
    std::uint64_t z = 0, y = 0, x = 0;
    if (cmd == "run") return run_all();
    if (cmd == "prism-compress" && argc == 7) {
        z = std::strtoull(argv[2], nullptr, 10), y = std::strtoull(argv[3], nullptr, 10),
        x = std::strtoull(argv[4], nullptr, 10);
        return prism_compress(z, y, x, std::strtod(argv[5], nullptr), argv[6]);
    }
    if (cmd == "prism-retrieve" && (argc == 6 || argc == 7)) {
        z = std::strtoull(argv[3], nullptr, 10), y = std::strtoull(argv[4], nullptr, 10),
        x = std::strtoull(argv[5], nullptr, 10);
        return prism_retrieve(argv[2], z, y, x, argc == 7 ? std::strtod(argv[6], nullptr) : 0.0);
    }
    if (cmd == "mans-compress" && argc == 4) return mans_compress(std::strtoull(argv[2], nullptr, 10), argv[3]);
    if (cmd == "mans-decompress" && argc == 4) return mans_decompress(argv[2], std::strtoull(argv[3], nullptr, 10));
    std::fprintf(stderr, "usage: mans_memtest run | prism-compress NZ NY NX REL ARCHIVE | "
                         "prism-retrieve ARCHIVE NZ NY NX [REL] | mans-compress N STREAM | mans-decompress STREAM N\n");
    return 2;
}
