// test_roundtrip.cpp - property round trips: every dtype x length x
// distribution x block size decodes byte-exact, the output stays within
// compress_bound(), and every forced block mapping round-trips.
#include <cstdio>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "backend.hpp"
#include "mans/mans.hpp"
#include "mapping/block_codec.hpp"
#include "test_support.hpp"

using namespace mans_test;

namespace {

std::vector<std::size_t> lengths_for(std::size_t esize, std::size_t block_bytes) {
    std::vector<std::size_t> v = {0, 1, 2, 31, 32, 33, 255, 256, 257, 511, 512, 513, 8191, 8192, 8193};
    const std::size_t B = mans::kDefaultBlockBytes / esize;
    for (std::size_t n : {B - 1, B, B + 1, B * 7 / 2}) v.push_back(n);
    if (block_bytes) {
        const std::size_t b = block_bytes / esize;
        for (std::size_t n : {b - 1, b, b + 1}) v.push_back(n);
    }
    return v;
}

std::size_t blocks_of(std::size_t n, std::size_t esize, std::size_t block_bytes) {
    const std::size_t be = (block_bytes ? block_bytes : mans::kDefaultBlockBytes) / esize;
    return (n + be - 1) / be;
}

// Compresses and decompresses; returns the stream size (0 on failure, after
// reporting it).
std::size_t check_roundtrip(const Bytes& raw, const mans::CompressConfig& cfg, const std::string& what) {
    INFO(what);
    mans::Errc e = mans::Errc::internal;
    const Bytes stream = compress(raw, cfg, &e);
    if (e != mans::Errc::ok) {
        FAIL_CHECK("compress failed: " << mans::errc_name(e));
        return 0;
    }
    CHECK(stream.size() <= mans::compress_bound(raw.size()));
    mans::FrameInfo info{};
    REQUIRE(mans::get_frame_info(stream.data(), stream.size(), &info) == mans::Errc::ok);
    CHECK(info.raw_bytes == raw.size());
    CHECK(info.compressed_bytes == stream.size());
    // Exact-size destination: decoding must not need any slack.
    const Bytes back = decompress(stream, raw.size(), {}, &e);
    if (e != mans::Errc::ok) {
        FAIL_CHECK("decompress failed: " << mans::errc_name(e));
        return 0;
    }
    if (back != raw) FAIL_CHECK("decoded bytes differ from the input");
    return stream.size();
}

}  // namespace

TEST_CASE("round trip: dtype x length x distribution x block size", "[roundtrip]") {
    std::size_t cases = 0;
    for (std::size_t block_bytes : {std::size_t{0}, std::size_t{4096}}) {
        for (mans::DType dt : kAllDTypes) {
            const std::size_t esize = mans::dtype_size(dt);
            for (Dist d : kAllDists) {
                std::uint64_t seed = 1000;
                for (std::size_t n : lengths_for(esize, block_bytes)) {
                    const Bytes raw = generate(dt, d, n, ++seed);
                    mans::CompressConfig cfg;
                    cfg.dtype = dt;
                    cfg.block_bytes = block_bytes;
                    const std::string what = std::string(mans::dtype_name(dt)) + " " + dist_name(d) +
                                             " n=" + std::to_string(n) +
                                             " block_bytes=" + std::to_string(block_bytes);
                    const std::size_t csize = check_roundtrip(raw, cfg, what);
                    ++cases;
                    if (d == Dist::random_full && csize) {
                        // Incompressible input: at most header + index + one mode byte per block.
                        INFO(what);
                        CHECK(csize <= raw.size() + 64 + 9 * blocks_of(n, esize, block_bytes));
                    }
                    if (d == Dist::constant && n >= 8192 && csize) {
                        INFO(what);
                        CHECK(csize < raw.size() / 50);
                    }
                }
            }
        }
    }
    // Odd block sizes (not a multiple of every element size).
    for (std::size_t block_bytes : {std::size_t{4099}, std::size_t{12345}, std::size_t{65536 + 24}}) {
        for (mans::DType dt : kAllDTypes) {
            const std::size_t n = 40000 / mans::dtype_size(dt) + 17;
            const Bytes raw = generate_mixed(dt, n, 1000, 77);
            mans::CompressConfig cfg;
            cfg.dtype = dt;
            cfg.block_bytes = block_bytes;
            check_roundtrip(raw, cfg,
                            std::string(mans::dtype_name(dt)) + " mixed block_bytes=" + std::to_string(block_bytes));
            ++cases;
        }
    }
    CHECK(cases > 2000);
}

