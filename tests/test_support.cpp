// test_support.cpp - see test_support.hpp.
#include "test_support.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <random>

#include <catch2/catch.hpp>
#include <xxhash.h>

#include "prism/codes.hpp"  // kMaxCode

#ifndef MANS_SHARED_DATA_DIR
#define MANS_SHARED_DATA_DIR ""
#endif
#ifndef MANS_DATASETS_CACHE_DIR
#define MANS_DATASETS_CACHE_DIR ""
#endif

namespace mans_test {

namespace fs = std::filesystem;

namespace {

struct TypeRange {
    unsigned bytes;
    bool is_signed;
    std::int64_t lo, hi;  // clamp range in the int64 domain (u64 capped at INT64_MAX)
};

TypeRange range_of(mans::DType t) {
    constexpr std::int64_t i64min = std::numeric_limits<std::int64_t>::min();
    constexpr std::int64_t i64max = std::numeric_limits<std::int64_t>::max();
    switch (t) {
        case mans::DType::u8: return {1, false, 0, 255};
        case mans::DType::u16: return {2, false, 0, 65535};
        case mans::DType::u32: return {4, false, 0, 4294967295ll};
        case mans::DType::u64: return {8, false, 0, i64max};
        case mans::DType::i16: return {2, true, -32768, 32767};
        case mans::DType::i32: return {4, true, -2147483648ll, 2147483647ll};
        case mans::DType::i64: return {8, true, i64min, i64max};
    }
    return {0, false, 0, 0};
}

// Stores the low `bytes` bytes of v (two's complement) little-endian.
void put(Bytes& out, std::size_t i, std::uint64_t v, unsigned bytes) {
    for (unsigned b = 0; b < bytes; ++b) out[i * bytes + b] = static_cast<std::uint8_t>(v >> (8 * b));
}

std::int64_t clamp(std::int64_t v, const TypeRange& r) { return std::min(std::max(v, r.lo), r.hi); }

// Integer-only heavy-tailed two-sided noise: magnitude below 2^(base_bits + e)
// with e geometric (p = 1/2), random sign. Portable (no <random> distributions).
std::int64_t lap(std::mt19937_64& rng, unsigned base_bits) {
    const std::uint64_t r = rng();
    unsigned e = 0;
    while (e < 20 && ((r >> e) & 1)) ++e;
    const unsigned bits = base_bits + e;
    const std::uint64_t mag = rng() & ((1ull << bits) - 1);
    return (r >> 63) ? -static_cast<std::int64_t>(mag) : static_cast<std::int64_t>(mag);
}

std::int64_t skew_center(mans::DType t) {
    switch (t) {
        case mans::DType::u8: return 100;
        case mans::DType::u16: return 1500;
        case mans::DType::u32: return 1000000;
        case mans::DType::u64: return 1000000000000ll;
        case mans::DType::i16: return -300;
        case mans::DType::i32: return -100000;
        case mans::DType::i64: return -1000000000000ll;
    }
    return 0;
}

// Base of the small-range distributions: near the top or bottom of the type
// (where wrap-around and sign-flip mistakes show).
std::uint64_t small_base(mans::DType t, std::uint64_t range) {
    switch (t) {
        case mans::DType::u8: return 0;
        case mans::DType::u16: return 65535 - range - 7;
        case mans::DType::u32: return 4294967295ull - range - 3000;
        case mans::DType::u64: return ~0ull - range - 65536;
        case mans::DType::i16: return static_cast<std::uint64_t>(std::int64_t{28000});
        case mans::DType::i32: return static_cast<std::uint64_t>(std::int64_t{-2147480000});
        case mans::DType::i64: return static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::min() + 5);
    }
    return 0;
}

std::int64_t quant_center(mans::DType t) {
    switch (t) {
        case mans::DType::u8: return 128;
        case mans::DType::i16: return 0;
        default: return 32768;
    }
}

std::int64_t walk_start(mans::DType t) {
    const TypeRange r = range_of(t);
    if (r.is_signed) return 0;
    return r.bytes == 8 ? (1ll << 62) : (r.hi / 2);
}

}  // namespace

const char* dist_name(Dist d) {
    switch (d) {
        case Dist::constant: return "constant";
        case Dist::random_full: return "random_full";
        case Dist::skewed: return "skewed";
        case Dist::small_range_2100: return "small_range_2100";
        case Dist::small_range_4000: return "small_range_4000";
        case Dist::quant_runs: return "quant_runs";
        case Dist::random_walk: return "random_walk";
        case Dist::sorted_indices: return "sorted_indices";
        case Dist::sparse_values: return "sparse_values";
    }
    return "?";
}

