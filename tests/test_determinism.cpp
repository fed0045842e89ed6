// test_determinism.cpp - the bytes never depend on the thread count or on the
// kernels (scalar or SIMD); every encoder/decoder kernel pair agrees.
#include <algorithm>
#include <cstdio>
#include <iterator>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include <catch2/catch.hpp>

#include "backend.hpp"
#include "core/byte_io.hpp"
#include "entropy/token_stream.hpp"
#include "mans/mans.hpp"
#include "test_support.hpp"

using namespace mans_test;

namespace {

struct Input {
    std::string name;
    mans::DType dtype;
    Bytes raw;
    std::size_t block_bytes;
};

std::vector<Input> inputs() {
    std::vector<Input> v;
    v.push_back({"exafel 1 MiB", mans::DType::u16, exafel_prefix(1048576), 0});
    v.push_back({"exafel 256 KiB, 4 KiB blocks", mans::DType::u16, exafel_prefix(262144), 4096});
    for (mans::DType dt : kAllDTypes) {
        const std::size_t esize = mans::dtype_size(dt);
        const std::size_t be = mans::kDefaultBlockBytes / esize;
        // 5.5 default blocks, each block from a different distribution.
        v.push_back({std::string("mixed ") + mans::dtype_name(dt), dt, generate_mixed(dt, be * 11 / 2, be, 31), 0});
        v.push_back({std::string("mixed small blocks ") + mans::dtype_name(dt), dt,
                     generate_mixed(dt, 60000 / esize + 3, 2048 / esize, 32), 4096});
    }
    return v;
}

}  // namespace

TEST_CASE("kernel sets available", "[determinism]") {
    const auto& be = mans::detail::cpu_backend();
    const char* simd = be.kernels(false).name;
    const char* scalar = be.kernels(true).name;
    CHECK(std::string(scalar) == "scalar");
    if (std::string(simd) == "scalar")
        WARN("no SIMD kernels on this build/CPU: scalar vs SIMD comparisons compare scalar with itself");
    std::printf("  kernels: default=%s forced-scalar=%s\n", simd, scalar);
}

TEST_CASE("compressed bytes identical for threads 1,2,3,8 and scalar/SIMD", "[determinism]") {
    for (const Input& in : inputs()) {
        INFO(in.name);
        mans::CompressConfig ref_cfg;
        ref_cfg.dtype = in.dtype;
        ref_cfg.block_bytes = in.block_bytes;
        ref_cfg.threads = 1;
        ref_cfg.force_scalar = true;
        mans::Errc e;
        const Bytes ref = compress(in.raw, ref_cfg, &e);
        REQUIRE(e == mans::Errc::ok);
        for (int threads : {1, 2, 3, 8, 0}) {
            for (bool scalar : {true, false}) {
                mans::CompressConfig cfg = ref_cfg;
                cfg.threads = threads;
                cfg.force_scalar = scalar;
                INFO("threads=" << threads << " force_scalar=" << scalar);
                const Bytes got = compress(in.raw, cfg, &e);
                REQUIRE(e == mans::Errc::ok);
                CHECK(got.size() == ref.size());
                CHECK(xxh3(got) == xxh3(ref));
            }
        }
        // Reused context, many thread counts in a row (scratch reuse must not leak state).
        mans::CompressContext ctx;
        for (int threads : {8, 1, 3, 2}) {
            mans::CompressConfig cfg = ref_cfg;
            cfg.threads = threads;
            cfg.force_scalar = threads % 2 == 0;
            Bytes got(mans::compress_bound(in.raw.size()));
            const mans::Result r = ctx.compress(got.data(), got.size(), in.raw.data(), in.raw.size(), cfg);
            REQUIRE(r);
            got.resize(r.size);
            INFO("context reuse threads=" << threads);
            CHECK(xxh3(got) == xxh3(ref));
        }
    }
}