TEST_CASE("round trip: shape (rank/dims) recorded and stream stays decodable", "[roundtrip]") {
    for (mans::DType dt : kAllDTypes) {
        const Bytes raw = generate(dt, Dist::skewed, 6 * 7 * 8 * 9, 5);
        mans::CompressConfig cfg;
        cfg.dtype = dt;
        cfg.rank = 4;
        cfg.dims[0] = 6, cfg.dims[1] = 7, cfg.dims[2] = 8, cfg.dims[3] = 9;
        check_roundtrip(raw, cfg, std::string(mans::dtype_name(dt)) + " rank 4");
        const Bytes stream = compress(raw, cfg);
        mans::FrameInfo info{};
        REQUIRE(mans::get_frame_info(stream.data(), stream.size(), &info) == mans::Errc::ok);
        CHECK(info.rank == 4);
        CHECK(info.dims[0] == 6);
        CHECK(info.dims[3] == 9);
    }
}

TEST_CASE("round trip: real data files in their natural types", "[roundtrip][real]") {
    struct As {
        mans::DType dt;
        const char* label;
    };
    auto types_for = [](const std::string& path) {
        std::vector<As> v;
        auto ends = [&](const char* ext) {
            const std::string e(ext);
            return path.size() >= e.size() && path.compare(path.size() - e.size(), e.size(), e) == 0;
        };
        if (ends(".u8")) v.push_back({mans::DType::u8, "u8"});
        if (ends(".u16")) v.push_back({mans::DType::u16, "u16"});
        if (ends(".i16")) v.push_back({mans::DType::i16, "i16"});
        if (ends(".u32")) v.push_back({mans::DType::u32, "u32"});
        if (ends(".i32")) v.push_back({mans::DType::i32, "i32"});
        if (ends(".u64")) v.push_back({mans::DType::u64, "u64"});
        if (ends(".i64")) v.push_back({mans::DType::i64, "i64"});
        if (ends(".f32")) {
            v.push_back({mans::DType::u32, "f32 as u32"});
            v.push_back({mans::DType::u64, "f32 as u64"});
        }
        if (ends(".f64")) v.push_back({mans::DType::u64, "f64 as u64"});
        return v;
    };

    std::vector<std::string> files = list_shared_data_files();
    if (files.empty()) {
        WARN("no real data in MANS_SHARED_DATA_DIR; round-tripping a synthetic exafel-like substitute");
    }
    std::size_t tested = 0;
    for (const std::string& path : files) {
        const Bytes whole = read_file(path);
        REQUIRE(!whole.empty());
        for (const As& as : types_for(path)) {
            const std::size_t esize = mans::dtype_size(as.dt);
            // A trailing partial element is cut (f32 files with an odd count as u64).
            const Bytes raw(whole.begin(), whole.begin() + static_cast<std::ptrdiff_t>(whole.size() / esize * esize));
            for (std::size_t block_bytes : {std::size_t{0}, std::size_t{4096}}) {
                mans::CompressConfig cfg;
                cfg.dtype = as.dt;
                cfg.block_bytes = block_bytes;
                const std::size_t c = check_roundtrip(
                    raw, cfg, path + " as " + as.label + " block_bytes=" + std::to_string(block_bytes));
                std::printf("  real %-40s %-11s block=%-6zu %9zu -> %9zu  ratio %.3f\n",
                            path.substr(path.find_last_of('/') + 1).c_str(), as.label,
                            block_bytes ? block_bytes : mans::kDefaultBlockBytes, raw.size(), c,
                            c ? double(raw.size()) / double(c) : 0.0);
                ++tested;
            }
        }
    }
    if (files.empty()) {
        mans::CompressConfig cfg;
        cfg.dtype = mans::DType::u16;
        check_roundtrip(exafel_like(524288, 99), cfg, "synthetic exafel substitute");
    } else {
        CHECK(tested > 0);
    }
}

