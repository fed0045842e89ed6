// test_golden.cpp - golden vectors that pin the stream bytes.
//
// tests/golden/golden.tsv lists, for each named input, the XXH3-64 hash and
// size of the raw input and of its compressed stream; tests/golden/NAME.mans
// is the committed stream itself. Two checks:
//   * encoder: regenerating each input and compressing it today gives the
//     pinned stream bytes (catches unintended format/encoder changes);
//   * decoder: every committed .mans file still decodes to the pinned raw
//     hash (old streams stay readable after the encoder changes).
// MANS_REGEN_GOLDEN=1 rewrites golden.tsv and the .mans files; see
// tests/golden/README.md for when that is allowed.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "backend.hpp"
#include "core/frame.hpp"
#include "mans/mans.hpp"
#include "mapping/block_codec.hpp"
#include "test_support.hpp"

#ifndef MANS_GOLDEN_DIR
#error "MANS_GOLDEN_DIR must point at tests/golden"
#endif

using namespace mans_test;
namespace fs = std::filesystem;

namespace {

// Golden inputs use their own tiny generators (not test_support's), so that
// editing the shared generators can never move a golden input.
struct SplitMix {
    std::uint64_t s;
    std::uint64_t next() {
        std::uint64_t z = (s += 0x9E3779B97F4A7C15ull);
        z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
        z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
        return z ^ (z >> 31);
    }
};

template <typename T>
void put(Bytes& b, T v) {
    for (unsigned i = 0; i < sizeof(T); ++i) b.push_back(static_cast<std::uint8_t>(static_cast<std::uint64_t>(v) >> (8 * i)));
}

Bytes gen_exafel_like(std::size_t n) {
    Bytes b;
    std::uint32_t s = 20240601u;  // fixed LCG (Numerical Recipes constants)
    for (std::size_t i = 0; i < n; ++i) {
        s = s * 1664525u + 1013904223u;
        const std::uint32_t v = (s >> 26) == 0 ? 1500 + ((s >> 6) % 14000) : 1480 + ((s >> 16) % 41);
        put<std::uint16_t>(b, static_cast<std::uint16_t>(v));
    }
    return b;
}

Bytes gen_i32_walk(std::size_t n) {
    Bytes b;
    SplitMix r{7};
    std::int32_t x = -5000;
    for (std::size_t i = 0; i < n; ++i) {
        const std::uint64_t z = r.next();
        x += static_cast<std::int32_t>(z % 61) - 30;
        if ((z >> 60) == 0) x += static_cast<std::int32_t>((z >> 20) % 4001) - 2000;  // occasional jump
        put<std::int32_t>(b, x);
    }
    return b;
}

Bytes gen_u8_runs(std::size_t n) {
    Bytes b;
    SplitMix r{8};
    while (b.size() < n) {
        const std::uint64_t z = r.next();
        const std::uint8_t v = (z & 3) == 0 ? static_cast<std::uint8_t>(z >> 8) : static_cast<std::uint8_t>((z >> 8) % 4);
        const std::size_t run = 1 + (z >> 32) % 90;
        for (std::size_t k = 0; k < run && b.size() < n; ++k) b.push_back(v);
    }
    return b;
}

Bytes gen_u64_wide(std::size_t n) {
    Bytes b;
    SplitMix r{9};
    for (std::size_t i = 0; i < n; ++i) {
        const std::uint64_t z = r.next();
        const std::uint64_t v = (z & 31) == 0 ? r.next() : (1ull << 60) + (z >> 24);  // 40-bit spread, rare outliers
        put<std::uint64_t>(b, v);
    }
    return b;
}

Bytes gen_u16_constant(std::size_t n) {
    Bytes b;
    for (std::size_t i = 0; i < n; ++i) put<std::uint16_t>(b, 0x1234);
    return b;
}

Bytes gen_i16_small_range(std::size_t n, std::uint64_t range) {
    Bytes b;
    SplitMix r{10 + range};
    for (std::size_t i = 0; i < n; ++i) put<std::int16_t>(b, static_cast<std::int16_t>(-1000 + static_cast<std::int64_t>(r.next() % range)));
    return b;
}

Bytes gen_quant_u16(std::size_t n) {
    Bytes b;
    SplitMix r{11};
    while (b.size() < 2 * n) {
        const std::uint64_t z = r.next();
        const std::size_t run = 1 + (z % 300);
        for (std::size_t k = 0; k < run && b.size() < 2 * n; ++k) put<std::uint16_t>(b, 32768);
        const std::size_t noisy = 1 + ((z >> 16) % 40);
        for (std::size_t k = 0; k < noisy && b.size() < 2 * n; ++k) {
            const std::uint64_t y = r.next();
            const int d = static_cast<int>(y % 9) - 4;
            put<std::uint16_t>(b, static_cast<std::uint16_t>(32768 + d));
        }
    }
    return b;
}

// Values within a few hundred of a center (the range ADM can code).
template <typename T>
Bytes gen_narrow(std::size_t n, std::int64_t center, std::uint64_t seed) {
    Bytes b;
    SplitMix r{seed};
    for (std::size_t i = 0; i < n; ++i) {
        const std::uint64_t z = r.next();
        std::int64_t d = static_cast<std::int64_t>(z % 61) - 30;
        if ((z >> 58) == 0) d = static_cast<std::int64_t>((z >> 20) % 601) - 300;
        put<T>(b, static_cast<T>(center + d));
    }
    return b;
}

// u32 quantization-code-like values with holes: center + 37 * small step,
// and runs of 0 (a fill value). Few distinct values over a wide range: the
// dictionary mapping's case.
Bytes gen_u32_sparse(std::size_t n) {
    Bytes b;
    SplitMix r{77};
    std::uint32_t fill_left = 0;
    for (std::size_t i = 0; i < n; ++i) {
        const std::uint64_t z = r.next();
        if (fill_left == 0 && (z & 63) == 0) fill_left = static_cast<std::uint32_t>(20 + (z >> 8) % 80);
        if (fill_left) {
            --fill_left;
            put<std::uint32_t>(b, 0);
            continue;
        }
        const std::int64_t step = static_cast<std::int64_t>((z >> 16) % 9) - 4 + static_cast<std::int64_t>((z >> 40) % 3) - 1;
        put<std::uint32_t>(b, static_cast<std::uint32_t>((1ll << 31) + 37 * step));
    }
    return b;
}

Bytes public_compress(const Bytes& raw, mans::DType dt, std::size_t block_bytes = 0, std::uint32_t rank = 0,
                      std::uint64_t d0 = 0, std::uint64_t d1 = 0) {
    mans::CompressConfig cfg;
    cfg.dtype = dt;
    cfg.block_bytes = block_bytes;
    cfg.rank = rank;
    cfg.dims[0] = d0;
    cfg.dims[1] = d1;
    mans::Errc e;
    Bytes s = compress(raw, cfg, &e);
    REQUIRE(e == mans::Errc::ok);
    return s;
}

// A one-block frame whose block uses a forced mapping (the public API cannot
// force one), so that every block mode has a committed stream.
Bytes forced_mode_frame(const Bytes& raw, mans::DType dt, mans::detail::ModeHint hint,
                        mans::detail::BlockMode expect) {
    using namespace mans::detail;
    const std::size_t n = raw.size() / mans::dtype_size(dt);
    BlockScratch sc;
    std::vector<std::uint8_t> payload;
    encode_block(dt, raw.data(), n, cpu_backend().kernels(true), sc, payload, hint);
    INFO("forced mode " << int(expect));
    REQUIRE(payload.size() > 0);
    REQUIRE(payload[0] == static_cast<std::uint8_t>(expect));  // not a stored fallback
    FrameHeader h;
    h.dtype = dt;
    h.count = n;
    h.block_elems = static_cast<std::uint32_t>(n);
    const IndexEntry entry{static_cast<std::uint32_t>(payload.size()), checksum32(raw.data(), raw.size())};
    Bytes out(h.prefix_bytes());
    write_frame_prefix(h, &entry, out.data());
    out.insert(out.end(), payload.begin(), payload.end());
    return out;
}

struct GoldenCase {
    std::string name;
    mans::DType dtype;
    std::function<Bytes()> input;                     // empty Bytes = input unavailable
    std::function<Bytes(const Bytes&)> make_stream;  // today's encoder
};

std::vector<GoldenCase> golden_cases() {
    using mans::DType;
    using mans::detail::BlockMode;
    using mans::detail::ModeHint;
    std::vector<GoldenCase> v;
    v.push_back({"u16_exafel_like_3000", DType::u16, [] { return gen_exafel_like(3000); },
                 [](const Bytes& r) { return public_compress(r, DType::u16); }});
    v.push_back({"u16_exafel_like_3000_b4096", DType::u16, [] { return gen_exafel_like(3000); },
                 [](const Bytes& r) { return public_compress(r, DType::u16, 4096); }});
    v.push_back({"i32_random_walk_2000_dims40x50", DType::i32, [] { return gen_i32_walk(2000); },
                 [](const Bytes& r) { return public_compress(r, DType::i32, 0, 2, 40, 50); }});
    v.push_back({"u8_runs_5000", DType::u8, [] { return gen_u8_runs(5000); },
                 [](const Bytes& r) { return public_compress(r, DType::u8); }});
    v.push_back({"u64_wide_1000", DType::u64, [] { return gen_u64_wide(1000); },
                 [](const Bytes& r) { return public_compress(r, DType::u64); }});
    v.push_back({"u16_constant_4096", DType::u16, [] { return gen_u16_constant(4096); },
                 [](const Bytes& r) { return public_compress(r, DType::u16); }});
    v.push_back({"i16_small_range_2100_3000", DType::i16, [] { return gen_i16_small_range(3000, 2100); },
                 [](const Bytes& r) { return public_compress(r, DType::i16); }});
    v.push_back({"u16_quant_runs_4000", DType::u16, [] { return gen_quant_u16(4000); },
                 [](const Bytes& r) { return public_compress(r, DType::u16); }});
    v.push_back({"i16_constant_1000", DType::i16,
                 [] {
                     Bytes b;
                     for (int i = 0; i < 1000; ++i) put<std::int16_t>(b, -7);
                     return b;
                 },
                 [](const Bytes& r) { return public_compress(r, DType::i16); }});
    v.push_back({"u32_sparse_values_3000", DType::u32, [] { return gen_u32_sparse(3000); },
                 [](const Bytes& r) { return public_compress(r, DType::u32); }});
    v.push_back({"u16_empty", DType::u16, [] { return Bytes{}; },
                 [](const Bytes& r) { return public_compress(r, DType::u16); }});
    // Every block mapping, forced, in a one-block frame.
    struct Forced {
        const char* name;
        DType dt;
        ModeHint hint;
        BlockMode mode;
        std::function<Bytes()> input;
    };
    const Forced forced[] = {
        {"mode_stored_u16", DType::u16, ModeHint::stored, BlockMode::stored, [] { return gen_exafel_like(700); }},
        {"mode_constant_u16", DType::u16, ModeHint::constant, BlockMode::constant, [] { return gen_u16_constant(700); }},
        {"mode_token_center_u16", DType::u16, ModeHint::token_center, BlockMode::token, [] { return gen_exafel_like(2000); }},
        {"mode_token_delta_i32", DType::i32, ModeHint::token_delta, BlockMode::token, [] { return gen_i32_walk(1500); }},
        {"mode_adm_u16", DType::u16, ModeHint::adm, BlockMode::adm, [] { return gen_narrow<std::uint16_t>(2000, 1500, 12); }},
        {"mode_adm_i32", DType::i32, ModeHint::adm, BlockMode::adm, [] { return gen_narrow<std::int32_t>(1500, -70000, 13); }},
        {"mode_byte_planes_u64", DType::u64, ModeHint::byte_planes, BlockMode::byte_planes, [] { return gen_u64_wide(800); }},
        {"mode_byte_planes_u8", DType::u8, ModeHint::byte_planes, BlockMode::byte_planes, [] { return gen_u8_runs(3000); }},
        {"mode_dictionary_u32", DType::u32, ModeHint::dictionary, BlockMode::dictionary, [] { return gen_u32_sparse(2500); }},
        {"mode_token_repeat_u32", DType::u32, ModeHint::token_repeat, BlockMode::token, [] { return gen_u32_sparse(2500); }},
    };
    for (const Forced& f : forced) {
        const DType dt = f.dt;
        const ModeHint hint = f.hint;
        const BlockMode mode = f.mode;
        v.push_back({f.name, dt, f.input, [=](const Bytes& r) { return forced_mode_frame(r, dt, hint, mode); }});
    }
    // A real prefix, when the shared data is present.
    v.push_back({"exafel_prefix_8192", DType::u16,
                 [] {
                     const std::string p = find_data_file("exafel_1024kB.u16");
                     return p.empty() ? Bytes{} : read_file(p, 8192);
                 },
                 [](const Bytes& r) { return public_compress(r, DType::u16); }});
    return v;
}

struct Row {
    std::string name;
    std::uint64_t raw_bytes = 0, raw_hash = 0, stream_bytes = 0, stream_hash = 0;
};

const char* kTsvHeader = "# name\traw_bytes\traw_xxh3\tstream_bytes\tstream_xxh3";

std::map<std::string, Row> read_tsv(const std::string& path) {
    std::map<std::string, Row> rows;
    std::ifstream f(path);
    std::string line;
    while (std::getline(f, line)) {
        if (line.empty() || line[0] == '#') continue;
        std::istringstream is(line);
        Row r;
        std::string rh, sh;
        if (!(is >> r.name >> r.raw_bytes >> rh >> r.stream_bytes >> sh)) continue;
        r.raw_hash = std::stoull(rh, nullptr, 16);
        r.stream_hash = std::stoull(sh, nullptr, 16);
        rows[r.name] = r;
    }
    return rows;
}

std::string golden_path(const std::string& file) { return (fs::path(MANS_GOLDEN_DIR) / file).string(); }

bool regen_requested() {
    const char* e = std::getenv("MANS_REGEN_GOLDEN");
    return e && std::string(e) == "1";
}

const char* kHowTo =
    "If this change of the stream bytes is intended, read tests/golden/README.md: while format version 1 is "
    "unreleased, regenerate with `MANS_REGEN_GOLDEN=1 ./build/tests/mans_tests \"[golden]\"`; after release, "
    "bump MANS_FORMAT_VERSION and keep the old .mans files decodable.";

}  // namespace