Bytes generate(mans::DType dtype, Dist d, std::size_t n, std::uint64_t seed) {
    const TypeRange tr = range_of(dtype);
    const unsigned esize = tr.bytes;
    Bytes out(n * esize);
    std::mt19937_64 rng(seed * 0x9E3779B97F4A7C15ull + static_cast<unsigned>(d) * 131 +
                        static_cast<unsigned>(dtype));
    switch (d) {
        case Dist::constant: {
            const std::uint64_t v = rng();
            for (std::size_t i = 0; i < n; ++i) put(out, i, v, esize);
            break;
        }
        case Dist::random_full:
            for (std::size_t i = 0; i < n; ++i) put(out, i, rng(), esize);
            break;
        case Dist::skewed: {
            const std::int64_t c = skew_center(dtype);
            for (std::size_t i = 0; i < n; ++i)
                put(out, i, static_cast<std::uint64_t>(clamp(c + lap(rng, 3), tr)), esize);
            break;
        }
        case Dist::small_range_2100:
        case Dist::small_range_4000: {
            std::uint64_t range = d == Dist::small_range_2100 ? 2100 : 4000;
            if (esize == 1) range = 256;
            const std::uint64_t base = small_base(dtype, range);
            for (std::size_t i = 0; i < n; ++i) put(out, i, base + rng() % range, esize);
            break;
        }
        case Dist::quant_runs: {
            const std::int64_t q = quant_center(dtype);
            std::size_t i = 0;
            while (i < n) {
                const std::size_t run = 1 + rng() % 400;
                for (std::size_t k = 0; k < run && i < n; ++k, ++i)
                    put(out, i, static_cast<std::uint64_t>(q), esize);
                const std::size_t noisy = 1 + rng() % 60;
                for (std::size_t k = 0; k < noisy && i < n; ++k, ++i)
                    put(out, i, static_cast<std::uint64_t>(clamp(q + lap(rng, 2), tr)), esize);
            }
            break;
        }
        case Dist::random_walk: {
            std::uint64_t x = static_cast<std::uint64_t>(walk_start(dtype));
            for (std::size_t i = 0; i < n; ++i) {
                x += static_cast<std::uint64_t>(lap(rng, 2));  // wraps modulo 2^B on store
                put(out, i, x, esize);
            }
            break;
        }
        case Dist::sparse_values: {
            const std::int64_t q = quant_center(dtype);
            const std::int64_t step = esize == 1 ? 7 : 37;
            std::size_t i = 0;
            while (i < n) {
                if (rng() % 64 == 0) {  // a run of the fill value 0
                    for (std::size_t k = 20 + rng() % 80; k > 0 && i < n; --k, ++i) put(out, i, 0, esize);
                    continue;
                }
                put(out, i++, static_cast<std::uint64_t>(clamp(q + step * lap(rng, 2), tr)), esize);
            }
            break;
        }
        case Dist::sorted_indices: {
            std::uint64_t x = rng() % 1000;
            const std::uint64_t gap = esize == 1 ? 2 : 16;
            for (std::size_t i = 0; i < n; ++i) {
                x += rng() % gap;
                put(out, i, x, esize);
            }
            break;
        }
    }
    return out;
}

Bytes generate_mixed(mans::DType dtype, std::size_t n, std::size_t chunk_elems, std::uint64_t seed) {
    const std::size_t esize = mans::dtype_size(dtype);
    Bytes out;
    out.reserve(n * esize);
    std::size_t k = 0;
    for (std::size_t first = 0; first < n; first += chunk_elems, ++k) {
        const std::size_t len = std::min(chunk_elems, n - first);
        const Dist d = kAllDists[k % (sizeof kAllDists / sizeof kAllDists[0])];
        const Bytes part = generate(dtype, d, len, seed + k);
        out.insert(out.end(), part.begin(), part.end());
    }
    return out;
}

std::string find_data_file(const std::string& name) {
    for (const char* dir : {MANS_SHARED_DATA_DIR, MANS_DATASETS_CACHE_DIR}) {
        if (!*dir) continue;
        std::error_code ec;
        const fs::path p = fs::path(dir) / name;
        if (fs::is_regular_file(p, ec)) return p.string();
    }
    return {};
}