TEST_CASE("compression ratio on exafel_1024kB.u16 exceeds 1.9", "[roundtrip][real][ratio]") {
    const std::string path = find_data_file("exafel_1024kB.u16");
    if (path.empty()) {
        WARN("exafel_1024kB.u16 not found; ratio check skipped");
        return;
    }
    const Bytes raw = read_file(path);
    REQUIRE(raw.size() == 1048576);
    mans::CompressConfig cfg;
    cfg.dtype = mans::DType::u16;
    const Bytes stream = compress(raw, cfg);
    REQUIRE(!stream.empty());
    const double ratio = double(raw.size()) / double(stream.size());
    INFO("exafel ratio " << ratio << " (" << stream.size() << " bytes)");
    CHECK(ratio > 1.9);
}

TEST_CASE("every forced block mapping round-trips (scalar kernels)", "[roundtrip][block]") {
    using mans::detail::ModeHint;
    using mans::detail::BlockMode;
    const auto& be = mans::detail::cpu_backend();
    const auto& scalar = be.kernels(true);
    const auto& best = be.kernels(false);
    struct HintInfo {
        ModeHint hint;
        int mode;  // the block mode the hint asks for; -1 = any
        const char* name;
    };
    const HintInfo hints[] = {
        {ModeHint::automatic, -1, "automatic"},
        {ModeHint::stored, int(BlockMode::stored), "stored"},
        {ModeHint::constant, int(BlockMode::constant), "constant"},
        {ModeHint::token_center, int(BlockMode::token), "token_center"},
        {ModeHint::token_delta, int(BlockMode::token), "token_delta"},
        {ModeHint::token_repeat, int(BlockMode::token), "token_repeat"},
        {ModeHint::adm, int(BlockMode::adm), "adm"},
        {ModeHint::byte_planes, int(BlockMode::byte_planes), "byte_planes"},
        {ModeHint::dictionary, int(BlockMode::dictionary), "dictionary"},
    };
    mans::detail::BlockScratch enc_scratch, dec_scratch;
    std::vector<std::uint8_t> payload;
    std::size_t fallbacks = 0, forced = 0, undecodable = 0;
    std::size_t used[16] = {};  // per hint: blocks coded with the requested mapping
    for (mans::DType dt : kAllDTypes) {
        const std::size_t esize = mans::dtype_size(dt);
        for (Dist d : kAllDists) {
            for (std::size_t n : {std::size_t{1}, std::size_t{2}, std::size_t{31}, std::size_t{257},
                                  std::size_t{513}, std::size_t{8193}, mans::kDefaultBlockBytes / esize}) {
                const Bytes raw = generate(dt, d, n, 4242 + n);
                for (const HintInfo& h : hints) {
                    INFO(mans::dtype_name(dt) << " " << dist_name(d) << " n=" << n << " hint=" << h.name);
                    payload.clear();
                    mans::detail::encode_block(dt, raw.data(), n, scalar, enc_scratch, payload, h.hint);
                    REQUIRE(!payload.empty());
                    CHECK(payload.size() <= 1 + n * esize);  // never expands
                    const int mode = payload[0];
                    if (h.mode >= 0) {
                        // Either the requested mapping or the stored fallback.
                        CHECK((mode == h.mode || mode == int(BlockMode::stored)));
                        if (mode == h.mode) ++forced, ++used[static_cast<int>(h.hint)];
                        else ++fallbacks;
                    }
                    if (mode == int(BlockMode::stored)) CHECK(payload.size() == 1 + n * esize);
                    for (const auto* k : {&scalar, &best}) {
                        Bytes back(raw.size() + 1, 0xEE);  // one guard byte
                        const mans::Errc e = mans::detail::decode_block(dt, payload.data(), payload.size(), n,
                                                                        back.data(), *k, dec_scratch);
                        INFO("decode kernels " << k->name << " payload " << payload.size() << " bytes, mode "
                                                << mode);
                        CHECK(back.back() == 0xEE);  // no write past n elements
                        if (e != mans::Errc::ok) {
                            FAIL_CHECK("encoded block does not decode: " << mans::errc_name(e));
                            ++undecodable;
                            continue;
                        }
                        back.pop_back();
                        if (back != raw) FAIL_CHECK("forced mapping decoded to different bytes");
                    }
                }
            }
        }
    }
    // Every forced mapping must actually be exercised, not always fall back
    // (random full-range data legitimately falls back to stored).
    for (const HintInfo& h : hints) {
        if (h.mode < 0) continue;
        INFO("hint " << h.name);
        CHECK(used[static_cast<int>(h.hint)] > 20);
    }
    CHECK(undecodable == 0);
    // Constant blocks, ADM-representable blocks and token blocks all exist above.
    std::printf("  forced block mappings: %zu used as requested, %zu fell back to stored\n", forced, fallbacks);
}

