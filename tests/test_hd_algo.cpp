// test_hd_algo.cpp - the pieces of the shared (MANS_HD) coders that a GPU
// runs differently from the CPU: the GPU sorts with heap_sort_u64, and it
// reads log2_small_fix16's table from its own copy in device memory (both
// copies are the compiler's evaluation of make_log2_small_table). Both must
// give the CPU's results, or GPU streams would differ. A warp sorts the
// encoder's median sample with team_sort_u64. The rANS lane step computes a
// token's context (a count of leading zeros) where the CPU once looked it up.
// And the other way round: the CPU's own host loops for one thread (the
// hybrid tokens and their inverse, radix sorts, block statistics, the
// context histogram, the mode choice's context re-estimates, and the AVX2
// tokenizer of backends/cpu) against the shared code the GPU keeps running.
#include <catch2/catch.hpp>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

#include "backend.hpp"
#include "core/hd_algo.hpp"
#include "mapping/block_batch.hpp"
#include "mapping/block_encode.hpp"
#include "mapping/hybrid_tokens.hpp"
#include "mapping/lane_tokens.hpp"
#include "core/team.hpp"
#include "entropy/cost_model.hpp"
#include "entropy/rans.hpp"
#include "entropy/token_stream_encode.hpp"
#include "test_support.hpp"
#include "thread_team.hpp"

using namespace mans::detail;

TEST_CASE("heap_sort_u64, unique_u64 and lower_bound_u64 equal the standard algorithms", "[hd]") {
    std::mt19937_64 rng(7);
    for (std::size_t n : {0, 1, 2, 3, 17, 256, 1000, 65537}) {
        for (int spread : {3, 1000, 0}) {
            std::vector<std::uint64_t> a(n);
            for (auto& v : a) v = spread ? rng() % static_cast<std::uint64_t>(spread) : rng();
            std::vector<std::uint64_t> heap = a, ref = a;
            heap_sort_u64(heap.data(), heap.size());
            std::sort(ref.begin(), ref.end());
            INFO("n=" << n << " spread=" << spread);
            REQUIRE(heap == ref);
            const std::size_t u = unique_u64(heap.data(), heap.size());
            ref.erase(std::unique(ref.begin(), ref.end()), ref.end());
            REQUIRE(u == ref.size());
            REQUIRE(std::equal(ref.begin(), ref.end(), heap.begin()));
            for (int probe = 0; probe < 50; ++probe) {
                const std::uint64_t v = spread ? rng() % static_cast<std::uint64_t>(spread + 2) : rng();
                CHECK(lower_bound_u64(heap.data(), u, v) ==
                      static_cast<std::size_t>(std::lower_bound(ref.begin(), ref.end(), v) - ref.begin()));
            }
        }
    }
}

TEST_CASE("radix_sort_u64 equals std::sort for keys of every width", "[hd]") {
    std::mt19937_64 rng(41);
    for (unsigned bits : {1u, 8u, 11u, 16u, 32u, 33u, 64u})
        for (std::size_t n : {0, 1, 2, 255, 2048, 40000})
            for (int shape = 0; shape < 3; ++shape) {
                const std::uint64_t mask = bits == 64 ? ~std::uint64_t{0} : (std::uint64_t{1} << bits) - 1;
                std::vector<std::uint64_t> a(n), tmp(n);
                const std::uint64_t base = rng() & mask;
                for (auto& v : a) {
                    // uniform, clustered (high bytes all equal: skipped passes), few values
                    v = shape == 0 ? rng() : shape == 1 ? base + rng() % 300 : base ^ (rng() % 3 << (bits - 1));
                    v &= mask;
                }
                std::vector<std::uint64_t> ref = a;
                std::sort(ref.begin(), ref.end());
                radix_sort_u64(a.data(), n, tmp.data(), bits);
                INFO("bits=" << bits << " n=" << n << " shape " << shape);
                REQUIRE(a == ref);
            }
}

TEST_CASE("a radix sort of (value, element) pairs gives the dictionary and indices of sort, unique and lower_bound", "[hd]") {
    // The CPU dictionary of 32-bit values (put_dictionary): pairs sorted on
    // their high half only, then dictionary_from_sorted_pairs.
    std::mt19937_64 rng(59);
    for (std::size_t n : {1, 2, 100, 5000, 65536})
        for (int shape = 0; shape < 3; ++shape) {
            std::vector<std::uint64_t> values(n);
            for (auto& v : values) {
                // few values with holes, all distinct-ish, the type's ends
                v = shape == 0 ? (rng() % 40) * 1000003u : shape == 1 ? rng() >> 32 : (rng() % 2 ? 0xffffffffu : 0u);
                v &= 0xffffffffu;
            }
            std::vector<std::uint64_t> pairs(n), tmp(n);
            for (std::size_t i = 0; i < n; ++i) pairs[i] = values[i] << 32 | i;
            radix_sort_u64(pairs.data(), n, tmp.data(), 64, 32);
            std::vector<std::uint32_t> index(n, 0xdeadbeef);
            const std::size_t size = dictionary_from_sorted_pairs(pairs.data(), n, index.data());
            std::vector<std::uint64_t> want = values;
            std::sort(want.begin(), want.end());
            want.erase(std::unique(want.begin(), want.end()), want.end());
            INFO("n=" << n << " shape " << shape);
            REQUIRE(size == want.size());
            REQUIRE(std::equal(want.begin(), want.end(), pairs.begin()));
            for (std::size_t i = 0; i < n; ++i)
                REQUIRE(index[i] == static_cast<std::uint32_t>(std::lower_bound(want.begin(), want.end(), values[i]) -
                                                               want.begin()));
        }
}

