// test_xxh3_hd.cpp - the GPU's XXH3-64 (core/xxh3_hd.hpp, written from the
// xxHash specification) against libxxhash, which the CPU uses: a block
// checksum computed on a device must be the CPU's.
#include <catch2/catch.hpp>

#include <xxhash.h>

#include <cstdint>
#include <random>
#include <vector>

#include "core/xxh3_hd.hpp"

using mans::detail::xxh3_64_hd;

TEST_CASE("xxh3_64_hd equals XXH3_64bits for every length to 4 KiB and every alignment", "[hd][xxh3]") {
    // Covers each path (0, 1-3, 4-8, 9-16, 17-128, 129-240, large) and the
    // large path's boundaries: 1 to 4 blocks, full and partial last stripes.
    std::mt19937_64 rng(11);
    std::vector<std::uint8_t> buf(4096 + 64 + 8);
    for (auto& b : buf) b = static_cast<std::uint8_t>(rng());
    std::size_t mismatches = 0;
    for (std::size_t n = 0; n <= 4096 + 64; ++n)
        for (std::size_t offset : {0, 1, 3, 7}) {
            const std::uint8_t* p = buf.data() + offset;
            if (xxh3_64_hd(p, n) != XXH3_64bits(p, n)) {
                if (mismatches++ < 5) UNSCOPED_INFO("mismatch at n=" << n << " offset=" << offset);
            }
        }
    REQUIRE(mismatches == 0);
}

TEST_CASE("xxh3_64_hd equals XXH3_64bits on large and degenerate inputs", "[hd][xxh3]") {
    std::mt19937_64 rng(12);
    for (std::size_t n : {std::size_t{131072}, std::size_t{131072 * 2 + 5}, std::size_t{(1u << 20) + 7}}) {
        std::vector<std::uint8_t> random(n), zeros(n, 0), ones(n, 0xff);
        for (auto& b : random) b = static_cast<std::uint8_t>(rng());
        for (const auto* v : {&random, &zeros, &ones}) {
            INFO("n=" << n);
            REQUIRE(xxh3_64_hd(v->data(), n) == XXH3_64bits(v->data(), n));
        }
    }
}
