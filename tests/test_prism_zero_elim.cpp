// test_prism_zero_elim.cpp - the PRISM zero-elimination stage (RZE): round
// trips over lengths and patterns, compactness, and a canonical-form oracle
// for truncated, corrupted and random payloads: the decoder either rejects a
// payload with corrupt_block or accepts it, and then re-encoding what it
// decoded must give that payload back byte for byte.
#include <cstddef>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "mans/mans.hpp"
#include "prism/zero_elim.hpp"

namespace {

using Bytes = std::vector<std::uint8_t>;
using mans::Errc;
using mans::detail::prism::zero_elim_decode;
using mans::detail::prism::zero_elim_encode;

const std::size_t kLengths[] = {0, 1, 7, 8, 9, 63, 64, 65, 1000, 16384, 16385, 131072};

Bytes encode(const Bytes& src) {
    Bytes out;
    zero_elim_encode(src.data(), src.size(), &out);
    return out;
}

// Decodes into an exactly sized heap buffer (so ASan sees any overrun) from an
// exactly sized copy of the payload.
Errc decode(const Bytes& payload, std::size_t n, Bytes* dst) {
    const Bytes p(payload);
    dst->assign(n, 0xA5);
    return zero_elim_decode(p.data(), p.size(), dst->data(), n);
}

// Sum of the bitmap sizes: the worst-case overhead of the format.
std::size_t bitmap_bytes(std::size_t n) {
    std::size_t total = 0, bits = n;
    for (;;) {
        const std::size_t bytes = (bits + 7) / 8;
        total += bytes;
        if (bytes <= 8) return total;
        bits = bytes;
    }
}

// The oracle: rejected, or accepted and canonical.
void check_consistent(const Bytes& payload, std::size_t n) {
    Bytes dst;
    const Errc e = decode(payload, n, &dst);
    if (e == Errc::corrupt_block) return;
    REQUIRE(e == Errc::ok);
    REQUIRE(encode(dst) == payload);
}

Bytes all_zero(std::size_t n, std::mt19937_64&) { return Bytes(n, 0); }

Bytes all_nonzero(std::size_t n, std::mt19937_64& rng) {
    Bytes v(n);
    for (auto& b : v) b = static_cast<std::uint8_t>(1 + rng() % 255);
    return v;
}

Bytes all_ff(std::size_t n, std::mt19937_64&) { return Bytes(n, 0xff); }

Bytes random_bytes(std::size_t n, std::mt19937_64& rng) {
    Bytes v(n);
    for (auto& b : v) b = static_cast<std::uint8_t>(rng());
    return v;
}

// Each byte nonzero with probability p (a random nonzero value).
Bytes sparse(std::size_t n, double p, std::mt19937_64& rng) {
    std::bernoulli_distribution hit(p);
    Bytes v(n, 0);
    for (auto& b : v)
        if (hit(rng)) b = static_cast<std::uint8_t>(1 + rng() % 255);
    return v;
}

// Alternating runs (lengths 1..300) of zeros, of one repeated value, and of
// random bytes.
Bytes runs(std::size_t n, std::mt19937_64& rng) {
    Bytes v;
    v.reserve(n);
    while (v.size() < n) {
        const std::size_t len = 1 + rng() % 300;
        const int kind = static_cast<int>(rng() % 3);
        const auto value = static_cast<std::uint8_t>(1 + rng() % 255);
        for (std::size_t i = 0; i < len && v.size() < n; ++i)
            v.push_back(kind == 0 ? 0 : kind == 1 ? value : static_cast<std::uint8_t>(rng()));
    }
    return v;
}

struct Pattern {
    const char* name;
    Bytes (*make)(std::size_t, std::mt19937_64&);
};

const Pattern kPatterns[] = {
    {"all-zero", all_zero},
    {"all-nonzero", all_nonzero},
    {"all-0xff", all_ff},
    {"random", random_bytes},
    {"sparse-0.1%", [](std::size_t n, std::mt19937_64& r) { return sparse(n, 0.001, r); }},
    {"sparse-1%", [](std::size_t n, std::mt19937_64& r) { return sparse(n, 0.01, r); }},
    {"sparse-5%", [](std::size_t n, std::mt19937_64& r) { return sparse(n, 0.05, r); }},
    {"sparse-30%", [](std::size_t n, std::mt19937_64& r) { return sparse(n, 0.30, r); }},
    {"sparse-90%", [](std::size_t n, std::mt19937_64& r) { return sparse(n, 0.90, r); }},
    {"runs", runs},
};

}  // namespace