// The table is evaluated at compile time: these hold before any test runs.
static_assert(kLog2SmallHost.v[0] == 0 && kLog2SmallHost.v[1] == 0 && kLog2SmallHost.v[2] == 65536);
static_assert(kLog2SmallHost.v[3] == 103872 && kLog2SmallHost.v[4096] == 12 * 65536);
static_assert(make_log2_small_table().v[kLog2SmallEntries - 1] == log2_fix16(kLog2SmallEntries - 1));

TEST_CASE("log2_small_fix16's table equals log2_fix16 and the real log2", "[hd]") {
    for (std::uint32_t x = 0; x < 5000; ++x) REQUIRE(log2_small_fix16(x) == log2_fix16(x));
    // floor(log2(x) * 65536), within the squaring's rounding (never above).
    for (std::uint64_t x : {3ull, 5ull, 1000ull, 4097ull, 123456789ull, ~0ull}) {
        const double exact = std::log2(static_cast<double>(x)) * 65536.0;
        INFO(x);
        CHECK(static_cast<double>(log2_fix16(x)) <= exact + 1e-6);
        CHECK(static_cast<double>(log2_fix16(x)) >= exact - 2.0);
    }
}

TEST_CASE("team_sort_u64 sorts any length with teams of 1-64 ranks", "[hd][one_thread]") {
    std::mt19937_64 rng(8);
    std::vector<std::uint64_t> area(kTeamSharedWords);
    for (std::size_t n = 0; n <= 1100; n += n < 70 ? 1 : 37)
        for (int spread : {3, 1000, 0}) {
            std::vector<std::uint64_t> a(n);
            for (auto& v : a) v = spread ? rng() % static_cast<std::uint64_t>(spread) : rng();
            std::vector<std::uint64_t> ref = a;
            std::sort(ref.begin(), ref.end());
            for (unsigned size : {1u, 2u, 3u, 32u, 64u})
                for (bool reverse : {false, true}) {
                    INFO("n=" << n << " spread=" << spread << " ranks=" << size << (reverse ? " reversed" : ""));
                    std::vector<std::uint64_t> t = a;
                    team_sort_u64(LoopTeam{size, area.data(), reverse}, t.data(), t.size());
                    REQUIRE(t == ref);
                }
        }
}

TEST_CASE("team_sort_u64 with a team of threads", "[hd][thread_team]") {
    std::mt19937_64 rng(9);
    for (std::size_t n : {1, 33, 513}) {
        std::vector<std::uint64_t> a(n);
        for (auto& v : a) v = rng() % 50;
        std::vector<std::uint64_t> ref = a;
        std::sort(ref.begin(), ref.end());
        for (unsigned size : {3u, 32u}) {
            INFO("n=" << n << " threads=" << size);
            mans_test::ThreadTeamState st(size);
            std::vector<std::uint64_t> t = a;
            mans_test::run_members(size, [&](unsigned r) {
                team_sort_u64(mans_test::ThreadTeam{r, size, &st}, t.data(), t.size());
            });
            REQUIRE(t == ref);
        }
    }
}

TEST_CASE("team_enumerate numbers and team_count counts the kept indices with teams of 1-64 ranks", "[hd][one_thread]") {
    // The numbering a team's dictionary uses: compaction of the kept
    // indices, each numbered by its place among them; and the count alone
    // (the distinct values of a block's sorted sample).
    std::mt19937_64 rng(10);
    std::vector<std::uint64_t> area(kTeamSharedWords);
    for (std::size_t m = 0; m <= 700; m += m < 70 ? 1 : 53)
        for (unsigned every : {1u, 2u, 7u, 1000u}) {
            std::vector<std::uint8_t> keep(m);
            for (auto& k : keep) k = rng() % every == 0;
            std::vector<std::uint64_t> ref;  // ref[k]: the k-th kept index
            for (std::size_t j = 0; j < m; ++j)
                if (keep[j]) ref.push_back(j);
            const auto kept = [&](std::uint64_t j) { return keep[j] != 0; };
            CHECK(team_count(SoloTeam{}, m, kept) == ref.size());
            for (unsigned size : {1u, 2u, 3u, 32u, 64u})
                for (bool reverse : {false, true}) {
                    INFO("m=" << m << " every=" << every << " ranks=" << size << (reverse ? " reversed" : ""));
                    for (std::uint64_t& w : area) w = 0xA5A5A5A5A5A5A5A5ull;
                    REQUIRE(team_count(LoopTeam{size, area.data(), reverse}, m, kept) == ref.size());
                    std::vector<std::uint64_t> got(m, ~0ull), number(m, ~0ull);
                    for (std::uint64_t& w : area) w = 0xA5A5A5A5A5A5A5A5ull;
                    const std::uint64_t count = team_enumerate(
                        LoopTeam{size, area.data(), reverse}, m, kept, [&](std::uint64_t j, std::uint64_t k) {
                            REQUIRE(k < m);
                            got[k] = j;
                            number[j] = k;
                        });
                    REQUIRE(count == ref.size());
                    got.resize(count);
                    REQUIRE(got == ref);
                    for (std::size_t j = 0; j < m; ++j)
                        if (!keep[j]) REQUIRE(number[j] == ~0ull);  // put only for kept indices
                }
        }
}

