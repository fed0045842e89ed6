// test_corruption.cpp - damaged streams: every truncation fails, bit flips and
// byte overwrites give an error or the exact original data (never a crash,
// never silently wrong output), and the frame errors are the pinned ones.
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "core/byte_io.hpp"
#include "core/frame.hpp"
#include "mans/mans.hpp"
#include "test_support.hpp"
#include "mapping/block_codec.hpp"
#include "core/byte_io.hpp"
#include "backend.hpp"

using namespace mans_test;

namespace {

struct Sample {
    std::string name;
    mans::DType dtype;
    Bytes raw;
    std::size_t block_bytes;
    Bytes stream;
};

std::vector<Sample> samples() {
    std::vector<Sample> v;
    v.push_back({"exafel 4 KiB", mans::DType::u16, exafel_prefix(4096), 0, {}});
    v.push_back({"exafel 64 KiB", mans::DType::u16, exafel_prefix(65536), 0, {}});
    // Synthetic u32: several 4 KiB blocks with different mappings (constant,
    // stored, token, ADM, byte planes) and a short last block.
    v.push_back({"synthetic u32 mixed", mans::DType::u32, generate_mixed(mans::DType::u32, 9000, 1024, 9), 4096, {}});
    for (Sample& s : v) {
        mans::CompressConfig cfg;
        cfg.dtype = s.dtype;
        cfg.block_bytes = s.block_bytes;
        mans::Errc e;
        s.stream = compress(s.raw, cfg, &e);
        REQUIRE(e == mans::Errc::ok);
        REQUIRE(s.stream.size() > 64);
    }
    return v;
}

// Outcome of decoding a damaged stream.
enum class Outcome { error, exact, wrong };

Outcome decode_outcome(const Bytes& stream, const Bytes& raw, mans::DecompressContext& ctx, Bytes& buf,
                       mans::Errc* err) {
    // Generous capacity: a damaged header must not make the decoder write
    // past what it is given, whatever size it claims.
    const mans::Result r = ctx.decompress(buf.data(), buf.size(), stream.data(), stream.size(), {1});
    *err = r.code;
    if (!r) return Outcome::error;
    if (r.size == raw.size() && std::memcmp(buf.data(), raw.data(), raw.size()) == 0) return Outcome::exact;
    return Outcome::wrong;
}

}  // namespace

TEST_CASE("every truncation of a stream is an error", "[corruption]") {
    mans::DecompressContext ctx;
    for (const Sample& s : samples()) {
        INFO(s.name << " (" << s.stream.size() << " bytes)");
        Bytes buf(s.raw.size() * 2 + 64);
        std::size_t ok = 0;
        for (std::size_t len = 0; len < s.stream.size(); ++len) {
            const mans::Result r = ctx.decompress(buf.data(), buf.size(), s.stream.data(), len, {1});
            if (r) {
                ++ok;
                FAIL_CHECK("truncated to " << len << " bytes decoded as ok");
            }
            mans::FrameInfo info{};
            if (mans::get_frame_info(s.stream.data(), len, &info) == mans::Errc::ok)
                FAIL_CHECK("get_frame_info accepted a stream truncated to " << len << " bytes");
        }
        CHECK(ok == 0);
        // Header-only truncations report "truncated" (or bad magic under 4 bytes).
        mans::Errc e;
        decompress(Bytes(s.stream.begin(), s.stream.begin() + 10), s.raw.size(), {}, &e);
        CHECK(e == mans::Errc::truncated);
        decompress(Bytes(s.stream.begin(), s.stream.end() - 1), s.raw.size(), {}, &e);
        CHECK(e == mans::Errc::truncated);
        decompress(Bytes{}, s.raw.size(), {}, &e);
        CHECK(e == mans::Errc::truncated);
    }
}