TEST_CASE("zero_elim round-trips every length and pattern", "[prism][zero_elim]") {
    std::mt19937_64 rng(12345);
    for (const std::size_t n : kLengths) {
        for (const Pattern& pat : kPatterns) {
            INFO("n=" << n << " pattern=" << pat.name);
            const Bytes src = pat.make(n, rng);
            const Bytes enc = encode(src);
            CHECK(enc.size() <= n + bitmap_bytes(n));
            CHECK(enc.size() < n + n / 7 + 24);
            CHECK(encode(src) == enc);  // deterministic

            Bytes dst;
            REQUIRE(decode(enc, n, &dst) == Errc::ok);
            CHECK(dst == src);

            // Appends after what *out already holds.
            Bytes out = {1, 2, 3};
            zero_elim_encode(src.data(), src.size(), &out);
            REQUIRE(out.size() == 3 + enc.size());
            CHECK(Bytes(out.begin(), out.begin() + 3) == Bytes{1, 2, 3});
            CHECK(Bytes(out.begin() + 3, out.end()) == enc);
        }
    }
}

TEST_CASE("zero_elim all-zero chunks take at most 8 bytes", "[prism][zero_elim]") {
    for (const std::size_t n : kLengths) {
        INFO("n=" << n);
        const Bytes enc = encode(Bytes(n, 0));
        CHECK(enc.size() <= 8);
        CHECK(enc == Bytes(enc.size(), 0));
    }
    CHECK(encode(Bytes()).empty());
    CHECK(encode(Bytes(16384, 0)).size() == 4);   // 2048 -> 256 -> 32 -> 4
    CHECK(encode(Bytes(131072, 0)).size() == 4);  // 16384 -> ... -> 4
}

TEST_CASE("zero_elim shrinks sparse chunks", "[prism][zero_elim]") {
    std::mt19937_64 rng(777);
    const std::size_t n = 16384;
    const std::size_t s01 = encode(sparse(n, 0.001, rng)).size();
    const std::size_t s1 = encode(sparse(n, 0.01, rng)).size();
    const std::size_t s5 = encode(sparse(n, 0.05, rng)).size();
    INFO("0.1%: " << s01 << "  1%: " << s1 << "  5%: " << s5);
    CHECK(s01 < n / 128);
    CHECK(s1 < n / 16);
    CHECK(s5 < n / 5);
    // A single nonzero byte costs its value plus a handful of bitmap bytes.
    Bytes one(n, 0);
    one[9999] = 42;
    CHECK(encode(one).size() <= 12);
}

TEST_CASE("zero_elim rejects or canonically decodes every truncation", "[prism][zero_elim]") {
    std::mt19937_64 rng(99);
    for (const std::size_t n : {std::size_t(9), std::size_t(65), std::size_t(1000), std::size_t(16385)}) {
        for (const Bytes& src : {sparse(n, 0.02, rng), runs(n, rng), random_bytes(n, rng)}) {
            const Bytes enc = encode(src);
            INFO("n=" << n << " encoded=" << enc.size());
            std::size_t rejected = 0;
            for (std::size_t len = 0; len < enc.size(); ++len) {
                const Bytes head(enc.begin(), enc.begin() + static_cast<std::ptrdiff_t>(len));
                const Bytes tail(enc.end() - static_cast<std::ptrdiff_t>(len), enc.end());
                Bytes dst;
                rejected += decode(head, n, &dst) == Errc::corrupt_block;
                check_consistent(head, n);
                check_consistent(tail, n);
            }
            CHECK(rejected == enc.size());  // a shorter payload never adds up
            // One byte too many, anywhere.
            Bytes longer(enc);
            longer.push_back(7);
            Bytes dst;
            CHECK(decode(longer, n, &dst) == Errc::corrupt_block);
            longer.insert(longer.begin(), 7);
            longer.pop_back();
            CHECK(decode(longer, n, &dst) == Errc::corrupt_block);
        }
    }
}

TEST_CASE("zero_elim survives single-byte corruptions", "[prism][zero_elim]") {
    std::mt19937_64 rng(4242);
    for (const std::size_t n : {std::size_t(64), std::size_t(1000), std::size_t(16384)}) {
        for (const Bytes& src : {sparse(n, 0.01, rng), sparse(n, 0.2, rng), runs(n, rng), all_zero(n, rng)}) {
            const Bytes enc = encode(src);
            INFO("n=" << n << " encoded=" << enc.size());
            for (std::size_t i = 0; i < enc.size(); ++i) {
                for (const std::uint8_t x : {std::uint8_t(0x01), std::uint8_t(0x80), std::uint8_t(0xff),
                                             static_cast<std::uint8_t>(1 + rng() % 255)}) {
                    Bytes bad(enc);
                    bad[i] ^= x;
                    check_consistent(bad, n);
                }
            }
        }
    }
}