TEST_CASE("forced mappings are actually selected where representable", "[roundtrip][block]") {
    using mans::detail::ModeHint;
    using mans::detail::BlockMode;
    const auto& scalar = mans::detail::cpu_backend().kernels(true);
    mans::detail::BlockScratch sc;
    std::vector<std::uint8_t> payload;
    auto mode_of = [&](mans::DType dt, const Bytes& raw, ModeHint h) {
        payload.clear();
        mans::detail::encode_block(dt, raw.data(), raw.size() / mans::dtype_size(dt), scalar, sc, payload, h);
        return int(payload[0]);
    };
    // Skewed u16 data compresses under every token mapping and ADM.
    const Bytes skew = generate(mans::DType::u16, Dist::skewed, 8192, 3);
    CHECK(mode_of(mans::DType::u16, skew, ModeHint::token_center) == int(BlockMode::token));
    CHECK(mode_of(mans::DType::u16, skew, ModeHint::token_delta) == int(BlockMode::token));
    // ADM needs every value within 126 * 32 of the block mean.
    Bytes narrow(2 * 8192);
    std::uint64_t lcg = 1;
    for (std::size_t i = 0; i < 8192; ++i) {
        lcg = lcg * 6364136223846793005ull + 1442695040888963407ull;
        const std::uint16_t v = static_cast<std::uint16_t>(30000 + (lcg >> 33) % 200);
        narrow[2 * i] = static_cast<std::uint8_t>(v), narrow[2 * i + 1] = static_cast<std::uint8_t>(v >> 8);
    }
    CHECK(mode_of(mans::DType::u16, narrow, ModeHint::adm) == int(BlockMode::adm));
    CHECK(mode_of(mans::DType::u16, skew, ModeHint::adm) == int(BlockMode::stored));  // tail too wide
    CHECK(mode_of(mans::DType::u16, skew, ModeHint::byte_planes) == int(BlockMode::byte_planes));
    CHECK(mode_of(mans::DType::u16, skew, ModeHint::stored) == int(BlockMode::stored));
    // Constant only for constant blocks.
    const Bytes cst = generate(mans::DType::i32, Dist::constant, 1000, 3);
    CHECK(mode_of(mans::DType::i32, cst, ModeHint::constant) == int(BlockMode::constant));
    CHECK(mode_of(mans::DType::i32, cst, ModeHint::automatic) == int(BlockMode::constant));
    CHECK(mode_of(mans::DType::u16, skew, ModeHint::constant) == int(BlockMode::stored));
    // ADM is defined for 16- and 32-bit elements only.
    const Bytes skew8 = generate(mans::DType::u64, Dist::skewed, 8192, 3);
    CHECK(mode_of(mans::DType::u64, skew8, ModeHint::adm) == int(BlockMode::stored));
    // Incompressible data is stored whatever is asked.
    const Bytes rnd = generate(mans::DType::u32, Dist::random_full, 8192, 3);
    CHECK(mode_of(mans::DType::u32, rnd, ModeHint::automatic) == int(BlockMode::stored));
    CHECK(mode_of(mans::DType::u32, rnd, ModeHint::token_delta) == int(BlockMode::stored));
}