TEST_CASE("bit flips and byte overwrites give an error or the exact data", "[corruption]") {
    mans::DecompressContext ctx;
    for (const Sample& s : samples()) {
        INFO(s.name << " (" << s.stream.size() << " bytes)");
        Bytes buf(s.raw.size() * 2 + 64);
        Bytes damaged = s.stream;
        std::size_t errors = 0, exact = 0, wrong = 0;
        std::size_t by_code[64] = {};
        auto tally = [&](const char* what, std::size_t pos, unsigned extra) {
            mans::Errc e;
            const Outcome o = decode_outcome(damaged, s.raw, ctx, buf, &e);
            if (o == Outcome::error) {
                ++errors;
                ++by_code[static_cast<int>(e) & 63];
            } else if (o == Outcome::exact) {
                ++exact;
            } else {
                ++wrong;
                FAIL_CHECK(what << " at byte " << pos << " (" << extra << ") decoded as ok with WRONG data");
            }
        };
        // Every bit of the first 512 bytes (frame and block headers), then
        // every 7th bit; every byte overwritten. Under ASan, past the first
        // 512 bytes, every 29th bit and every 5th byte.
        const std::size_t bits = s.stream.size() * 8;
        const std::size_t bit_stride = mans_test::kAddressSanitized ? 29 : 7;
        const std::size_t byte_stride = mans_test::kAddressSanitized ? 5 : 1;
        for (std::size_t bit = 0; bit < bits; bit += (bit < 512 * 8 ? 1 : bit_stride)) {
            damaged[bit / 8] ^= static_cast<std::uint8_t>(1u << (bit % 8));
            tally("bit flip", bit / 8, static_cast<unsigned>(bit % 8));
            damaged[bit / 8] = s.stream[bit / 8];
        }
        for (std::size_t pos = 0; pos < s.stream.size(); pos += (pos < 512 ? 1 : byte_stride)) {
            for (std::uint8_t v : {std::uint8_t{0x00}, std::uint8_t{0xFF}}) {
                if (s.stream[pos] == v) continue;
                damaged[pos] = v;
                tally("byte overwrite", pos, v);
                damaged[pos] = s.stream[pos];
            }
        }
        CHECK(wrong == 0);
        CHECK(errors > 0);
        std::printf("  corruption %-22s %6zu bytes: %zu errors, %zu exact, %zu wrong  [", s.name.c_str(),
                    s.stream.size(), errors, exact, wrong);
        for (int c = 0; c < 64; ++c)
            if (by_code[c]) std::printf(" %s=%zu", mans::errc_name(static_cast<mans::Errc>(c)) + 9, by_code[c]);
        std::printf(" ]\n");
    }
}