TEST_CASE("team_enumerate with a team of threads", "[hd][thread_team]") {
    std::mt19937_64 rng(12);
    for (std::size_t m : {1, 33, 5000}) {
        std::vector<std::uint8_t> keep(m);
        for (auto& k : keep) k = rng() % 3 == 0;
        std::vector<std::uint64_t> ref;
        for (std::size_t j = 0; j < m; ++j)
            if (keep[j]) ref.push_back(j);
        for (unsigned size : {3u, 32u}) {
            INFO("m=" << m << " threads=" << size);
            mans_test::ThreadTeamState st(size);
            std::vector<std::uint64_t> got(m, ~0ull), counts(size);
            mans_test::run_members(size, [&](unsigned r) {
                counts[r] = team_enumerate(
                    mans_test::ThreadTeam{r, size, &st}, m, [&](std::uint64_t j) { return keep[j] != 0; },
                    [&](std::uint64_t j, std::uint64_t k) { got[k] = j; });
            });
            for (std::uint64_t c : counts) REQUIRE(c == ref.size());  // in every member
            got.resize(ref.size());
            REQUIRE(got == ref);
        }
    }
}

TEST_CASE("team_best_splits finds best_split's split for every histogram", "[hd][one_thread]") {
    // Sample histograms of several shapes: small values only (all direct
    // early), geometric, wide, with and without repeats, for each width.
    std::mt19937_64 rng(13);
    std::vector<std::uint64_t> area(kTeamSharedWords);
    std::vector<std::array<std::uint32_t, 256>> tok(kMaxTeamSize);
    std::vector<std::uint64_t> costs(3 * kMaxSplitCandidates);
    unsigned cases = 0;
    for (unsigned B : {8u, 16u, 32u, 64u})
        for (int shape = 0; shape < 4; ++shape) {
            ValueHist h[3];
            for (ValueHist& one : h) {
                one.clear();
                for (int i = 0; i < 2000; ++i) {
                    const unsigned bits = shape == 0 ? 3 : shape == 1 ? 1 + rng() % 12 : shape == 2 ? B : 1 + rng() % B;
                    std::uint64_t v = bits >= 64 ? rng() : rng() % (std::uint64_t{1} << std::min(bits, B));
                    if (B < 64) v &= (std::uint64_t{1} << B) - 1;
                    one.add(v);
                }
            }
            const std::uint32_t repeats[3] = {0, 0, static_cast<std::uint32_t>(shape * 37)};
            const ValueHist* hp[3] = {&h[0], &h[1], &h[2]};
            std::uint32_t serial_tok[256];
            HybridChoice ref[3];
            for (unsigned q = 0; q < 3; ++q) ref[q] = best_split(h[q], B, repeats[q], serial_tok);
            for (unsigned size : {1u, 3u, 32u, 64u})
                for (bool reverse : {false, true}) {
                    INFO("B=" << B << " shape=" << shape << " ranks=" << size << (reverse ? " reversed" : ""));
                    std::fill(costs.begin(), costs.end(), 0);  // stale costs must not matter
                    HybridChoice got[3];
                    team_best_splits(LoopTeam{size, area.data(), reverse}, hp, repeats, 3, B,
                                     reinterpret_cast<std::uint32_t(*)[256]>(tok.data()), costs.data(), got);
                    for (unsigned q = 0; q < 3; ++q) {
                        REQUIRE(got[q].split.s == ref[q].split.s);
                        REQUIRE(got[q].split.m == ref[q].split.m);
                        REQUIRE(got[q].cost == ref[q].cost);
                    }
                    ++cases;
                }
        }
    CHECK(cases == 128);
}

TEST_CASE("best_split's group sums give best_split_by_cost's split and cost", "[hd]") {
    // best_split_by_groups (the host's best_split) must agree bit for bit
    // with the token-histogram definition that the kernels run: random
    // histograms of every width and shape, repeats or none, and the edges
    // of its ranges (empty, one value, vmax at 2^k - 1 / 2^k, 255 / 256,
    // only values of 2^8 and up, counts above the log table's 4097).
    std::mt19937_64 rng(29);
    std::uint32_t tok[256];
    unsigned cases = 0;
    auto check = [&](const ValueHist& h, unsigned B, std::uint32_t repeats) {
        const HybridChoice want = best_split_by_cost(h, B, repeats, tok);
        const HybridChoice got = best_split_by_groups(h, B, repeats);
        INFO("B=" << B << " vmax=" << h.vmax << " repeats=" << repeats);
        REQUIRE(got.split.s == want.split.s);
        REQUIRE(got.split.m == want.split.m);
        REQUIRE(got.cost == want.cost);
        ++cases;
    };
    for (unsigned B : {8u, 16u, 32u, 64u}) {
        const std::uint64_t top = B == 64 ? ~std::uint64_t{0} : (std::uint64_t{1} << B) - 1;
        ValueHist h;
        h.clear();
        check(h, B, 0);
        check(h, B, 1);
        for (std::uint64_t v : {std::uint64_t{0}, std::uint64_t{1}, std::uint64_t{7}, std::uint64_t{8},
                                std::uint64_t{255}, std::uint64_t{256}, std::uint64_t{257}, std::uint64_t{65535},
                                std::uint64_t{65536}, top})
            for (std::uint32_t count : {1u, 5000u}) {
                if (v > top) continue;
                h.clear();
                for (std::uint32_t i = 0; i < count; ++i) h.add(v);
                check(h, B, 0);
                check(h, B, 3);
            }
        for (int shape = 0; shape < 6; ++shape)
            for (int trial = 0; trial < 40; ++trial) {
                h.clear();
                const int n = 1 + static_cast<int>(rng() % 6000);
                for (int i = 0; i < n; ++i) {
                    std::uint64_t v;
                    switch (shape) {
                        case 0: v = rng() % 16; break;                               // all direct early
                        case 1: v = rng() >> (rng() % 64); break;                    // geometric
                        case 2: v = rng(); break;                                    // wide
                        case 3: v = 256 + rng() % 4096; break;                       // no small values
                        case 4: v = (rng() % 3) * 85; break;                         // few distinct
                        default: v = (std::uint64_t{1} << (rng() % 64)) - rng() % 2;  // powers of two and below
                    }
                    h.add(v & top);
                }
                check(h, B, 0);
                check(h, B, static_cast<std::uint32_t>(rng() % 5000));
            }
    }
    CHECK(cases == 2068);  // per width 2 + 4 x 10 values (less those above it) + 480
}

