// test_team_decode.cpp - the block decoder run by a team of ranks
// (core/team.hpp), as a GPU warp runs it, gives the CPU backend's bytes and
// status: every mapping, dtype and size, teams smaller and larger
// than the block's rANS lane count, phases played forwards and backwards
// (a rank that read another rank's write of the same phase would change
// the result), and damaged payloads.
#include <catch2/catch.hpp>

#include <cstdint>
#include <cstdio>
#include <vector>

#include "backend.hpp"
#include "mapping/block_batch.hpp"
#include "mapping/block_codec.hpp"
#include "test_support.hpp"

namespace {

using mans::DType;
using mans::Errc;
using namespace mans::detail;
using namespace mans_test;

struct Decoded {
    Errc e;
    Bytes out;
};

// Decodes with a team of `size` ranks in fixed scratch and shared words
// that hold garbage, as on a GPU; one guard byte after the output.
Decoded decode_as_team(DType dt, const Bytes& payload, std::size_t n, unsigned size, bool reverse) {
    const std::size_t esize = mans::dtype_size(dt);
    std::vector<std::uint8_t> scratch(block_scratch_bytes(n) + 16, 0xA5);
    auto* base = reinterpret_cast<std::uint8_t*>((reinterpret_cast<std::uintptr_t>(scratch.data()) + 15) &
                                                 ~std::uintptr_t{15});
    const FixedBlockScratch sc = carve_block_scratch(base, n);
    std::uint64_t area[kTeamSharedWords];
    for (std::uint64_t& w : area) w = 0xA5A5A5A5A5A5A5A5ull;
    Decoded d{Errc::ok, Bytes(n * esize + 1, 0xEE)};
    d.e = decode_block_payload(dt, payload.data(), payload.size(), n, d.out.data(), ReferenceLanes{}, sc,
                               LoopTeam{size, area, reverse});
    return d;
}

// Appends a zero byte to the raw-bit section at the end of a payload and
// counts it in the section's u32 length (the last u32 that equals the
// number of bytes after it); false when there is none.
bool grow_raw_bits(Bytes* p) {
    for (std::size_t len = 0; len + 4 <= p->size(); ++len) {
        const std::size_t at = p->size() - len - 4;
        const std::uint32_t v = std::uint32_t((*p)[at]) | std::uint32_t((*p)[at + 1]) << 8 |
                                std::uint32_t((*p)[at + 2]) << 16 | std::uint32_t((*p)[at + 3]) << 24;
        if (v != len) continue;
        const std::uint32_t grown = v + 1;
        for (int b = 0; b < 4; ++b) (*p)[at + b] = static_cast<std::uint8_t>(grown >> (8 * b));
        p->push_back(0);
        return true;
    }
    return false;
}

// The CPU backend's decode (its SIMD kernels, growing scratch): the reference.
Decoded decode_on_cpu(DType dt, const Bytes& payload, std::size_t n) {
    static BlockScratch scratch;
    Decoded d{Errc::ok, Bytes(n * mans::dtype_size(dt) + 1, 0xEE)};
    d.e = decode_block(dt, payload.data(), payload.size(), n, d.out.data(), cpu_backend().kernels(false), scratch);
    return d;
}

struct TeamShape {
    unsigned size;
    bool reverse;
};
// 3 and 7 split 32 lanes unevenly; 64 leaves ranks without a lane.
constexpr TeamShape kTeams[] = {{2, false}, {3, true}, {7, false}, {32, false}, {32, true}, {64, true}};

}  // namespace