TEST_CASE("golden: regenerate on request (MANS_REGEN_GOLDEN=1)", "[golden]") {
    if (!regen_requested()) return;
    std::ostringstream tsv;
    tsv << "# Golden vectors of tests/test_golden.cpp (XXH3-64, hex). Regenerated with MANS_REGEN_GOLDEN=1,\n"
        << "# library " << mans_version_string() << ", stream format version " << mans_format_version() << ".\n"
        << kTsvHeader << "\n";
    // Remove stale streams first.
    for (const auto& e : fs::directory_iterator(MANS_GOLDEN_DIR))
        if (e.path().extension() == ".mans") fs::remove(e.path());
    for (const GoldenCase& c : golden_cases()) {
        const Bytes raw = c.input();
        if (raw.empty() && c.name != "u16_empty") FAIL("regeneration needs the input of " << c.name);
        const Bytes stream = c.make_stream(raw);
        REQUIRE(stream.size() < 10000);
        REQUIRE(write_file(golden_path(c.name + ".mans"), stream));
        tsv << c.name << '\t' << raw.size() << '\t' << hex64(xxh3(raw)) << '\t' << stream.size() << '\t'
            << hex64(xxh3(stream)) << '\n';
        std::printf("  golden %-34s %6zu -> %6zu bytes\n", c.name.c_str(), raw.size(), stream.size());
    }
    std::ofstream f(golden_path("golden.tsv"), std::ios::trunc);
    f << tsv.str();
    REQUIRE(static_cast<bool>(f));
    WARN("golden files regenerated in " << MANS_GOLDEN_DIR);
}