TEST_CASE("HybridTokens32 gives hybrid_token's token and raw-bit count", "[hd]") {
    // The CPU tokenizer's branch-free form against the definition: every
    // 16-bit value under every split valid for u8 / u16, and for u32 the
    // values around every power of two and random ones.
    std::mt19937_64 rng(31);
    std::uint64_t cases = 0;
    for (unsigned B : {8u, 16u, 32u})
        for (unsigned s = 0; s <= 8; ++s)
            for (unsigned m = 0; m <= 4 && m <= s; ++m) {
                const HybridSplit p{s, m};
                if (!hybrid_split_valid(p, B)) continue;
                const HybridTokens32 fast(p);
                auto check = [&](std::uint32_t v) {
                    unsigned want_raw = 0, got_raw = 0;
                    const unsigned want = hybrid_token(v, p, &want_raw);
                    const unsigned got = fast.token(v, &got_raw);
                    if (got != want || got_raw != want_raw) {
                        INFO("B=" << B << " s=" << s << " m=" << m << " v=" << v);
                        REQUIRE(got == want);
                        REQUIRE(got_raw == want_raw);
                    }
                    ++cases;
                };
                if (B <= 16) {
                    for (std::uint32_t v = 0; v < (1u << B); ++v) check(v);
                } else {
                    for (unsigned e = 0; e < 32; ++e)
                        for (std::uint32_t d : {0u, 1u, 2u, 0xffffffffu, 0xfffffffeu})
                            check((std::uint32_t{1} << e) + d);
                    for (int i = 0; i < 20000; ++i) check(static_cast<std::uint32_t>(rng() >> (rng() % 64)));
                }
            }
    CHECK(cases > 2000000);
}

namespace {

// tokenize_lanes with tokenize_hybrid_lane, the definition (and the path a
// team runs): tokens and raw bits of one block.
template <typename U, Predictor kPred>
std::size_t tokenize_by_definition(const std::uint8_t* x, const LaneLayout& lay, std::uint64_t flip,
                                   std::uint64_t center, HybridSplit split, std::uint8_t* tokens, std::uint8_t* bits) {
    return tokenize_lanes(SoloTeam{}, lay, tokens, bits, [&](unsigned j, auto& sink) {
        tokenize_hybrid_lane<U, kPred>(x, lay, flip, center, split, j, sink);
    });
}

template <typename U>
void check_serial_tokenizer(std::mt19937_64& rng, std::uint64_t flip, std::uint64_t* cases,
                            std::uint64_t* simd_cases) {
    using E = Elem<U>;
    // 16,384 and 40,000 elements: lanes of exactly one and of several of the
    // SIMD tokenizer's chunks (512 elements); 16,411 and 40,003: a shorter
    // last lane, whose end is the block's.
    for (std::size_t n : {std::size_t{1}, std::size_t{31}, std::size_t{700}, std::size_t{5000}, std::size_t{16384},
                          std::size_t{16411}, std::size_t{40000}, std::size_t{40003}})
        for (int shape = 0; shape < 4; ++shape) {
            // Raw elements: near a center, a random walk with repeats,
            // uniform over the type, and values at the type's two ends.
            std::vector<std::uint8_t> x(n * sizeof(U));
            const std::uint64_t base = rng() & E::mask;
            std::uint64_t walk = base;
            for (std::size_t i = 0; i < n; ++i) {
                std::uint64_t v;
                switch (shape) {
                    case 0: v = base + (rng() % 64) - 32; break;
                    case 1: walk += rng() % 3 == 0 ? 0 : (rng() % 2001) - 1000; v = walk; break;
                    case 2: v = rng(); break;
                    default: v = rng() % 2 ? E::mask - rng() % 4 : rng() % 4;
                }
                store_le<U>(x.data() + i * sizeof(U), static_cast<U>(v & E::mask));
            }
            const LaneLayout lay = LaneLayout::make(n, lanes_for(n));
            const std::uint64_t center = shape == 3 ? 0 : (base ^ flip) & E::mask;
            for (unsigned s = 0; s <= 8; ++s)
                for (unsigned m = 0; m <= 4 && m <= s; ++m) {
                    const HybridSplit split{s, m};
                    for (int predictor = 0; predictor < 3; ++predictor) {
                        // only center_repeat needs room for the repeat token
                        if (!hybrid_split_valid(split, E::B, predictor == 2)) continue;
                        with_predictor(static_cast<Predictor>(predictor), [&](auto pred) {
                            constexpr Predictor kPred = decltype(pred)::value;
                            std::vector<std::uint8_t> want_tok(lay.slots(), 0), got_tok(lay.slots(), 0);
                            std::vector<std::uint8_t> want_bits(bit_writer_bytes(n * E::B));
                            std::vector<std::uint8_t> got_bits(want_bits.size());
                            const std::size_t want_len = tokenize_by_definition<U, kPred>(
                                x.data(), lay, flip, center, split, want_tok.data(), want_bits.data());
                            const std::size_t got_len = tokenize_hybrid_serial<U, kPred>(
                                x.data(), lay, flip, center, split, got_tok.data(), got_bits.data());
                            INFO("B=" << E::B << " flip=" << flip << " n=" << n << " shape " << shape << " s=" << s
                                      << " m=" << m << " predictor " << int(kPred));
                            REQUIRE(got_len == want_len);
                            REQUIRE(got_tok == want_tok);
                            const auto got_end = got_bits.begin() + static_cast<std::ptrdiff_t>(got_len);
                            REQUIRE(std::equal(got_bits.begin(), got_end, want_bits.begin()));
                            ++*cases;
                            // The CPU's SIMD tokenizer, where it has one.
                            const auto simd = mans::detail::cpu_backend().kernels(false).tokenize_hybrid;
                            if (simd) {
                                std::vector<std::uint8_t> simd_tok(lay.slots(), 0), simd_bits(want_bits.size());
                                const std::size_t simd_len =
                                    simd(HybridTokenizeArgs{x.data(), lay, flip, center, split, sizeof(U), kPred,
                                                            simd_tok.data(), simd_bits.data()});
                                REQUIRE(simd_len == want_len);
                                REQUIRE(simd_tok == want_tok);
                                REQUIRE(std::equal(simd_bits.begin(),
                                                   simd_bits.begin() + static_cast<std::ptrdiff_t>(simd_len),
                                                   want_bits.begin()));
                                ++*simd_cases;
                            }
                            return true;
                        });
                    }
                }
        }
}

}  // namespace