TEST_CASE("decoding: 2x2 matrix of scalar/SIMD encoder and decoder, any thread count", "[determinism]") {
    for (const Input& in : inputs()) {
        INFO(in.name);
        for (bool enc_scalar : {true, false}) {
            mans::CompressConfig cfg;
            cfg.dtype = in.dtype;
            cfg.block_bytes = in.block_bytes;
            cfg.force_scalar = enc_scalar;
            mans::Errc e;
            const Bytes stream = compress(in.raw, cfg, &e);
            REQUIRE(e == mans::Errc::ok);
            for (bool dec_scalar : {true, false}) {
                for (int threads : {1, 3}) {
                    INFO("enc_scalar=" << enc_scalar << " dec_scalar=" << dec_scalar << " threads=" << threads);
                    mans::DecompressConfig dcfg;
                    dcfg.force_scalar = dec_scalar;
                    dcfg.threads = threads;
                    const Bytes back = decompress(stream, in.raw.size(), dcfg, &e);
                    REQUIRE(e == mans::Errc::ok);
                    CHECK(back == in.raw);
                }
            }
        }
    }
}

// PRISM codes thousands of plane streams of every size and type through
// one context per thread (prism/lossless.cpp): what a context coded before,
// larger or smaller, of another type, must not change its next stream.
TEST_CASE("one context for many inputs of every type, each coded as by a fresh one", "[determinism]") {
    // The determinism inputs, each followed by a short one of the sizes and
    // types PRISM's streams have (u8 of 1 byte to 16 KiB, u32 and u64).
    std::vector<Input> all;
    const std::vector<Input> big = inputs();
    const std::pair<mans::DType, std::size_t> small[] = {{mans::DType::u8, 1},     {mans::DType::u8, 7},
                                                          {mans::DType::u8, 100},   {mans::DType::u8, 4095},
                                                          {mans::DType::u8, 16384}, {mans::DType::u32, 16},
                                                          {mans::DType::u64, 4096}};
    for (std::size_t k = 0; k < big.size(); ++k) {
        all.push_back(big[k]);
        const auto& [dt, bytes] = small[k % std::size(small)];
        const std::size_t count = bytes / mans::dtype_size(dt);
        all.push_back({std::string("short ") + mans::dtype_name(dt) + " " + std::to_string(bytes), dt,
                       generate_mixed(dt, count, std::max<std::size_t>(count / 3, 1), 40 + k), 0});
    }
    mans::CompressContext cctx;
    mans::DecompressContext dctx;
    for (int pass = 0; pass < 2; ++pass)
        for (std::size_t k = 0; k < all.size(); ++k) {
            const Input& in = all[pass ? all.size() - 1 - k : k];  // the second pass in reverse order
            INFO(in.name << " pass " << pass);
            mans::CompressConfig cfg;
            cfg.dtype = in.dtype;
            cfg.block_bytes = in.block_bytes;
            cfg.threads = 1;
            mans::Errc e;
            const Bytes fresh = compress(in.raw, cfg, &e);
            REQUIRE(e == mans::Errc::ok);
            Bytes got(mans::compress_bound(in.raw.size()));
            const mans::Result r = cctx.compress(got.data(), got.size(), in.raw.data(), in.raw.size(), cfg);
            REQUIRE(r);
            got.resize(r.size);
            CHECK(got == fresh);
            Bytes back(in.raw.size());
            mans::DecompressConfig dcfg;
            dcfg.threads = 1;
            // Damaged copies first, one byte changed at a time from the
            // middle on, until the context refuses one (a change confined to
            // the padding bits that FORMAT.md section 2 leaves unchecked may
            // be accepted: then the values must be the original's); then
            // the real stream.
            bool refused = false;
            for (std::size_t at = got.size() / 2; at < got.size() && !refused; at += 1 + got.size() / 16) {
                Bytes bad = got;
                bad[at] ^= 0x5a;
                if (dctx.decompress(back.data(), back.size(), bad.data(), bad.size(), dcfg)) {
                    INFO("byte " << at << " of " << got.size() << " changed");
                    CHECK(back == in.raw);
                } else {
                    refused = true;
                }
            }
            CHECK(refused);
            {
                // FORMAT.md leaves only padding bits (fewer than 8) unchecked,
                // so the last byte with all its bits changed is refused.
                Bytes bad = got;
                bad.back() ^= 0xFF;
                CHECK_FALSE(dctx.decompress(back.data(), back.size(), bad.data(), bad.size(), dcfg));
            }
            const mans::Result d = dctx.decompress(back.data(), back.size(), got.data(), got.size(), dcfg);
            REQUIRE(d);
            CHECK(d.size == in.raw.size());
            CHECK(back == in.raw);
        }
}