TEST_CASE("zero_elim random payloads never crash the decoder", "[prism][zero_elim]") {
    std::mt19937_64 rng(2024);
    for (int iter = 0; iter < 20000; ++iter) {
        const std::size_t n = rng() % 4 == 0 ? rng() % 20000 : rng() % 200;
        const std::size_t size = rng() % (n + 40);
        Bytes payload(size);
        // Mostly zero bytes, so that bitmaps are plausible more often.
        for (auto& b : payload) b = rng() % 3 ? 0 : static_cast<std::uint8_t>(rng());
        check_consistent(payload, n);
    }
}

TEST_CASE("zero_elim rejects a mismatched n", "[prism][zero_elim]") {
    // Dense chunks of whole bitmap bytes: any other n breaks the lengths or
    // sets padding bits.
    std::mt19937_64 rng(31337);
    for (const std::size_t n : {std::size_t(8), std::size_t(64), std::size_t(1000), std::size_t(16384)}) {
        const Bytes enc = encode(random_bytes(n, rng));
        for (const std::size_t m : {n - 1, n + 1, n - 7, n + 7, n - 8, n + 8, n / 2, 2 * n, std::size_t(0)}) {
            INFO("n=" << n << " decoded as " << m);
            Bytes dst;
            CHECK(decode(enc, m, &dst) == Errc::corrupt_block);
        }
    }
    // n is not stored, so trailing zero bytes within the last bitmap byte are
    // ambiguous: 65 random bytes decode as 66 too (one more zero byte), just
    // as 16 and 15 zero bytes both encode as two zero bytes. Such a payload is
    // then exactly the encoding of what it decodes to.
    const Bytes src = random_bytes(65, rng);
    Bytes dst;
    REQUIRE(decode(encode(src), 66, &dst) == Errc::ok);
    CHECK(Bytes(dst.begin(), dst.begin() + 65) == src);
    CHECK(dst[65] == 0);
    CHECK(encode(Bytes(16, 0)) == encode(Bytes(15, 0)));
    for (const std::size_t n : {std::size_t(16), std::size_t(65), std::size_t(1000), std::size_t(16384)}) {
        for (const Bytes& s : {sparse(n, 0.01, rng), random_bytes(n, rng)}) {
            const Bytes enc = encode(s);
            for (const std::size_t m : {n - 1, n + 1, n - 8, n + 8, n / 2, 2 * n}) check_consistent(enc, m);
        }
    }
}

TEST_CASE("zero_elim rejects non-canonical payloads", "[prism][zero_elim]") {
    Bytes dst;
    // n = 0 takes an empty payload only.
    CHECK(decode({}, 0, &dst) == Errc::ok);
    CHECK(decode({0}, 0, &dst) == Errc::corrupt_block);
    // n = 5: bitmap byte (raw, one byte) after the nonzero values.
    CHECK(decode({7, 0x01}, 5, &dst) == Errc::ok);
    CHECK(dst == Bytes{7, 0, 0, 0, 0});
    CHECK(decode({7, 0x21}, 5, &dst) == Errc::corrupt_block);  // padding bit 5
    CHECK(decode({0, 0x01}, 5, &dst) == Errc::corrupt_block);  // a "nonzero" value of 0
    CHECK(decode({7, 7, 0x01}, 5, &dst) == Errc::corrupt_block);  // value left over
    CHECK(decode({0x03}, 5, &dst) == Errc::corrupt_block);        // values missing
    // n = 72: B0 has 9 bytes, so B1 = changed bitmap of B0 (9 bits, 2 bytes)
    // and K0 = the changed bytes of B0. Chunk: byte 0 = 5, all else zero, so
    // B0 = 01 00 .. 00, B1 = 03 00, K0 = 01 00.
    const Bytes good = {5, 0x01, 0x00, 0x03, 0x00};
    CHECK(decode(good, 72, &dst) == Errc::ok);
    CHECK(dst[0] == 5);
    CHECK(dst == [] { Bytes v(72, 0); v[0] = 5; return v; }());
    CHECK(encode(dst) == good);
    CHECK(decode({5, 0x01, 0x03, 0x00}, 72, &dst) == Errc::corrupt_block);        // K0 short
    CHECK(decode({5, 0x01, 0x01, 0x00}, 72, &dst) == Errc::corrupt_block);        // B0 stays 01
    CHECK(decode({5, 0x01, 0x01, 0x03, 0x00}, 72, &dst) == Errc::corrupt_block);  // kept 01 repeats
    CHECK(decode({5, 0x01, 0x00, 0x03, 0x02}, 72, &dst) == Errc::corrupt_block);  // padding bit 9
    CHECK(decode({0x00, 0x01, 0x00}, 72, &dst) == Errc::corrupt_block);  // kept 00 repeats B0[-1] = 0
    CHECK(decode({5, 5, 0x01, 0x00, 0x03, 0x00}, 72, &dst) == Errc::corrupt_block);  // extra value
}