TEST_CASE("frame-level errors are the pinned codes", "[corruption]") {
    const std::vector<Sample> all = samples();
    const Sample& s = all[0];
    mans::Errc e;

    SECTION("a byte appended gives trailing_bytes") {
        Bytes t = s.stream;
        t.push_back(0);
        decompress(t, s.raw.size(), {}, &e);
        CHECK(e == mans::Errc::trailing_bytes);
        mans::FrameInfo info{};
        CHECK(mans::get_frame_info(t.data(), t.size(), &info) == mans::Errc::trailing_bytes);
        // Two concatenated streams are not one stream.
        Bytes two = s.stream;
        two.insert(two.end(), s.stream.begin(), s.stream.end());
        decompress(two, 2 * s.raw.size(), {}, &e);
        CHECK(e == mans::Errc::trailing_bytes);
    }
    SECTION("wrong magic gives bad_magic") {
        for (std::size_t i = 0; i < 4; ++i) {
            Bytes t = s.stream;
            t[i] ^= 0x20;
            decompress(t, s.raw.size(), {}, &e);
            CHECK(e == mans::Errc::bad_magic);
        }
        const Bytes zstd_magic = {0x28, 0xB5, 0x2F, 0xFD, 0, 0, 0, 0};
        decompress(zstd_magic, 100, {}, &e);
        CHECK(e == mans::Errc::bad_magic);
        decompress(Bytes{'M', 'A', 'N'}, 100, {}, &e);
        CHECK(e == mans::Errc::bad_magic);
    }
    SECTION("version 2 (and 0, 255) gives unsupported_version") {
        REQUIRE(s.stream[4] == MANS_FORMAT_VERSION);
        for (std::uint8_t v : {std::uint8_t{MANS_FORMAT_VERSION + 1}, std::uint8_t{0}, std::uint8_t{255}}) {
            Bytes t = s.stream;
            t[4] = v;
            decompress(t, s.raw.size(), {}, &e);
            INFO("version " << int(v));
            CHECK(e == mans::Errc::unsupported_version);
            mans::FrameInfo info{};
            CHECK(mans::get_frame_info(t.data(), t.size(), &info) == mans::Errc::unsupported_version);
        }
    }
    SECTION("header fields out of range give corrupt_header; others header_checksum") {
        auto code_after = [&](std::size_t pos, std::uint8_t v) {
            Bytes t = s.stream;
            t[pos] = v;
            mans::Errc err;
            decompress(t, s.raw.size() * 4, {}, &err);
            return err;
        };
        CHECK(code_after(5, 2) == mans::Errc::corrupt_header);    // codec
        CHECK(code_after(6, 0) == mans::Errc::corrupt_header);    // dtype
        CHECK(code_after(6, 8) == mans::Errc::corrupt_header);    // dtype
        CHECK(code_after(7, 5) == mans::Errc::corrupt_header);    // rank
        CHECK(code_after(20, 1) == mans::Errc::corrupt_header);   // unknown flag
        REQUIRE(s.stream[18] == 1);                                // block_elems = 65536
        CHECK(code_after(18, 0) == mans::Errc::corrupt_header);   // block_elems = 0
        // A changed but in-range index entry is caught by the header checksum.
        const std::size_t idx = mans::detail::kFixedHeaderBytes + 4;  // first block's content checksum
        CHECK(code_after(idx, static_cast<std::uint8_t>(s.stream[idx] ^ 1)) == mans::Errc::header_checksum);
    }
    SECTION("destination too small gives dst_too_small") {
        Bytes out(s.raw.size() - 1);
        const mans::Result r = mans::decompress(out.data(), out.size(), s.stream.data(), s.stream.size());
        CHECK(r.code == mans::Errc::dst_too_small);
        const mans::Result r0 = mans::decompress(nullptr, 0, s.stream.data(), s.stream.size());
        CHECK(r0.code == mans::Errc::dst_too_small);
        // Compression into a too small buffer, down to the exact size minus one.
        mans::CompressConfig cfg;
        cfg.dtype = s.dtype;
        Bytes c(s.stream.size() - 1);
        CHECK(mans::compress(c.data(), c.size(), s.raw.data(), s.raw.size(), cfg).code == mans::Errc::dst_too_small);
        c.resize(s.stream.size());
        const mans::Result rc = mans::compress(c.data(), c.size(), s.raw.data(), s.raw.size(), cfg);
        CHECK(rc);
        CHECK(c == s.stream);
    }
    SECTION("get_frame_info reports every field") {
        for (const Sample& x : all) {
            INFO(x.name);
            mans::FrameInfo info{};
            REQUIRE(mans::get_frame_info(x.stream.data(), x.stream.size(), &info) == mans::Errc::ok);
            const std::size_t esize = mans::dtype_size(x.dtype);
            const std::size_t block_bytes = x.block_bytes ? x.block_bytes : mans::kDefaultBlockBytes;
            CHECK(info.format_version == MANS_FORMAT_VERSION);
            CHECK(info.codec == 1);
            CHECK(info.dtype == static_cast<mans_dtype>(x.dtype));
            CHECK(info.element_count == x.raw.size() / esize);
            CHECK(info.raw_bytes == x.raw.size());
            CHECK(info.rank == 0);
            CHECK(info.dims[0] == 0);
            CHECK(info.block_bytes == block_bytes / esize * esize);
            CHECK(info.block_count == (x.raw.size() + block_bytes - 1) / block_bytes);
            CHECK(info.compressed_bytes == x.stream.size());
        }
        mans::FrameInfo info{};
        CHECK(mans::get_frame_info(s.stream.data(), s.stream.size(), nullptr) == mans::Errc::invalid_argument);
        CHECK(mans::get_frame_info(nullptr, 10, &info) == mans::Errc::invalid_argument);
    }
}