TEST_CASE("tokenize_hybrid_serial writes the definition's tokens and raw bits", "[hd]") {
    // The CPU encoder's hybrid tokenizer (a team of one, up to 32-bit
    // elements) against tokenize_lanes + tokenize_hybrid_lane: every split
    // and predictor, unsigned and signed (flipped) elements,
    // 1 to 32 lanes; and the CPU backend's AVX2 tokenizer where this CPU
    // has it.
    std::mt19937_64 rng(37);
    std::uint64_t cases = 0, simd_cases = 0;
    check_serial_tokenizer<std::uint8_t>(rng, 0, &cases, &simd_cases);
    check_serial_tokenizer<std::uint8_t>(rng, std::uint64_t{1} << 7, &cases, &simd_cases);
    check_serial_tokenizer<std::uint16_t>(rng, 0, &cases, &simd_cases);
    check_serial_tokenizer<std::uint16_t>(rng, std::uint64_t{1} << 15, &cases, &simd_cases);
    check_serial_tokenizer<std::uint32_t>(rng, 0, &cases, &simd_cases);
    check_serial_tokenizer<std::uint32_t>(rng, std::uint64_t{1} << 31, &cases, &simd_cases);
    CHECK(cases > 1000);
    if (mans::detail::cpu_backend().kernels(false).tokenize_hybrid)
        CHECK(simd_cases > 500);
    else
        WARN("this CPU has no SIMD hybrid tokenizer (AVX2 and BMI2): only the portable loop was checked");
}

TEST_CASE("host_context_histogram counts tokens by the previous token's class as the team loop does", "[hd]") {
    // The CPU's histogram for a token stream (a team of one) against the
    // definition (class token_class8 of the lane's previous token, class 0
    // at a lane's start): every lane count, streams ending mid-step, tokens
    // of every class.
    std::mt19937_64 rng(43);
    unsigned cases = 0;
    for (std::size_t n : {std::size_t{1}, std::size_t{2}, std::size_t{33}, std::size_t{511}, std::size_t{4097},
                          std::size_t{65536}, std::size_t{65531}})
        for (unsigned lanes : {1u, 2u, 8u, 32u}) {
            const LaneLayout lay = LaneLayout::make(n, lanes);
            std::vector<std::uint8_t> tokens(lay.slots(), 0);
            for (unsigned j = 0; j < lanes; ++j)
                for (std::size_t t = 0; t < lay.lane_len(j); ++t)
                    tokens[t * lanes + j] = static_cast<std::uint8_t>(rng() % 4 ? rng() % 300 >> (rng() % 9) : 0);
            std::uint32_t want[kMaxContexts][256] = {}, got[kMaxContexts][256] = {};
            for (unsigned j = 0; j < lanes; ++j)
                for (std::size_t t = 0; t < lay.lane_len(j); ++t)
                    ++want[t ? token_class8(tokens[(t - 1) * lanes + j]) : 0][tokens[t * lanes + j]];
            host_context_histogram(tokens.data(), lay, got);
            INFO("n=" << n << " lanes=" << lanes);
            for (unsigned c = 0; c < kMaxContexts; ++c)
                for (unsigned s = 0; s < 256; ++s) REQUIRE(got[c][s] == want[c][s]);
            ++cases;
        }
    CHECK(cases == 28);
}

namespace mans::detail {
// The encoder's context-aware re-estimates (refined_cost) of every mapping
// it can estimate, after its mode choice, each with the class histogram of
// its (last) sample stream: a count in a wrong class could leave the cost
// alone when one context wins.
struct BlockEncoderProbe {
    struct Estimate {
        ModeHint hint;
        std::uint64_t cost;
        std::vector<std::uint32_t> hist8;  // kMaxContexts x 256
        bool operator==(const Estimate& o) const { return hint == o.hint && cost == o.cost && hist8 == o.hist8; }
    };
    template <typename Encoder>
    static std::vector<Estimate> refined_costs(Encoder& e) {
        e.stats_ = e.block_stats();
        e.decide_modes();
        std::vector<Estimate> out;
        for (ModeHint h : {ModeHint::token_center, ModeHint::token_delta, ModeHint::token_repeat,
                           ModeHint::byte_planes, ModeHint::adm}) {
            if (h == ModeHint::adm && !e.adm_possible()) continue;
            const std::uint64_t cost = e.refined_cost(h);
            const auto& hist = e.env_.work()->stream.hist8;
            out.push_back({h, cost, std::vector<std::uint32_t>(&hist[0][0], &hist[0][0] + kMaxContexts * 256)});
        }
        return out;
    }
};
}  // namespace mans::detail