TEST_CASE("golden: today's encoder reproduces the pinned streams", "[golden]") {
    const auto rows = read_tsv(golden_path("golden.tsv"));
    REQUIRE(!rows.empty());
    for (const GoldenCase& c : golden_cases()) {
        INFO(c.name);
        const auto it = rows.find(c.name);
        if (it == rows.end()) {
            FAIL_CHECK("no row in golden.tsv for " << c.name << ". " << kHowTo);
            continue;
        }
        const Row& row = it->second;
        const Bytes raw = c.input();
        if (raw.empty() && row.raw_bytes != 0) {
            WARN(c.name << ": input not available (no shared data); encoder check skipped");
            continue;
        }
        // The input generator itself is pinned too.
        REQUIRE(raw.size() == row.raw_bytes);
        REQUIRE(hex64(xxh3(raw)) == hex64(row.raw_hash));
        const Bytes stream = c.make_stream(raw);
        INFO(kHowTo);
        CHECK(stream.size() == row.stream_bytes);
        CHECK(hex64(xxh3(stream)) == hex64(row.stream_hash));
        // And the committed file is exactly that stream.
        const Bytes committed = read_file(golden_path(c.name + ".mans"));
        CHECK(committed == stream);
    }
}

TEST_CASE("golden: every committed stream decodes to its pinned raw bytes", "[golden]") {
    const auto rows = read_tsv(golden_path("golden.tsv"));
    REQUIRE(rows.size() >= 10);
    // No orphan .mans file without a row.
    std::size_t files = 0;
    for (const auto& e : fs::directory_iterator(MANS_GOLDEN_DIR)) {
        if (e.path().extension() != ".mans") continue;
        ++files;
        INFO(e.path().string());
        CHECK(rows.count(e.path().stem().string()) == 1);
    }
    CHECK(files == rows.size());
    const auto& be = mans::detail::cpu_backend();
    for (const auto& [name, row] : rows) {
        INFO(name);
        const Bytes stream = read_file(golden_path(name + ".mans"));
        REQUIRE(stream.size() == row.stream_bytes);
        REQUIRE(hex64(xxh3(stream)) == hex64(row.stream_hash));
        CHECK(stream.size() < 10000);
        mans::FrameInfo info{};
        REQUIRE(mans::get_frame_info(stream.data(), stream.size(), &info) == mans::Errc::ok);
        CHECK(info.raw_bytes == row.raw_bytes);
        for (bool scalar : {true, false}) {
            for (int threads : {1, 0}) {
                INFO("force_scalar=" << scalar << " (" << be.kernels(scalar).name << ") threads=" << threads);
                mans::DecompressConfig cfg;
                cfg.force_scalar = scalar;
                cfg.threads = threads;
                mans::Errc e;
                const Bytes raw = decompress(stream, row.raw_bytes, cfg, &e);
                REQUIRE(e == mans::Errc::ok);
                CHECK(raw.size() == row.raw_bytes);
                CHECK(hex64(xxh3(raw)) == hex64(row.raw_hash));
            }
        }
    }
}
