// test_xxh3_hd.cpp - the GPU's XXH3-64 (core/xxh3_hd.hpp, written from the
// xxHash specification) against libxxhash, which the CPU uses: a block
// checksum computed on a device must be the CPU's.
#include <catch2/catch.hpp>

#include <xxhash.h>

#include <cstdint>
#include <random>
#include <vector>

#include "core/xxh3_hd.hpp"
#include "thread_team.hpp"

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

TEST_CASE("xxh3_64_team equals XXH3_64bits for teams of 1 to 64 members", "[hd][xxh3][team][one_thread]") {
    // Each rank takes accumulators r, r + size, ...: teams smaller than,
    // equal to and larger than the eight; phases also run in reverse.
    std::mt19937_64 rng(13);
    std::vector<std::uint8_t> buf(131072 + 7);
    for (auto& b : buf) b = static_cast<std::uint8_t>(rng());
    std::uint64_t area[mans::detail::kTeamSharedWords];
    std::size_t checked = 0;
    for (unsigned size : {1u, 2u, 3u, 7u, 8u, 9u, 32u, 64u})
        for (bool reverse : {false, true})
            for (std::size_t n : {std::size_t{0}, std::size_t{240}, std::size_t{241}, std::size_t{1024},
                                  std::size_t{1025}, std::size_t{4096 + 63}, std::size_t{131072}}) {
                for (auto& w : area) w = 0xA5A5A5A5A5A5A5A5ull;
                const mans::detail::LoopTeam team{size, area, reverse};
                INFO("team of " << size << (reverse ? " (reversed)" : "") << ", n=" << n);
                REQUIRE(mans::detail::xxh3_64_team(team, buf.data() + 7, n) == XXH3_64bits(buf.data() + 7, n));
                ++checked;
            }
    REQUIRE(mans::detail::xxh3_64_team(mans::detail::SoloTeam{}, buf.data(), buf.size()) ==
            XXH3_64bits(buf.data(), buf.size()));
    REQUIRE(checked == 8 * 2 * 7);
}

TEST_CASE("xxh3_64_team in teams of real threads: every member gets libxxhash's value", "[hd][xxh3][team][thread_team]") {
    // Members run the code between phases themselves (a LoopTeam plays it
    // once): each must read the accumulators the others wrote.
    std::mt19937_64 rng(14);
    std::vector<std::uint8_t> buf(131072 + 5);
    for (auto& b : buf) b = static_cast<std::uint8_t>(rng());
    for (unsigned size : {3u, 8u, 32u})
        for (std::size_t n : {std::size_t{241}, std::size_t{4096 + 63}, buf.size()}) {
            mans_test::ThreadTeamState st(size);
            std::vector<std::uint64_t> got(size, 0);
            mans_test::run_members(size, [&](unsigned r) {
                got[r] = mans::detail::xxh3_64_team(mans_test::ThreadTeam{r, size, &st}, buf.data(), n);
            });
            INFO(size << " threads, n=" << n);
            for (std::uint64_t v : got) REQUIRE(v == XXH3_64bits(buf.data(), n));
        }
}