TEST_CASE("a team decodes every block mapping as the CPU backend does", "[team]") {
    const auto& scalar = mans::detail::cpu_backend().kernels(true);
    const ModeHint hints[] = {ModeHint::automatic,    ModeHint::stored,      ModeHint::constant,
                              ModeHint::token_center, ModeHint::token_delta, ModeHint::token_repeat,
                              ModeHint::adm,          ModeHint::byte_planes, ModeHint::dictionary};
    BlockScratch enc;
    Bytes payload;
    std::size_t decodes = 0, by_mode[8] = {};
    for (DType dt : kAllDTypes) {
        const std::size_t esize = mans::dtype_size(dt);
        for (Dist dist : kAllDists) {
            // 20000 and the full block use 32 lanes, 8193 uses 16, the small ones fewer.
            for (std::size_t n : {std::size_t{1}, std::size_t{31}, std::size_t{513}, std::size_t{8193},
                                  std::size_t{20000}, mans::kDefaultBlockBytes / esize}) {
                const Bytes raw = generate(dt, dist, n, 77 + n);
                for (ModeHint h : hints) {
                    payload.clear();
                    encode_block(dt, raw.data(), n, scalar, enc, payload, h);
                    ++by_mode[payload[0] & 7];
                    INFO(mans::dtype_name(dt) << " " << dist_name(dist) << " n=" << n << " mode "
                                              << int(payload[0]));
                    const Decoded cpu = decode_on_cpu(dt, payload, n);
                    REQUIRE(cpu.e == Errc::ok);
                    REQUIRE((Bytes(cpu.out.begin(), cpu.out.end() - 1) == raw));
                    for (const TeamShape& t : kTeams) {
                        INFO("team of " << t.size << (t.reverse ? ", phases reversed" : ""));
                        const Decoded team = decode_as_team(dt, payload, n, t.size, t.reverse);
                        CHECK(team.e == Errc::ok);
                        CHECK((team.out == cpu.out));  // the guard byte too
                        ++decodes;
                    }
                }
            }
        }
    }
    // Every mapping was decoded by teams (modes 0..5).
    for (int m = 0; m <= 5; ++m) {
        INFO("mode " << m);
        CHECK(by_mode[m] > 10);
    }
    std::printf("  team decodes: %zu, all equal to the CPU backend's\n", decodes);
}

TEST_CASE("a team gives the CPU backend's status on damaged payloads", "[team]") {
    const auto& scalar = mans::detail::cpu_backend().kernels(true);
    const ModeHint hints[] = {ModeHint::token_center, ModeHint::token_delta, ModeHint::token_repeat,
                              ModeHint::adm,          ModeHint::byte_planes, ModeHint::dictionary};
    BlockScratch enc;
    Bytes payload;
    std::uint64_t lcg = 12345;
    auto next = [&lcg] {
        lcg = lcg * 6364136223846793005ull + 1442695040888963407ull;
        return lcg >> 33;
    };
    std::size_t damaged = 0, still_ok = 0, refused = 0, spare_bytes = 0;
    for (DType dt : kAllDTypes) {
        for (Dist dist : {Dist::skewed, Dist::small_range_2100, Dist::quant_runs, Dist::sparse_values}) {
            for (std::size_t n : {std::size_t{40}, std::size_t{2000}, std::size_t{17000}}) {
                const Bytes raw = generate(dt, dist, n, 5 + n);
                for (ModeHint h : hints) {
                    payload.clear();
                    encode_block(dt, raw.data(), n, scalar, enc, payload, h);
                    for (int k = 0; k < 13; ++k) {
                        Bytes bad = payload;
                        // One to three damaged bytes, a cut-off tail, or one
                        // spare byte in the raw-bit section that ends token
                        // and ADM payloads (u32 length, then the bits).
                        if (k == 12) {
                            if (!grow_raw_bits(&bad)) continue;
                            ++spare_bytes;
                        } else if (k == 11) {
                            bad.resize(bad.size() - 1 - next() % (bad.size() > 8 ? 8 : bad.size() - 1));
                        } else {
                            for (int f = 0, flips = 1 + k % 3; f < flips; ++f)
                                bad[next() % bad.size()] ^= static_cast<std::uint8_t>(1u << (next() % 8));
                        }
                        const Decoded cpu = decode_on_cpu(dt, bad, n);
                        ++damaged;
                        (cpu.e == Errc::ok ? still_ok : refused) += 1;
                        for (const TeamShape& t : kTeams) {
                            INFO(mans::dtype_name(dt) << " " << dist_name(dist) << " n=" << n << " damage " << k
                                                      << ", team of " << t.size);
                            const Decoded team = decode_as_team(dt, bad, n, t.size, t.reverse);
                            CHECK(team.e == cpu.e);
                            CHECK(team.out.back() == 0xEE);  // never writes past the block
                            if (cpu.e == Errc::ok) CHECK((team.out == cpu.out));
                        }
                    }
                }
            }
        }
    }
    // Both outcomes occur (a flipped raw bit can decode to other values).
    CHECK(refused > 100);
    CHECK(still_ok > 10);
    CHECK(spare_bytes > 100);
    std::printf("  damaged payloads: %zu (%zu refused, %zu decodable), teams agree\n", damaged, refused, still_ok);
}
