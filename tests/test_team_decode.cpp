// test_team_decode.cpp - the block decoder run by a team of ranks
// (core/team.hpp), as a GPU warp runs it, gives the CPU backend's bytes and
// status: every mapping, dtype and size, teams smaller and larger
// than the block's rANS lane count, phases played forwards and backwards
// (a rank that read another rank's write of the same phase would change
// the result), and damaged payloads. A team of real threads (one per
// member, barriers, one leader, a ballot) runs the warp's rANS lane loop
// too, as close to a warp as a CPU gets; under ThreadSanitizer it also
// looks for races between members.
#include <catch2/catch.hpp>

#include <cstdint>
#include <cstdio>
#include <vector>

#include "backend.hpp"
#include "mapping/block_batch.hpp"
#include "mapping/block_codec.hpp"
#include "test_support.hpp"
#include "thread_team.hpp"

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
// that hold garbage, as on a GPU; one guard byte after the output. The
// scratch is sized for exactly this block: for n elements of its type (the
// host-memory API's slices) or for a block of any type of its bytes (the
// device API's), or for one byte less. A dictionary or index part too small
// for the block is refused by dict()/index() (the block fails); only the
// last part (tokens) would show as a write past the vector under ASan.
enum class Slice { per_type, any_type, any_type_one_short };
Decoded decode_as_team(DType dt, const Bytes& payload, std::size_t n, unsigned size, bool reverse,
                       Slice shape = Slice::per_type) {
    const std::size_t esize = mans::dtype_size(dt);
    const std::size_t slice_n = shape == Slice::per_type ? n : n * esize - (shape == Slice::any_type_one_short);
    const unsigned slice_esize = shape == Slice::per_type ? static_cast<unsigned>(esize) : 1u;
    std::vector<std::uint8_t> scratch(block_scratch_bytes(slice_n, slice_esize) + 16, 0xA5);
    auto* base = reinterpret_cast<std::uint8_t*>((reinterpret_cast<std::uintptr_t>(scratch.data()) + 15) &
                                                 ~std::uintptr_t{15});
    const FixedBlockScratch sc = carve_block_scratch(base, slice_n, slice_esize);
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

// The rANS lanes of a team of real threads (thread_team.hpp) run as on a
// warp: rans_decode_as_member with a ballot built from the barrier.
struct ThreadLanes {
    unsigned rank, n;
    ThreadTeamState* st;
    bool operator()(const RansDecodeArgs& a) const {
        st->bar.wait();  // tables and words are written
        const auto ballot = [this](bool p) { return st->ballot(rank, n, p); };
        const bool ok = rans_decode_as_member(a, rank, ballot);
        st->bar.wait();
        return ok;
    }
};

Decoded decode_as_thread_team(DType dt, const Bytes& payload, std::size_t n, unsigned size) {
    const std::size_t esize = mans::dtype_size(dt);
    std::vector<std::uint8_t> scratch(block_scratch_bytes(n, static_cast<unsigned>(esize)) + 16, 0xA5);
    auto* base = reinterpret_cast<std::uint8_t*>((reinterpret_cast<std::uintptr_t>(scratch.data()) + 15) &
                                                 ~std::uintptr_t{15});
    const FixedBlockScratch sc = carve_block_scratch(base, n, static_cast<unsigned>(esize));
    ThreadTeamState st(size);
    Decoded d{Errc::ok, Bytes(n * esize + 1, 0xEE)};
    std::vector<Errc> member(size, Errc::internal);
    run_members(size, [&](unsigned r) {
        member[r] = decode_block_payload(dt, payload.data(), payload.size(), n, d.out.data(),
                                         ThreadLanes{r, size, &st}, sc, ThreadTeam{r, size, &st});
    });
    d.e = member[0];
    for (Errc e : member)
        if (e != member[0]) d.e = static_cast<Errc>(-1000);  // members disagree: never a real status
    return d;
}

struct TeamShape {
    unsigned size;
    bool reverse;
};
// 3 and 7 split 32 lanes unevenly; 64 leaves ranks without a lane.
constexpr TeamShape kTeams[] = {{2, false}, {3, true}, {7, false}, {32, false}, {32, true}, {64, true}};

}  // namespace