namespace {

using Estimates = std::vector<BlockEncoderProbe::Estimate>;

// refined_cost of a block by an encoder whose team is `team`, in a slice of
// its own.
template <typename U, typename Team>
Estimates refined_costs_with(const std::vector<std::uint8_t>& x, std::size_t n, const Team& team) {
    const EncodeSliceLayout lay = encode_slice_layout(n, sizeof(U));
    std::vector<std::uint8_t> slice(lay.total + 16, 0xA5);
    std::uint8_t* base = reinterpret_cast<std::uint8_t*>(
        (reinterpret_cast<std::uintptr_t>(slice.data()) + 15) & ~std::uintptr_t{15});
    using Env = FixedEncodeEnv<ReferenceEncodeLanes>;
    Env env{base, lay, n, sizeof(U), FixedOut{base + lay.out, block_encode_out_bound(n, sizeof(U))},
            ReferenceEncodeLanes{}};
    BlockEncoder<U, Env, false, Team> enc(x.data(), n, 0, env, team);
    return BlockEncoderProbe::refined_costs(enc);
}

// Returns how many blocks sampled in several runs had an ADM estimate.
template <typename U>
unsigned check_sample_stream_costs(std::mt19937_64& rng) {
    const mans_test::Bytes exafel = mans_test::exafel_prefix(65536 * 2);
    std::uint64_t area[kTeamSharedWords] = {};
    unsigned adm_in_runs = 0;
    // Blocks in the sample whole, exactly the sample, just over it (runs
    // without gaps: n / 32 == 256), and sampled in runs with gaps.
    for (std::size_t n : {std::size_t{2}, std::size_t{100}, std::size_t{4096}, std::size_t{8192}, std::size_t{8193},
                          std::size_t{8223}, std::size_t{8224}, std::size_t{8300}, std::size_t{65536}})
        for (int shape = 0; shape < 3; ++shape) {
            // exafel's values (their high byte for u8), a walk with long
            // repeats, uniform values (raw bits everywhere)
            std::vector<std::uint8_t> x(n * sizeof(U));
            std::uint64_t walk = rng();
            for (std::size_t i = 0; i < n; ++i) {
                const std::size_t j = 2 * (i % (exafel.size() / 2));
                const std::uint64_t e = exafel[j] | std::uint64_t{exafel[j + 1]} << 8;
                if (rng() % 8 == 0) walk += rng() % 4001 - 2000;
                const std::uint64_t v = shape == 0 ? (sizeof(U) == 1 ? e >> 8 : e) : shape == 1 ? walk : rng();
                store_le<U>(x.data() + i * sizeof(U), static_cast<U>(v));
            }
            const Estimates solo = refined_costs_with<U>(x, n, SoloTeam{});
            INFO("bytes=" << sizeof(U) << " n=" << n << " shape " << shape);
            REQUIRE(solo.size() >= 4);
            if (n > 8192 && solo.back().hint == ModeHint::adm) ++adm_in_runs;
            for (unsigned size : {1u, 32u})
                REQUIRE(refined_costs_with<U>(x, n, LoopTeam{size, area, size == 32}) == solo);
        }
    return adm_in_runs;
}

}  // namespace

TEST_CASE("host_sample_stream_cost gives the shared loop's context estimates", "[hd]") {
    // The mode choice's re-estimates by one thread (the CPU's host loop)
    // and by teams of 1 and 32 ranks (the loop the GPU runs) must agree, or
    // the CPU and the GPU could choose different mappings.
    std::mt19937_64 rng(53);
    check_sample_stream_costs<std::uint8_t>(rng);
    // ADM (16- and 32-bit only) estimated on blocks sampled in runs too.
    CHECK(check_sample_stream_costs<std::uint16_t>(rng) >= 4);
    CHECK(check_sample_stream_costs<std::uint32_t>(rng) >= 4);
    check_sample_stream_costs<std::uint64_t>(rng);
}

namespace {

template <typename U>
void check_host_block_stats(std::mt19937_64& rng, std::uint64_t flip) {
    for (std::size_t n : {std::size_t{1}, std::size_t{7}, std::size_t{4096}, std::size_t{4097}, std::size_t{70000}})
        for (int shape = 0; shape < 3; ++shape) {
            std::vector<std::uint8_t> x(n * sizeof(U));
            for (std::size_t i = 0; i < n; ++i) {
                // random, all at the type's top (the partial sums' worst case), near the sign flip
                const std::uint64_t v = shape == 0 ? rng() : shape == 1 ? ~std::uint64_t{0} : flip + rng() % 5 - 2;
                store_le<U>(x.data() + i * sizeof(U), static_cast<U>(v));
            }
            std::uint64_t lo = ~std::uint64_t{0}, hi = 0, sum = 0;
            for (std::size_t i = 0; i < n; ++i) {
                const std::uint64_t u = load_biased<U>(x.data(), i, flip);
                lo = u < lo ? u : lo;
                hi = u > hi ? u : hi;
                sum += u;
            }
            const Stats got = host_block_stats<U>(x.data(), n, flip);
            INFO("bytes=" << sizeof(U) << " flip=" << flip << " n=" << n << " shape " << shape);
            REQUIRE(got.min == lo);
            REQUIRE(got.max == hi);
            REQUIRE(got.sum == sum);
        }
}

}  // namespace