TEST_CASE("hostile headers: huge counts and sizes fail cleanly without allocating", "[corruption]") {
    // A header that declares 2^40 elements in 4 KiB blocks, with a correct
    // header checksum, must fail as truncated (the index cannot fit).
    mans::detail::FrameHeader h;
    h.dtype = mans::DType::u16;
    h.count = 1ull << 40;
    h.block_elems = 2048;
    Bytes t(mans::detail::kFixedHeaderBytes + 64, 0);
    std::memcpy(t.data(), "MANS", 4);
    t[4] = MANS_FORMAT_VERSION;
    t[5] = 1;
    t[6] = static_cast<std::uint8_t>(mans::DType::u16);
    t[7] = 0;
    mans::detail::store_le<std::uint64_t>(t.data() + 8, h.count);
    mans::detail::store_le<std::uint32_t>(t.data() + 16, h.block_elems);
    mans::Errc e;
    decompress(t, 1024, {}, &e);
    CHECK(e == mans::Errc::truncated);
    // Element count overflowing the byte size.
    mans::detail::store_le<std::uint64_t>(t.data() + 8, ~0ull / 2 + 5);
    decompress(t, 1024, {}, &e);
    CHECK(e != mans::Errc::ok);
    // Blocks above the 64 MiB limit.
    mans::detail::store_le<std::uint64_t>(t.data() + 8, 1000);
    mans::detail::store_le<std::uint32_t>(t.data() + 16, 0x7fffffff);
    decompress(t, 1024, {}, &e);
    CHECK(e == mans::Errc::corrupt_header);
}

namespace {
// A header-only frame (no blocks' payload) with a valid header checksum.
Bytes frame_with_checksum(mans::DType dt, std::uint64_t count, std::uint32_t block_elems) {
    Bytes t(mans::detail::kFixedHeaderBytes, 0);
    std::memcpy(t.data(), "MANS", 4);
    t[4] = MANS_FORMAT_VERSION;
    t[5] = 1;
    t[6] = static_cast<std::uint8_t>(dt);
    mans::detail::store_le<std::uint64_t>(t.data() + 8, count);
    mans::detail::store_le<std::uint32_t>(t.data() + 16, block_elems);
    Bytes sum(4);
    mans::detail::store_le<std::uint32_t>(sum.data(), mans::detail::checksum32(t.data(), t.size()));
    t.insert(t.end(), sum.begin(), sum.end());
    return t;
}
}  // namespace

TEST_CASE("hostile headers: a block count that would wrap past 2^64 is rejected", "[corruption]") {
    // N = 2^64 - 1 u8 elements in 2^26-element blocks: (N + E - 1) / E
    // would wrap to 0 blocks and let a stream without payload "succeed".
    const Bytes t = frame_with_checksum(mans::DType::u8, ~0ull, 1u << 26);
    mans::FrameInfo info{};
    CHECK(mans::get_frame_info(t.data(), t.size(), &info) != mans::Errc::ok);
    std::uint8_t dst[64];
    const mans::Result r = mans::decompress(dst, sizeof dst, t.data(), t.size());
    CHECK(!r);
}

TEST_CASE("hostile payloads: a dictionary size is bounded by the payload before allocating", "[corruption]") {
    // One u16 block whose dictionary claims 2^20 - 1 entries with no gap
    // bytes behind: rejected as corrupt before any large allocation.
    using namespace mans::detail;
    const std::size_t n = 1u << 20;
    std::vector<std::uint8_t> payload = {static_cast<std::uint8_t>(BlockMode::dictionary)};
    std::uint8_t v[kMaxVarintBytes];
    payload.insert(payload.end(), v, v + encode_varint(n - 2, v));
    payload.push_back(0);
    payload.push_back(0);  // d_0, then nothing
    BlockScratch scratch;
    std::vector<std::uint8_t> out(2 * n);
    const auto& k = cpu_backend().kernels(false);
    CHECK(decode_block(mans::DType::u16, payload.data(), payload.size(), n, out.data(), k, scratch) ==
          mans::Errc::corrupt_block);
    CHECK(scratch.dict.capacity() < 1024);
    // u8 blocks never use a dictionary.
    payload[1] = 0;
    CHECK(decode_block(mans::DType::u8, payload.data(), 3, 16, out.data(), k, scratch) == mans::Errc::corrupt_block);
}