namespace {

// The payloads a test case decodes: the CPU encoder's, one for every dtype,
// distribution, size (0: a full default block) and mapping hint, in that
// loop order; fn(dt, dist, n, raw, payload).
struct PayloadSet {
    std::vector<DType> dtypes;
    std::vector<Dist> dists;
    std::vector<std::size_t> sizes;
    std::vector<ModeHint> hints;
    std::uint64_t seed;
};
template <typename F>
void for_each_payload(const PayloadSet& set, F&& fn) {
    const auto& scalar = cpu_backend().kernels(true);
    BlockScratch enc;
    Bytes payload;
    for (DType dt : set.dtypes)
        for (Dist dist : set.dists)
            for (std::size_t size : set.sizes) {
                const std::size_t n = size ? size : mans::kDefaultBlockBytes / mans::dtype_size(dt);
                const Bytes raw = generate(dt, dist, n, set.seed + n);
                for (ModeHint h : set.hints) {
                    payload.clear();
                    encode_block(dt, raw.data(), n, scalar, enc, payload, h);
                    fn(dt, dist, n, raw, payload);
                }
            }
}

// A deterministic stream of pseudo-random numbers for the damage.
struct Lcg {
    std::uint64_t state;
    std::uint64_t next() {
        state = state * 6364136223846793005ull + 1442695040888963407ull;
        return state >> 33;
    }
};

const std::vector<DType> kDTypes(std::begin(kAllDTypes), std::end(kAllDTypes));

}  // namespace

TEST_CASE("a team decodes every block mapping as the CPU backend does", "[team][one_thread]") {
    std::size_t decodes = 0, by_mode[8] = {};
    // 20000 and the full block (0) use 32 lanes, 8193 uses 16, the small ones fewer.
    const PayloadSet set{kDTypes,
                         std::vector<Dist>(std::begin(kAllDists), std::end(kAllDists)),
                         {1, 31, 513, 8193, 20000, 0},
                         {ModeHint::automatic, ModeHint::stored, ModeHint::constant, ModeHint::token_center,
                          ModeHint::token_delta, ModeHint::token_repeat, ModeHint::adm, ModeHint::byte_planes,
                          ModeHint::dictionary},
                         77};
    for_each_payload(set, [&](DType dt, Dist dist, std::size_t n, const Bytes& raw, const Bytes& payload) {
        ++by_mode[payload[0] & 7];
        INFO(mans::dtype_name(dt) << " " << dist_name(dist) << " n=" << n << " mode " << int(payload[0]));
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
        const Decoded any = decode_as_team(dt, payload, n, 32, false, Slice::any_type);
        CHECK(any.e == Errc::ok);
        CHECK((any.out == cpu.out));
    });
    // Every mapping was decoded by teams (modes 0..5).
    for (int m = 0; m <= 5; ++m) {
        INFO("mode " << m);
        CHECK(by_mode[m] > 10);
    }
    std::printf("  team decodes: %zu, all equal to the CPU backend's\n", decodes);
}

TEST_CASE("scratch slices sized by element size hold the largest dictionaries", "[team][one_thread]") {
    // A full default block in dictionary mode with an entry per element
    // (FORMAT.md 2.4: the values 0..n-1, then a stored u32 block of indices,
    // a permutation), the most a slice's dictionary and index parts must
    // hold. No encoder writes it (stored is shorter), but a decoder must
    // take it as the CPU does.
    for (DType dt : {DType::u16, DType::i32, DType::u64}) {
        const std::size_t esize = mans::dtype_size(dt), n = mans::kDefaultBlockBytes / esize;
        Bytes payload{static_cast<std::uint8_t>(BlockMode::dictionary)};
        for (std::uint64_t v = n - 1; ; v >>= 7) {  // count - 1, LEB128
            payload.push_back(static_cast<std::uint8_t>((v & 0x7f) | (v > 0x7f ? 0x80 : 0)));
            if (v <= 0x7f) break;
        }
        payload.insert(payload.end(), esize, 0);  // first value 0
        payload.insert(payload.end(), n - 1, 0);  // gaps of 1
        payload.push_back(static_cast<std::uint8_t>(BlockMode::stored));
        for (std::size_t i = 0; i < n; ++i) {
            const std::uint32_t k = static_cast<std::uint32_t>((i * 40503u) & (n - 1));  // n is a power of 2
            for (int b = 0; b < 4; ++b) payload.push_back(static_cast<std::uint8_t>(k >> (8 * b)));
        }
        INFO(mans::dtype_name(dt));
        const Decoded cpu = decode_on_cpu(dt, payload, n);
        REQUIRE(cpu.e == Errc::ok);
        for (Slice shape : {Slice::per_type, Slice::any_type}) {
            const Decoded d = decode_as_team(dt, payload, n, 32, false, shape);
            CHECK(d.e == Errc::ok);
            CHECK((d.out == cpu.out));
        }
        // A slice one byte short of the block: its dictionary is refused.
        const Decoded short_slice = decode_as_team(dt, payload, n, 32, false, Slice::any_type_one_short);
        CHECK(short_slice.e == Errc::corrupt_block);
        CHECK(short_slice.out.back() == 0xEE);
    }
}