TEST_CASE("token stream: kernels called directly agree byte for byte", "[determinism][kernels]") {
    using namespace mans::detail;
    const auto& be = cpu_backend();
    const RansKernels* kernels[2] = {&be.kernels(true), &be.kernels(false)};
    TokenStreamScratch sc;
    std::mt19937_64 rng(0x70C3E5);
    std::size_t streams = 0;
    for (std::size_t n : {std::size_t{1}, std::size_t{2}, std::size_t{7}, std::size_t{100}, std::size_t{511},
                          std::size_t{512}, std::size_t{1000}, std::size_t{8191}, std::size_t{16385},
                          std::size_t{65536}, std::size_t{131071}}) {
        for (unsigned lanes : {1u, 2u, 4u, 8u, 16u, 32u, lanes_for(n)}) {
            if (lanes > n && lanes != 1) continue;
            for (int shape = 0; shape < 4; ++shape) {
                const LaneLayout lay = LaneLayout::make(n, lanes);
                // Interleaved tokens; slots of finished lanes are zero (as decoded).
                std::vector<std::uint8_t> tokens(lay.slots(), 0);
                for (std::size_t t = 0; t < lay.seg; ++t) {
                    const unsigned active = lay.active_at(t);
                    for (unsigned j = 0; j < active; ++j) {
                        std::uint8_t tok;
                        const std::uint64_t r = rng();
                        switch (shape) {
                            case 0: tok = static_cast<std::uint8_t>(r); break;           // uniform
                            case 1: tok = static_cast<std::uint8_t>(__builtin_ctzll(r | (1ull << 40))); break;
                            case 2: tok = (r & 0xff) < 250 ? 0 : static_cast<std::uint8_t>(r >> 8); break;
                            default: tok = static_cast<std::uint8_t>((t / 17 + j) & 0x3f); break;  // structured
                        }
                        tokens[t * lay.lanes + j] = tok;
                    }
                }
                INFO("n=" << n << " lanes=" << lanes << " shape=" << shape);
                std::vector<std::uint8_t> enc[2];
                for (int k = 0; k < 2; ++k) {
                    REQUIRE(encode_token_stream(tokens.data(), lay, *kernels[k], sc, enc[k]));
                }
                CHECK(enc[0] == enc[1]);
                for (int ek = 0; ek < 2; ++ek) {
                    for (int dk = 0; dk < 2; ++dk) {
                        INFO("encoder " << kernels[ek]->name << " decoder " << kernels[dk]->name);
                        ByteReader r(enc[ek].data(), enc[ek].size());
                        std::vector<std::uint8_t> out;
                        LaneLayout got{};
                        REQUIRE(decode_token_stream(r, n, *kernels[dk], sc, out, &got));
                        CHECK(r.remaining() == 0);
                        CHECK(got.lanes == lanes);
                        REQUIRE(out.size() >= lay.slots());
                        CHECK(std::equal(tokens.begin(), tokens.end(), out.begin()));
                    }
                }
                // Damaged copies (a byte changed anywhere, or the last one
                // cut): both decoders give the same verdict and, when they
                // accept, the same tokens.
                for (int d = 0; d < 4; ++d) {
                    std::vector<std::uint8_t> bad = enc[0];
                    if (d == 3)
                        bad.pop_back();
                    else
                        bad[rng() % bad.size()] ^= static_cast<std::uint8_t>(1 + rng() % 255);
                    std::vector<std::uint8_t> out[2];
                    bool ok[2];
                    LaneLayout got[2]{};
                    for (int dk = 0; dk < 2; ++dk) {
                        ByteReader r(bad.data(), bad.size());
                        ok[dk] = decode_token_stream(r, n, *kernels[dk], sc, out[dk], &got[dk]);
                    }
                    INFO("damage " << d);
                    REQUIRE(ok[0] == ok[1]);
                    if (ok[0]) {
                        REQUIRE(got[0].lanes == got[1].lanes);
                        CHECK(std::equal(out[0].begin(), out[0].begin() + got[0].slots(), out[1].begin()));
                    }
                }
                ++streams;
            }
        }
    }
    CHECK(streams > 100);
}