std::vector<std::int32_t> real_field_codes(const std::string& name, double rel, std::size_t max_values) {
    const std::string path = find_data_file(name);
    if (path.empty()) {
        WARN("real field " << name << " not found; its codes are skipped");
        return {};
    }
    const Bytes raw = read_file(path, 4 * max_values);
    std::vector<float> x(raw.size() / 4);
    std::memcpy(x.data(), raw.data(), x.size() * 4);
    const auto usable = [](float v) { return std::isfinite(v) && std::fabs(v) <= 1e30f; };
    float lo = std::numeric_limits<float>::infinity(), hi = -lo;
    for (float v : x)
        if (usable(v)) lo = std::min(lo, v), hi = std::max(hi, v);
    const double eb = rel * (static_cast<double>(hi) - lo);
    const double top = mans::detail::prism::kMaxCode - 1;
    std::vector<std::int32_t> q(x.size(), 0);
    double prev = 0;
    for (std::size_t i = 0; i < x.size(); ++i) {
        if (!usable(x[i])) continue;
        const double r = eb > 0 ? std::nearbyint((x[i] - prev) / (2 * eb)) : 0;
        q[i] = static_cast<std::int32_t>(std::max(-top, std::min(top, r)));
        prev = x[i];
    }
    return q;
}

std::vector<std::string> list_shared_data_files() {
    std::vector<std::string> files;
    auto scan = [&](const char* d, std::uintmax_t max_size) {
        std::error_code ec;
        const fs::path dir(d);
        if (dir.empty() || !fs::is_directory(dir, ec)) return;
        for (const auto& e : fs::directory_iterator(dir, ec)) {
            if (!e.is_regular_file()) continue;
            const std::string name = e.path().filename().string();
            if (name == "MANIFEST.md" || name == "SHA256SUMS" || name[0] == '.') continue;
            if (e.file_size(ec) > max_size) continue;
            files.push_back(e.path().string());
        }
    };
    scan(MANS_SHARED_DATA_DIR, UINTMAX_MAX);
    // Without the shared data, the fields datasets/fetch.sh cached (small ones only).
    if (files.empty()) scan(MANS_DATASETS_CACHE_DIR, 8u << 20);
    std::sort(files.begin(), files.end());
    return files;
}

Bytes read_file(const std::string& path, std::size_t max_bytes) {
    std::ifstream f(path, std::ios::binary);
    if (!f) return {};
    f.seekg(0, std::ios::end);
    const std::size_t size = static_cast<std::size_t>(f.tellg());
    f.seekg(0, std::ios::beg);
    Bytes b(std::min(size, max_bytes));
    if (!b.empty() && !f.read(reinterpret_cast<char*>(b.data()), static_cast<std::streamsize>(b.size())))
        return {};
    return b;
}

bool write_file(const std::string& path, const Bytes& data) {
    std::ofstream f(path, std::ios::binary | std::ios::trunc);
    if (!f) return false;
    f.write(reinterpret_cast<const char*>(data.data()), static_cast<std::streamsize>(data.size()));
    return static_cast<bool>(f);
}

Bytes exafel_like(std::size_t n, std::uint32_t seed) {
    Bytes out(2 * n);
    std::uint32_t s = seed;
    for (std::size_t i = 0; i < n; ++i) {
        s = s * 1664525u + 1013904223u;
        std::uint32_t v;
        if ((s >> 26) == 0) {  // 1 in 64: a photon hit
            v = 1500 + ((s >> 6) % 14000);
        } else {
            v = 1480 + ((s >> 16) % 41);
        }
        out[2 * i] = static_cast<std::uint8_t>(v);
        out[2 * i + 1] = static_cast<std::uint8_t>(v >> 8);
    }
    return out;
}

Bytes exafel_prefix(std::size_t max_bytes) {
    const std::string path = find_data_file("exafel_1024kB.u16");
    if (!path.empty()) {
        Bytes b = read_file(path, max_bytes);
        if (b.size() == max_bytes || (max_bytes == SIZE_MAX && !b.empty())) return b;
    }
    WARN("exafel_1024kB.u16 not found (MANS_SHARED_DATA_DIR=" << MANS_SHARED_DATA_DIR
                                                               << "); using a synthetic substitute");
    return exafel_like((max_bytes == SIZE_MAX ? 1048576 : max_bytes) / 2, 12345u);
}

std::uint64_t xxh3(const void* data, std::size_t size) { return XXH3_64bits(data, size); }

Bytes compress(const Bytes& raw, const mans::CompressConfig& cfg, mans::Errc* err) {
    Bytes out(mans::compress_bound(raw.size()));
    const mans::Result r = mans::compress(out.data(), out.size(), raw.data(), raw.size(), cfg);
    if (err) *err = r.code;
    out.resize(r ? r.size : 0);
    return out;
}

Bytes decompress(const Bytes& stream, std::size_t raw_cap, const mans::DecompressConfig& cfg,
                 mans::Errc* err) {
    Bytes out(raw_cap);
    const mans::Result r = mans::decompress(out.data(), out.size(), stream.data(), stream.size(), cfg);
    *err = r.code;
    out.resize(r ? r.size : 0);
    return out;
}

std::string hex64(std::uint64_t v) {
    char buf[17];
    std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(v));
    return buf;
}

}  // namespace mans_test