TEST_CASE("a team gives the CPU backend's status on damaged payloads", "[team][one_thread]") {
    Lcg rng{12345};
    std::size_t damaged = 0, still_ok = 0, refused = 0, spare_bytes = 0;
    const PayloadSet set{kDTypes,
                         {Dist::skewed, Dist::small_range_2100, Dist::quant_runs, Dist::sparse_values},
                         {40, 2000, 17000},
                         {ModeHint::token_center, ModeHint::token_delta, ModeHint::token_repeat, ModeHint::adm,
                          ModeHint::byte_planes, ModeHint::dictionary},
                         5};
    for_each_payload(set, [&](DType dt, Dist dist, std::size_t n, const Bytes&, const Bytes& payload) {
        for (int k = 0; k < 13; ++k) {
            Bytes bad = payload;
            // One to three damaged bytes, a cut-off tail, or one spare byte in
            // the raw-bit section that ends token and ADM payloads (u32
            // length, then the bits).
            if (k == 12) {
                if (!grow_raw_bits(&bad)) continue;
                ++spare_bytes;
            } else if (k == 11) {
                bad.resize(bad.size() - 1 - rng.next() % (bad.size() > 8 ? 8 : bad.size() - 1));
            } else {
                for (int f = 0, flips = 1 + k % 3; f < flips; ++f)
                    bad[rng.next() % bad.size()] ^= static_cast<std::uint8_t>(1u << (rng.next() % 8));
            }
            const Decoded cpu = decode_on_cpu(dt, bad, n);
            ++damaged;
            (cpu.e == Errc::ok ? still_ok : refused) += 1;
            for (const TeamShape& t : kTeams) {
                INFO(mans::dtype_name(dt) << " " << dist_name(dist) << " n=" << n << " damage " << k << ", team of "
                                          << t.size);
                const Decoded team = decode_as_team(dt, bad, n, t.size, t.reverse);
                CHECK(team.e == cpu.e);
                CHECK(team.out.back() == 0xEE);  // never writes past the block
                if (cpu.e == Errc::ok) CHECK((team.out == cpu.out));
            }
        }
    });
    // Both outcomes occur (a flipped raw bit can decode to other values).
    CHECK(refused > 100);
    CHECK(still_ok > 10);
    CHECK(spare_bytes > 100);
    std::printf("  damaged payloads: %zu (%zu refused, %zu decodable), teams agree\n", damaged, refused, still_ok);
}

TEST_CASE("a team of threads with a ballot decodes as the CPU backend does, damaged payloads too", "[team][thread_team]") {
    Lcg rng{99};
    std::size_t decodes = 0, refused = 0;
    // 31 elements: 1 rANS lane; 3000: 4 lanes.
    const PayloadSet set{{DType::u8, DType::u16, DType::i32, DType::u64},
                         {Dist::skewed},
                         {31, 3000},
                         {ModeHint::stored, ModeHint::constant, ModeHint::token_center, ModeHint::token_delta,
                          ModeHint::adm, ModeHint::byte_planes, ModeHint::dictionary},
                         7};
    for_each_payload(set, [&](DType dt, Dist, std::size_t n, const Bytes&, const Bytes& payload) {
        for (int damage = 0; damage < 2; ++damage) {
            Bytes p = payload;
            if (damage) {
                const std::uint64_t r = rng.next();
                p[r % p.size()] ^= static_cast<std::uint8_t>(1u << ((r >> 13) % 8));
            }
            const Decoded cpu = decode_on_cpu(dt, p, n);
            refused += cpu.e != Errc::ok;
            // The warp form of the rANS lanes needs a member per lane: 32.
            INFO(mans::dtype_name(dt) << " n=" << n << " mode " << int(p[0]) << (damage ? " damaged" : ""));
            const Decoded team = decode_as_thread_team(dt, p, n, 32);
            CHECK(team.e == cpu.e);
            CHECK(team.out.back() == 0xEE);
            if (cpu.e == Errc::ok) CHECK((team.out == cpu.out));
            ++decodes;
        }
    });
    CHECK(refused > 10);
    std::printf("  thread-team decodes: %zu (%zu of the payloads refused), all equal to the CPU backend's\n",
                decodes, refused);
}