TEST_CASE("host_block_stats gives the block's min, max and sum of biased values", "[hd]") {
    std::mt19937_64 rng(47);
    check_host_block_stats<std::uint8_t>(rng, 0);
    check_host_block_stats<std::uint16_t>(rng, 0);
    check_host_block_stats<std::uint16_t>(rng, std::uint64_t{1} << 15);
    check_host_block_stats<std::uint32_t>(rng, 0);
    check_host_block_stats<std::uint32_t>(rng, std::uint64_t{1} << 31);
    check_host_block_stats<std::uint64_t>(rng, 0);
    check_host_block_stats<std::uint64_t>(rng, std::uint64_t{1} << 63);
}

namespace {

template <typename U>
void check_serial_reconstruct(std::mt19937_64& rng, std::uint64_t flip, std::uint64_t* valid, std::uint64_t* rejected,
                              std::uint64_t* simd_checked) {
    using E = Elem<U>;
    // The CPU's SIMD kernel, where it has one for this width.
    const auto simd = cpu_backend().kernels(false).reconstruct_hybrid;
    // 9,000 and 20,000 elements have whole 8 x 8 tiles of tokens and
    // ragged lanes.
    for (std::size_t n : {std::size_t{1}, std::size_t{40}, std::size_t{3000}, std::size_t{9000}, std::size_t{20000}})
        for (unsigned s = 0; s <= 8; ++s)
            for (unsigned m = 0; m <= 4 && m <= s; ++m)
                for (int predictor = 0; predictor < 3; ++predictor) {
                    const HybridSplit split{s, m};
                    if (!hybrid_split_valid(split, E::B, predictor == 2)) continue;
                    // A valid section from the tokenizer (a random walk with
                    // repeats), then corruptions of it: a token, a bit, the
                    // length one byte short or long, random tokens.
                    std::vector<std::uint8_t> x(n * sizeof(U));
                    std::uint64_t walk = rng();
                    // A third of the steps repeat, or three quarters (runs
                    // of repeats longer than the SIMD kernel's 8 elements).
                    // Some walks also jump anywhere (the widest raw fields).
                    const bool runs = rng() % 2, jumps = rng() % 2;
                    for (std::size_t i = 0; i < n; ++i) {
                        const bool repeat = runs ? rng() % 4 != 0 : rng() % 3 == 0;
                        walk += repeat ? 0 : jumps && rng() % 4 == 0 ? rng() : (rng() % 4001) - 2000;
                        store_le<U>(x.data() + i * sizeof(U), static_cast<U>(walk));
                    }
                    // The encoder's lane count, or 2, 8 or 32 lanes (some
                    // empty where n is small), in turn.
                    const unsigned lane_choice[4] = {lanes_for(n), 2, 8, 32};
                    const LaneLayout lay = LaneLayout::make(n, lane_choice[(s + m + predictor) % 4]);
                    const std::uint64_t center = rng() & E::mask;
                    std::vector<std::uint8_t> tokens(lay.slots(), 0), bits(bit_writer_bytes(n * E::B) + 8, 0);
                    std::uint32_t len = 0;
                    with_predictor(static_cast<Predictor>(predictor), [&](auto pred) {
                        len = static_cast<std::uint32_t>(tokenize_hybrid_serial<U, decltype(pred)::value>(
                            x.data(), lay, flip, center, split, tokens.data(), bits.data()));
                        return true;
                    });
                    for (int variant = 0; variant < 6; ++variant) {
                        std::vector<std::uint8_t> tok = tokens, raw = bits;
                        std::uint32_t l = len;
                        if (variant == 1) {  // a token of any lane
                            unsigned j = static_cast<unsigned>(rng() % lay.lanes);
                            while (lay.lane_len(j) == 0) --j;
                            tok[rng() % lay.lane_len(j) * lay.lanes + j] ^= static_cast<std::uint8_t>(1 + rng() % 255);
                        }
                        if (variant == 2 && l) raw[rng() % l] ^= static_cast<std::uint8_t>(1u << (rng() % 8));
                        if (variant == 3 && l) --l;
                        if (variant == 4) ++l;
                        if (variant == 5)
                            for (unsigned j = 0; j < lay.lanes; ++j)
                                for (std::size_t t = 0; t < lay.lane_len(j); ++t)
                                    tok[t * lay.lanes + j] = static_cast<std::uint8_t>(rng());
                        // The section in an allocation of exactly l bytes, so
                        // that ASan sees any read past it.
                        raw.resize(l);
                        raw.shrink_to_fit();
                        std::vector<std::uint8_t> want(n * sizeof(U)), got(n * sizeof(U));
                        HybridTokenInfo info[kHybridTokenInfoEntries];
                        bool want_ok = false, got_ok = false;
                        with_predictor(static_cast<Predictor>(predictor), [&](auto pred) {
                            constexpr Predictor kPred = decltype(pred)::value;
                            want_ok = reconstruct_hybrid<U, kPred>(SoloTeam{}, tok.data(), lay, flip, center, split,
                                                                   raw.data(), l, want.data(), info);
                            got_ok = reconstruct_hybrid_serial<U, kPred>(tok.data(), lay, flip, center, split,
                                                                         raw.data(), l, got.data());
                            return true;
                        });
                        INFO("B=" << E::B << " flip=" << flip << " n=" << n << " s=" << s << " m=" << m
                                  << " predictor " << predictor << " variant " << variant);
                        REQUIRE(got_ok == want_ok);
                        if (variant == 0) REQUIRE((want_ok && want == x));
                        if (simd) {
                            std::vector<std::uint8_t> by_lane(lay.slots()), simd_got(n * sizeof(U));
                            const bool simd_ok = simd(HybridReconstructArgs{
                                tok.data(), lay, flip, center, split, sizeof(U), static_cast<Predictor>(predictor),
                                raw.data(), l, simd_got.data(), by_lane.data()});
                            REQUIRE(simd_ok == want_ok);
                            REQUIRE(simd_got == got);  // the serial loop's elements, rejected sections too
                            ++*simd_checked;
                        }
                        if (want_ok) {
                            REQUIRE(got == want);
                            ++*valid;
                        } else {
                            ++*rejected;
                        }
                    }
                }
}

}  // namespace

TEST_CASE("reconstruct_hybrid_serial and the SIMD kernel decode and reject as reconstruct_hybrid does", "[hd]") {
    // The CPU decoder's hybrid-token loop (a team of one, up to 32-bit
    // elements) against the shared one: the elements of valid sections,
    // and the verdict on corrupt ones (a changed token or raw bit, a
    // section a byte short or long, random tokens).
    std::mt19937_64 rng(53);
    std::uint64_t valid = 0, rejected = 0, simd = 0;
    check_serial_reconstruct<std::uint8_t>(rng, 0, &valid, &rejected, &simd);
    check_serial_reconstruct<std::uint16_t>(rng, 0, &valid, &rejected, &simd);
    check_serial_reconstruct<std::uint16_t>(rng, std::uint64_t{1} << 15, &valid, &rejected, &simd);
    check_serial_reconstruct<std::uint32_t>(rng, 0, &valid, &rejected, &simd);
    check_serial_reconstruct<std::uint32_t>(rng, std::uint64_t{1} << 31, &valid, &rejected, &simd);
    CHECK(valid > 300);
    CHECK(rejected > 300);
    // The AVX2 kernel (reconstruct_avx2.cpp) saw every case.
    if (cpu_backend().kernels(false).reconstruct_hybrid) CHECK(simd > 1000);
}

TEST_CASE("HostBitPacker::put_wide appends as put does, across the accumulator's end", "[hd]") {
    // Every fill 0-7 (set by a first put), every length 0-64, random bits,
    // then a second field: the bytes of the same fields put 16 bits at a time.
    std::mt19937_64 rng(77);
    for (unsigned fill = 0; fill < 8; ++fill)
        for (unsigned n = 0; n <= 64; ++n)
            for (int rep = 0; rep < 4; ++rep) {
                const std::uint64_t first = rng() & ((1u << fill) - 1);
                const std::uint64_t bits = n == 64 ? rng() : rng() & ((std::uint64_t{1} << n) - 1);
                const std::uint32_t last = static_cast<std::uint32_t>(rng() & 0x1fff);
                std::vector<std::uint8_t> wide(32, 0), narrow(32, 0);
                HostBitPacker a(wide.data());
                a.put(static_cast<std::uint32_t>(first), fill);
                a.put_wide(bits, n);
                a.put(last, 13);
                const std::size_t wide_len = static_cast<std::size_t>(a.finish() - wide.data());
                HostBitPacker b(narrow.data());
                b.put(static_cast<std::uint32_t>(first), fill);
                for (unsigned done = 0; done < n; done += 16) {
                    const unsigned k = n - done < 16 ? n - done : 16;
                    b.put(static_cast<std::uint32_t>((bits >> done) & ((1u << k) - 1)), k);
                }
                b.put(last, 13);
                const std::size_t narrow_len = static_cast<std::size_t>(b.finish() - narrow.data());
                INFO("fill " << fill << " n " << n);
                REQUIRE(wide_len == narrow_len);
                REQUIRE(wide == narrow);
            }
}

TEST_CASE("team_or gives every member the OR of the ranks' values", "[hd][thread_team]") {
    std::mt19937_64 rng(13);
    std::uint64_t area[kTeamSharedWords];
    for (unsigned size : {1u, 2u, 3u, 7u, 32u, 64u}) {
        std::vector<std::uint32_t> v(size);
        for (auto& x : v) x = static_cast<std::uint32_t>(rng()) & static_cast<std::uint32_t>(rng());  // sparse bits
        v[size - 1] |= 0x80000000u;  // the last rank's bit must reach every member
        std::uint32_t ref = 0;
        for (std::uint32_t x : v) ref |= x;
        INFO("size " << size);
        std::fill(std::begin(area), std::end(area), 0xA5A5A5A5A5A5A5A5ull);
        if (size == 1) CHECK(team_or(SoloTeam{}, [&](unsigned r) { return v[r]; }) == ref);
        for (bool reverse : {false, true})
            CHECK(team_or(LoopTeam{size, area, reverse}, [&](unsigned r) { return v[r]; }) == ref);
        if (size < 3) continue;
        mans_test::ThreadTeamState st(size);
        std::vector<std::uint32_t> got(size, 0);
        mans_test::run_members(size, [&](unsigned r) {
            got[r] = team_or(mans_test::ThreadTeam{r, size, &st}, [&](unsigned k) { return v[k]; });
        });
        for (std::uint32_t g : got) CHECK(g == ref);
    }
}

TEST_CASE("token_class8 and context_offset follow the format's context rule for every token", "[hd]") {
    // docs/FORMAT.md section 3: the context after token t is
    // min(class(t), K - 1), class(t) = the bit length of t capped at 7.
    for (unsigned t = 0; t < 256; ++t) {
        unsigned cls = 0;
        for (unsigned v = t; v != 0; v >>= 1) ++cls;
        if (cls > 7) cls = 7;
        INFO("token " << t);
        CHECK(token_class8(t) == cls);
        for (unsigned k : {1u, 2u, 4u, 8u}) {
            const unsigned ctx = std::min(cls, k - 1);
            CHECK(context_of(t, k) == ctx);
            for (unsigned prob_bits = kMinProbBits; prob_bits <= kMaxProbBits; ++prob_bits)
                CHECK(context_offset(t, k, prob_bits) == (std::uint32_t{ctx} << prob_bits));
        }
    }
}
