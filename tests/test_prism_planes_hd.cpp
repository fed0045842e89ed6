// test_prism_planes_hd.cpp - the bit work of a bitplane chunk
// (prism/plane_split_hd.hpp), the part a GPU warp runs, against a
// code-by-code reading of FORMAT.md 4.5: planes, contexts and the five
// context streams, split over teams of 1-64 ranks (LoopTeams in both rank
// orders, and real threads), with both PEXT / PDEP forms.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "backend.hpp"
#include "cpu_features.hpp"
#include "plane_bits_bmi2.hpp"
#include "prism/codes.hpp"
#include "prism/cpu_kernels.hpp"
#include "prism/plane_coding.hpp"
#include "prism/plane_split_hd.hpp"
#include "prism/truncation_stats_hd.hpp"
#include "thread_team.hpp"

namespace dp = mans::detail::prism;
using mans::detail::LoopTeam;
using mans::detail::SoloTeam;

namespace {

// A chunk's words and its plane count.
struct Chunk {
    std::vector<std::uint32_t> words;
    unsigned planes = 0;
};

// Codes of a few shapes: mostly small (the usual), sparse, all zero, one
// large code, every code large, every code large with the same top digit
// (from the third plane on, every code is in context 4: a full stream).
Chunk make_chunk(std::uint64_t len, int shape, dp::Coding c, std::uint64_t seed) {
    std::mt19937_64 rng(seed);
    std::geometric_distribution<int> small(0.35);
    Chunk ch;
    ch.words.resize(len);
    std::uint32_t any = 0;
    for (std::uint64_t j = 0; j < len; ++j) {
        std::int32_t q = 0;
        switch (shape) {
            case 0: q = small(rng) * (rng() & 1 ? 1 : -1); break;
            case 1: q = rng() % 97 == 0 ? static_cast<std::int32_t>(rng() % 2001) - 1000 : 0; break;
            case 2: q = 0; break;
            case 3: q = j == len / 2 ? -(dp::kMaxCode - 3) : 0; break;
            case 5: q = dp::kMaxCode - 1 - static_cast<std::int32_t>(rng() % 1000); break;  // all significant early: full streams
            default: q = static_cast<std::int32_t>(rng() % (2u * dp::kMaxCode)) - dp::kMaxCode; break;
        }
        ch.words[j] = dp::encode_code(q, c);
        any |= ch.words[j];
    }
    ch.planes = dp::planes_for(any, c);
    return ch;
}

// Plane b of code j, from the definition (with_plane_bit).
bool digit(std::uint32_t word, unsigned b, unsigned planes, dp::Coding c) {
    return (word & dp::with_plane_bit(0, b, planes, c, 1)) != 0;
}

// The five streams of plane b, code by code (FORMAT.md 4.5).
std::vector<std::vector<bool>> reference_streams(const Chunk& ch, unsigned b, dp::Coding c, bool after_zero_plane) {
    const std::uint64_t len = ch.words.size();
    auto sig = [&](std::uint64_t j) {
        for (unsigned k = 0; k < b; ++k)
            if (digit(ch.words[j], k, ch.planes, c)) return true;
        return false;
    };
    std::vector<std::vector<bool>> s(dp::kPlaneStreams);
    for (std::uint64_t j = 0; j < len; ++j) {
        const bool bit = digit(ch.words[j], b, ch.planes, c);
        unsigned k;
        if (sig(j)) {
            const bool fresh = !after_zero_plane && b > 0 && digit(ch.words[j], b - 1, ch.planes, c) && [&] {
                for (unsigned q = 0; q + 1 < b; ++q)
                    if (digit(ch.words[j], q, ch.planes, c)) return false;
                return true;
            }();
            k = fresh ? 3 : 4;
        } else {
            k = (j > 0 && sig(j - 1)) + (j + 1 < len && sig(j + 1));
        }
        s[k].push_back(bit);
    }
    return s;
}

std::vector<bool> stream_bits(const std::uint32_t* words, std::uint64_t nbits) {
    std::vector<bool> v(static_cast<std::size_t>(nbits));
    for (std::uint64_t i = 0; i < nbits; ++i) v[i] = words[i / 32] >> (i % 32) & 1;
    return v;
}

// Everything one team computes for a chunk: per plane the streams (split)
// and the plane merged back from them; after plane 1 also the form below an
// all-zero plane (fresh = none).
struct TeamResult {
    std::vector<std::uint64_t> planes;                  // transpose
    std::vector<std::vector<std::vector<bool>>> split;  // [plane][k]
    std::vector<std::vector<bool>> after_zero;          // [k], plane 1 with no fresh codes
    std::vector<std::uint64_t> merged;                  // planes rebuilt by merge_plane
    std::vector<std::uint32_t> rebuilt;                 // words rebuilt by deposit_plane
    std::vector<int> has_bits;
    unsigned padding_bits = 0;  // OR of the streams' unused high bits: must be 0
    bool counts_differ = false;  // count_context_bits gave other lengths than split_plane
};

// split_plane / merge_plane / count_context_bits with a bit gather, or a
// CPU kernel set (backend.hpp's plane_bits: one thread) in the gather's
// place.
template <typename Team, typename Gather>
void count_with(const Team& team, const std::uint64_t* sig, const std::uint64_t* fr, std::uint64_t len,
                dp::PlaneSplitScratch* scratch, std::uint64_t* total, const Gather&) {
    dp::count_context_bits(team, sig, fr, len, scratch, total);
}
void count_with(const SoloTeam&, const std::uint64_t* sig, const std::uint64_t* fr, std::uint64_t len,
                dp::PlaneSplitScratch* scratch, std::uint64_t* total, const dp::PlaneBitKernels& kernels) {
    kernels.count(sig, fr, len, scratch, total);
}
template <typename Team, typename Gather>
void split_with(const Team& team, const std::uint64_t* plane, const std::uint64_t* sig, const std::uint64_t* fr,
                std::uint64_t len, dp::PlaneSplitScratch* scratch, std::uint32_t* streams, std::uint64_t* nbits,
                const Gather& gather) {
    dp::split_plane(team, plane, sig, fr, len, scratch, streams, nbits, gather);
}
void split_with(const SoloTeam&, const std::uint64_t* plane, const std::uint64_t* sig, const std::uint64_t* fr,
                std::uint64_t len, dp::PlaneSplitScratch* scratch, std::uint32_t* streams, std::uint64_t* nbits,
                const dp::PlaneBitKernels& kernels) {
    kernels.split(plane, sig, fr, len, scratch, streams, nbits);
}
template <typename Team, typename Gather>
void merge_with(const Team& team, const std::uint8_t* const* s, const std::uint64_t* sig, const std::uint64_t* fr,
                std::uint64_t len, const dp::PlaneSplitScratch& scratch, std::uint64_t* plane, const Gather& gather) {
    dp::merge_plane(team, s, sig, fr, len, scratch, plane, gather);
}
void merge_with(const SoloTeam&, const std::uint8_t* const* s, const std::uint64_t* sig, const std::uint64_t* fr,
                std::uint64_t len, const dp::PlaneSplitScratch& scratch, std::uint64_t* plane,
                const dp::PlaneBitKernels& kernels) {
    kernels.merge(s, sig, fr, len, scratch, plane);
}

template <typename Team, typename Gather>
void run_team(const Team& team, const Chunk& ch, dp::Coding c, dp::PlaneSplitScratch* scratch,
              std::uint64_t* bits_area, std::uint32_t* streams, std::uint64_t* sig, std::uint64_t* fresh,
              std::uint64_t* merged, std::uint32_t* rebuilt, TeamResult* out, const Gather& gather) {
    const std::uint64_t len = ch.words.size();
    const std::uint64_t nw = dp::plane_word_count(len);
    const std::uint64_t stride = dp::stream_word_count(len);
    dp::transpose_planes(team, ch.words.data(), len, ch.planes, c, bits_area);
    team.for_ranks([&](unsigned r) {
        for (std::uint64_t w = r; w < nw; w += team.size()) sig[w] = fresh[w] = 0;
    });
    for (unsigned b = 0; b < ch.planes; ++b) {
        const std::uint64_t* plane = bits_area + b * nw;
        const bool has = dp::plane_has_bits(team, plane, nw);
        std::uint64_t nbits[dp::kPlaneStreams];
        auto split_and_merge = [&](const std::uint64_t* fr, std::vector<std::vector<bool>>* got) {
            split_with(team, plane, sig, fr, len, scratch, streams, nbits, gather);
            if (team.leads())
                for (unsigned k = 0; k < dp::kPlaneStreams; ++k) got->push_back(stream_bits(streams + k * stride, nbits[k]));
            // Merged from copies of exactly the streams' bytes (ASan sees a read
            // past one), whose unused high bits must be zero.
            std::vector<std::uint8_t> exact[dp::kPlaneStreams];
            const std::uint8_t* s[dp::kPlaneStreams];
            for (unsigned k = 0; k < dp::kPlaneStreams; ++k) {
                const auto* bytes = reinterpret_cast<const std::uint8_t*>(streams + k * stride);
                exact[k].assign(bytes, bytes + (nbits[k] + 7) / 8);
                if (nbits[k] % 8 && team.leads()) out->padding_bits |= exact[k].back() >> (nbits[k] % 8);
                s[k] = exact[k].data();
            }
            // A reader counts the streams' lengths from the significance alone.
            // The split's scratch is overwritten with the count's: merge uses it.
            std::uint64_t counted[dp::kPlaneStreams];
            count_with(team, sig, fr, len, scratch, counted, gather);
            if (team.leads() && !std::equal(counted, counted + dp::kPlaneStreams, nbits)) out->counts_differ = true;
            merge_with(team, s, sig, fr, len, *scratch, merged + b * nw, gather);
        };
        std::vector<std::vector<bool>> got;
        split_and_merge(fresh, &got);
        if (b == 1) {
            std::vector<std::uint64_t> none(nw, 0);
            std::vector<std::uint64_t> keep(merged + b * nw, merged + (b + 1) * nw);
            std::vector<std::vector<bool>> az;
            split_and_merge(none.data(), &az);
            if (team.leads()) out->after_zero = az;
            // both forms must merge back to the same plane
            if (team.leads() && !std::equal(keep.begin(), keep.end(), merged + b * nw)) out->after_zero.clear();
        }
        dp::deposit_plane(team, merged + b * nw, nw, dp::with_plane_bit(0, b, ch.planes, c, 1), rebuilt);
        dp::advance_significance(team, plane, sig, fresh, nw);
        if (team.leads()) {
            out->split.push_back(got);
            out->has_bits.push_back(has);
        }
    }
    if (team.leads()) {
        out->planes.assign(bits_area, bits_area + ch.planes * nw);
        out->merged.assign(merged, merged + ch.planes * nw);
        out->rebuilt.assign(rebuilt, rebuilt + len);
    }
}

// Buffers for one team, filled with garbage (a GPU's temp is not zeroed).
struct Buffers {
    explicit Buffers(const Chunk& ch) {
        const std::uint64_t len = ch.words.size(), nw = dp::plane_word_count(len);
        bits.assign(ch.planes * nw + 1, 0x5a5a5a5a5a5a5a5aull);
        streams.assign(dp::kPlaneStreams * dp::stream_word_count(len) + 1, 0xdeadbeef);
        sig.assign(nw, ~0ull);
        fresh.assign(nw, ~0ull);
        merged.assign(ch.planes * nw + 1, 0x1234);
        rebuilt.assign(len + 1, 0);
        for (auto& s : scratch.counts)
            for (auto& v : s) v = 0xffffffffu;
    }
    // Each buffer has one element more than it needs: nothing may write it.
    bool untouched_past_end() const {
        return bits.back() == 0x5a5a5a5a5a5a5a5aull && streams.back() == 0xdeadbeef && merged.back() == 0x1234 &&
               rebuilt.back() == 0;
    }
    std::vector<std::uint64_t> bits, sig, fresh, merged;
    std::vector<std::uint32_t> streams, rebuilt;
    dp::PlaneSplitScratch scratch;
};

template <typename Team, typename Gather>
TeamResult run_one(const Team& team, const Chunk& ch, dp::Coding c, const Gather& gather) {
    Buffers buf(ch);
    TeamResult out;
    run_team(team, ch, c, &buf.scratch, buf.bits.data(), buf.streams.data(), buf.sig.data(), buf.fresh.data(),
             buf.merged.data(), buf.rebuilt.data(), &out, gather);
    REQUIRE(buf.untouched_past_end());
    REQUIRE(out.padding_bits == 0);
    REQUIRE(!out.counts_differ);
    return out;
}

void check_against_reference(const TeamResult& got, const Chunk& ch, dp::Coding c) {
    const std::uint64_t len = ch.words.size(), nw = dp::plane_word_count(len);
    REQUIRE(got.split.size() == ch.planes);
    for (unsigned b = 0; b < ch.planes; ++b) {
        INFO("plane " << b << " of " << ch.planes);
        bool any = false;
        for (std::uint64_t j = 0; j < len; ++j) {
            const bool d = digit(ch.words[j], b, ch.planes, c);
            any |= d;
            REQUIRE((got.planes[b * nw + j / 64] >> (j % 64) & 1) == d);
        }
        for (std::uint64_t j = len; j < 64 * nw; ++j) REQUIRE((got.planes[b * nw + j / 64] >> (j % 64) & 1) == 0);
        REQUIRE(got.has_bits[b] == any);
        REQUIRE(got.split[b] == reference_streams(ch, b, c, false));
        REQUIRE(std::equal(got.planes.begin() + b * nw, got.planes.begin() + (b + 1) * nw, got.merged.begin() + b * nw));
    }
    if (ch.planes > 1) REQUIRE(got.after_zero == reference_streams(ch, 1, c, true));
    REQUIRE(got.rebuilt == ch.words);
}

}  // namespace

TEST_CASE("plane split: both PEXT / PDEP forms agree on every kind of mask", "[prism][planes_hd][one_thread]") {
    std::mt19937_64 rng(41);
    const dp::LoopBitGather loop;
    const dp::TableBitGather table;
    for (int i = 0; i < 200000; ++i) {
        const std::uint64_t v = rng(), density = rng() % 4;
        std::uint64_t mask = rng();
        if (density == 1) mask &= rng() & rng();
        if (density == 2) mask |= rng() | rng();
        if (density == 3) mask = i % 2 ? ~0ull : 0;
        const std::uint64_t g = loop.gather(v, mask);
        REQUIRE(g == table.gather(v, mask));
        const unsigned n = mans::detail::popcount64_hd(mask);
        if (n < 64) REQUIRE(g >> n == 0);
        const std::uint64_t low = n == 64 ? v : v & ((1ull << n) - 1);
        REQUIRE(loop.scatter(low, mask) == table.scatter(low, mask));
        REQUIRE(loop.scatter(g, mask) == (v & mask));
    }
}

TEST_CASE("plane split: stream bits are written and read at random offsets, also at a stream's end", "[prism][planes_hd][one_thread]") {
    std::mt19937_64 rng(43);
    std::vector<std::uint32_t> words(64);
    for (int i = 0; i < 4000; ++i) {
        const unsigned n = 1 + static_cast<unsigned>(rng() % 64);
        const std::uint64_t at = rng() % (32 * words.size() - n);
        const std::uint64_t v = n == 64 ? rng() : rng() & ((1ull << n) - 1);
        for (auto& w : words) w = static_cast<std::uint32_t>(rng());
        const std::vector<std::uint32_t> before = words;
        for (std::uint64_t b = 0; b < n; ++b) words[(at + b) / 32] &= ~(1u << ((at + b) % 32));
        dp::put_stream_bits(SoloTeam{}, words.data(), at, v, n);
        for (std::uint64_t b = 0; b < 32 * words.size(); ++b) {
            const bool inside = b >= at && b < at + n;
            const bool want = inside ? (v >> (b - at) & 1) : (before[b / 32] >> (b % 32) & 1);
            REQUIRE((words[b / 32] >> (b % 32) & 1) == want);
        }
        const auto* bytes = reinterpret_cast<const std::uint8_t*>(words.data());
        REQUIRE(dp::take_stream_bits(bytes, 4 * words.size(), at, n) == v);
        // A stream that ends with these bits: no byte past it is read (ASan).
        const std::vector<std::uint8_t> exact(bytes, bytes + (at + n + 7) / 8);
        REQUIRE(dp::take_stream_bits(exact.data(), exact.size(), at, n) == v);
    }
}

TEST_CASE("plane split: one thread follows FORMAT.md 4.5 code by code", "[prism][planes_hd][one_thread]") {
    for (dp::Coding c : {dp::Coding::negabinary, dp::Coding::sign_magnitude})
        for (std::uint64_t len : {1, 2, 63, 64, 65, 127, 128, 1000, 4096, 4096 + 17})
            for (int shape = 0; shape < 6; ++shape) {
                INFO("coding " << int(c) << " len " << len << " shape " << shape);
                const Chunk ch = make_chunk(len, shape, c, len * 7 + shape);
                check_against_reference(run_one(SoloTeam{}, ch, c, dp::TableBitGather{}), ch, c);
                check_against_reference(run_one(SoloTeam{}, ch, c, dp::LoopBitGather{}), ch, c);
            }
}

TEST_CASE("plane split: the CPU backend's kernel sets follow FORMAT.md 4.5 code by code", "[prism][planes_hd][one_thread]") {
    const mans::detail::Backend& cpu = mans::detail::cpu_backend();
    const mans::cpu::CpuFeatures& has = mans::cpu::cpu_features();
    const dp::PlaneBitKernels& portable = dp::kTablePlaneBits;
    std::vector<const dp::PlaneBitKernels*> sets{&portable};
    CHECK(std::string(portable.name) == "tables");
#ifdef MANS_HAVE_BMI2_KERNELS
    // The dispatch takes the instructions exactly where they are fast; they
    // are tested wherever the CPU has them (slow PDEP is still right).
    CHECK(std::string(cpu.plane_bits().name) == (has.fast_bmi2 && has.popcnt ? "bmi2" : "tables"));
    if (has.bmi2 && has.popcnt) sets.push_back(&mans::cpu::kBmi2PlaneBits);
    else WARN("this CPU lacks BMI2 or POPCNT: only the table kernels ran");
#else
    CHECK(&cpu.plane_bits() == &portable);
    WARN("built without the PEXT / PDEP kernels: only the table kernels ran");
    (void)has;
#endif
    for (const dp::PlaneBitKernels* k : sets)
        for (dp::Coding c : {dp::Coding::negabinary, dp::Coding::sign_magnitude})
            for (std::uint64_t len : {1, 2, 63, 64, 65, 127, 1000, 4096 + 17, 131072})
                for (int shape = 0; shape < 6; ++shape) {
                    INFO(k->name << " coding " << int(c) << " len " << len << " shape " << shape);
                    const Chunk ch = make_chunk(len, shape, c, len * 13 + shape);
                    check_against_reference(run_one(SoloTeam{}, ch, c, *k), ch, c);
                }
}

TEST_CASE("plane split: teams of 1-64 ranks give the one thread's streams", "[prism][planes_hd][one_thread]") {
    std::vector<std::uint64_t> area(mans::detail::kTeamSharedWords);
    for (dp::Coding c : {dp::Coding::negabinary, dp::Coding::sign_magnitude})
        for (std::uint64_t len : {1, 64, 65, 700, 4096, 4096 + 17})
            for (int shape : {0, 1, 3, 4, 5}) {
                const Chunk ch = make_chunk(len, shape, c, len * 11 + shape);
                const TeamResult solo = run_one(SoloTeam{}, ch, c, dp::TableBitGather{});
                for (unsigned n : {2u, 3u, 7u, 32u, 64u})
                    for (bool reverse : {false, true}) {
                        INFO("coding " << int(c) << " len " << len << " shape " << shape << " ranks " << n
                                       << (reverse ? " reversed" : ""));
                        const TeamResult t = run_one(LoopTeam{n, area.data(), reverse}, ch, c, dp::LoopBitGather{});
                        REQUIRE(t.split == solo.split);
                        REQUIRE(t.after_zero == solo.after_zero);
                        REQUIRE(t.merged == solo.merged);
                        REQUIRE(t.rebuilt == ch.words);
                    }
            }
}

TEST_CASE("plane split: a team of threads gives the one thread's streams", "[prism][planes_hd][thread_team]") {
    for (dp::Coding c : {dp::Coding::negabinary, dp::Coding::sign_magnitude}) {
        const Chunk ch = make_chunk(3000, 0, c, 5 + int(c));
        const TeamResult solo = run_one(SoloTeam{}, ch, c, dp::TableBitGather{});
        for (unsigned size : {3u, 8u, 32u}) {
            INFO("coding " << int(c) << " threads " << size);
            mans_test::ThreadTeamState st(size);
            Buffers buf(ch);
            TeamResult got;
            mans_test::run_members(size, [&](unsigned r) {
                run_team(mans_test::ThreadTeam{r, size, &st}, ch, c, &buf.scratch, buf.bits.data(), buf.streams.data(),
                         buf.sig.data(), buf.fresh.data(), buf.merged.data(), buf.rebuilt.data(), &got,
                         dp::LoopBitGather{});
            });
            REQUIRE(got.split == solo.split);
            REQUIRE(got.after_zero == solo.after_zero);
            REQUIRE(got.rebuilt == ch.words);
            REQUIRE(buf.untouched_past_end());
            REQUIRE(got.padding_bits == 0);
            REQUIRE(!got.counts_differ);
        }
    }
}

// The CPU encoder's code_rows kernels: the portable form and the
// backend's choice (AVX2 where this CPU and build have it).
std::vector<const dp::PrismCpuKernels*> cpu_kernel_sets() {
    const dp::PrismCpuKernels& chosen = mans::detail::cpu_backend().prism_kernels();
    std::vector<const dp::PrismCpuKernels*> sets{&dp::kPortablePrismKernels};
    if (&chosen != &dp::kPortablePrismKernels) sets.push_back(&chosen);
    else WARN("no AVX2 kernels here (CPU or build): only the portable code_rows ran");
    return sets;
}

TEST_CASE("plane split: each CPU kernel's bit matrix of up to 64 codes is the definition", "[prism][planes_hd]") {
    std::mt19937_64 rng(77);
    for (const dp::PrismCpuKernels* k : cpu_kernel_sets())
        for (unsigned n = 0; n <= 64; ++n)
            for (int density : {0, 1, 2, 3}) {  // random words, sparse bits, all ones, one byte per word
                INFO(k->name << " n " << n << " density " << density);
                std::vector<std::uint32_t> words(n);  // exactly n: a read past them shows under ASan
                for (std::uint32_t& w : words) {
                    const std::uint32_t r = static_cast<std::uint32_t>(rng());
                    w = density == 0 ? r
                        : density == 1 ? (rng() % 5 == 0 ? 1u << (r % 32) : 0u)
                        : density == 2 ? 0xffffffffu
                                       : (r & 0xffu) << 8 * (rng() % 4);
                }
                std::uint64_t rows[32];
                std::fill(rows, rows + 32, 0x5a5a5a5a5a5a5a5aull);  // every row must be written
                k->code_rows(words.data(), n, rows);
                for (unsigned s = 0; s < 32; ++s) {
                    std::uint64_t want = 0;
                    for (unsigned j = 0; j < n; ++j) want |= std::uint64_t{words[j] >> s & 1} << j;
                    INFO("row " << s);
                    REQUIRE(rows[s] == want);
                }
            }
}

TEST_CASE("plane split: the CPU's bit-matrix transpose equals transpose_planes", "[prism][planes_hd]") {
    for (const dp::PrismCpuKernels* k : cpu_kernel_sets())
        for (dp::Coding c : {dp::Coding::negabinary, dp::Coding::sign_magnitude})
            for (std::uint64_t len : {1, 7, 8, 9, 63, 64, 65, 130, 4096 + 17})
                for (int shape : {0, 1, 2, 3, 4, 5}) {
                    INFO(k->name << " coding " << int(c) << " len " << len << " shape " << shape);
                    const Chunk ch = make_chunk(len, shape, c, len * 19 + shape);
                    const std::uint64_t nw = dp::plane_word_count(len);
                    std::vector<std::uint64_t> want(ch.planes * nw), got(ch.planes * nw, 0x5a5a5a5a5a5a5a5aull);
                    dp::transpose_planes(SoloTeam{}, ch.words.data(), len, ch.planes, c, want.data());
                    dp::transpose_planes_one_thread(ch.words.data(), len, ch.planes, c, got.data(), k->code_rows);
                    REQUIRE(got == want);
                }
}

TEST_CASE("plane split: a warp's transpose by ballots gives transpose_planes' planes", "[prism][planes_hd][thread_team]") {
    for (dp::Coding c : {dp::Coding::negabinary, dp::Coding::sign_magnitude})
        for (std::uint64_t len : {1, 33, 64, 65, 130})  // a ballot is two barriers of every thread: keep it short
            for (int shape : {0, 4}) {
                const Chunk ch = make_chunk(len, shape, c, len * 13 + shape);
                const std::uint64_t nw = dp::plane_word_count(len);
                std::vector<std::uint64_t> want(ch.planes * nw);
                dp::transpose_planes(SoloTeam{}, ch.words.data(), len, ch.planes, c, want.data());
                for (unsigned size : {32u, 64u}) {
                    INFO("coding " << int(c) << " len " << len << " shape " << shape << " threads " << size);
                    mans_test::ThreadTeamState st(size);
                    std::vector<std::uint64_t> got(ch.planes * nw, 0x5a5a5a5a5a5a5a5aull);
                    mans_test::run_members(size, [&](unsigned r) {
                        const mans_test::ThreadTeam team{r, size, &st};
                        dp::transpose_planes_by_ballot(team, [&](bool p) { return st.ballot(r, size, p); },
                                                       ch.words.data(), len, ch.planes, c, got.data());
                    });
                    REQUIRE(got == want);
                }
            }
}

TEST_CASE("truncation stats: exact sums, the same for every team and CPU kernel", "[prism][planes_hd][one_thread]") {
    std::vector<std::uint64_t> area(mans::detail::kTeamSharedWords);
    // The CPU encoder's kernels (prism/cpu_kernels.hpp): the portable form
    // and the backend's choice, AVX2 where this CPU has it (and the build
    // has the kernels).
    const dp::PrismCpuKernels& chosen = mans::detail::cpu_backend().prism_kernels();
    std::vector<const dp::PrismCpuKernels*> kernels{&dp::kPortablePrismKernels};
    if (&chosen != &dp::kPortablePrismKernels) {
        CHECK(std::string(chosen.name) == "avx2");
        CHECK(mans::cpu::cpu_features().avx2);
        kernels.push_back(&chosen);
    } else {
        WARN("no AVX2 kernels here (CPU or build): only the portable truncation statistics ran");
    }
    for (dp::Coding c : {dp::Coding::negabinary, dp::Coding::sign_magnitude})
        for (std::uint64_t len : {1, 7, 8, 9, 65, 4096 + 17, 131072})
            for (int shape : {0, 1, 3, 4}) {
                INFO("coding " << int(c) << " len " << len << " shape " << shape);
                const Chunk ch = make_chunk(len, shape, c, len * 17 + shape);
                std::vector<std::int32_t> q(len);
                for (std::uint64_t j = 0; j < len; ++j) q[j] = dp::decode_word(ch.words[j], c);
                // The definition, with 128-bit integers.
                std::vector<std::uint32_t> want_max(ch.planes + 1, 0);
                std::vector<unsigned __int128> want_sum(ch.planes + 1, 0);
                for (std::uint64_t j = 0; j < len; ++j)
                    for (unsigned d = 1; d <= ch.planes; ++d) {
                        const std::int64_t e = q[j] - dp::decode_word(ch.words[j] & ~((d >= 32 ? 0xffffffffu : (1u << d) - 1) &
                                                                                   (c == dp::Coding::sign_magnitude ? 0x7fffffffu : 0xffffffffu)), c);
                        const std::uint64_t a = static_cast<std::uint64_t>(e < 0 ? -e : e);
                        want_max[d] = std::max<std::uint32_t>(want_max[d], static_cast<std::uint32_t>(a));
                        want_sum[d] += static_cast<unsigned __int128>(a) * a;
                    }
                std::vector<dp::TruncationPartial> partial(64 * (ch.planes + 1)), got(ch.planes + 1);
                auto check = [&](const std::vector<dp::TruncationPartial>& s) {
                    for (unsigned d = 0; d <= ch.planes; ++d) {
                        INFO("digits dropped " << d);
                        REQUIRE(s[d].max_err == want_max[d]);
                        REQUIRE(((static_cast<unsigned __int128>(s[d].sum_sq.hi) << 64) | s[d].sum_sq.lo) == want_sum[d]);
                    }
                };
                dp::truncation_stats(SoloTeam{}, q.data(), ch.words.data(), len, ch.planes, c, partial.data(), got.data());
                check(got);
                std::vector<dp::TruncationPartial> one(ch.planes + 1);  // the CPU encoder's form
                dp::truncation_stats_one_thread(q.data(), ch.words.data(), len, ch.planes, c, one.data());
                check(one);
                for (const dp::PrismCpuKernels* k : kernels) {
                    INFO("kernel " << k->name);
                    std::vector<dp::TruncationPartial> by_kernel(ch.planes + 1);
                    k->truncation_stats(q.data(), ch.words.data(), len, ch.planes, c, by_kernel.data());
                    check(by_kernel);
                }
                for (unsigned n : {2u, 7u, 32u, 64u})
                    for (bool reverse : {false, true}) {
                        INFO("ranks " << n << (reverse ? " reversed" : ""));
                        std::vector<dp::TruncationPartial> t(ch.planes + 1);
                        dp::truncation_stats(LoopTeam{n, area.data(), reverse}, q.data(), ch.words.data(), len, ch.planes,
                                             c, partial.data(), t.data());
                        check(t);
                    }
            }
    // The carry, and one conversion formula.
    dp::SquareSum s;
    s.add(~0ull);
    s.add(2ull);
    REQUIRE(s.lo == 1);
    REQUIRE(s.hi == 1);
    REQUIRE(s.to_double() == 18446744073709551617.0);
}

TEST_CASE("plane segment: method choice and layout", "[prism][planes_hd][one_thread]") {
    using dp::Method;
    CHECK(dp::pick_method(100, true, 5, 3) == Method::zero);
    CHECK(dp::pick_method(100, false, 100, 0) == Method::raw);        // a tie keeps raw
    CHECK(dp::pick_method(100, false, 99, 0) == Method::zero_elim);
    CHECK(dp::pick_method(100, false, 99, 99) == Method::zero_elim);  // ... and zero elimination
    CHECK(dp::pick_method(100, false, 99, 98) == Method::mans_rans);
    CHECK(dp::pick_method(100, false, 120, 100) == Method::raw);
    CHECK(dp::pick_method(100, false, 120, 0) == Method::raw);        // rANS not tried
    // Streams 0 and 3 empty (zero), 1 raw of 200 bytes (a 2-byte varint), 2 and 4 of 1 and 3 bytes.
    const Method method[dp::kPlaneStreams] = {Method::zero, Method::raw, Method::zero_elim, Method::zero, Method::mans_rans};
    std::vector<std::uint8_t> raw(200, 7);
    const std::uint8_t ze[1] = {9}, rans[3] = {1, 2, 3};
    const std::uint8_t* payload[dp::kPlaneStreams] = {nullptr, raw.data(), ze, nullptr, rans};
    const std::size_t size[dp::kPlaneStreams] = {0, 200, 1, 0, 3};
    const std::size_t n = dp::plane_segment_bytes(method, size);
    REQUIRE(n == 2 + 2 + 200 + 1 + 1 + 1 + 3);
    std::vector<std::uint8_t> out(n + 1, 0xee);
    REQUIRE(dp::write_plane_segment(method, payload, size, out.data()) == n);
    const unsigned methods = 1u << 2 | 2u << 4 | 3u << 8;
    CHECK(out[0] == (methods & 0xff));
    CHECK(out[1] == methods >> 8);
    CHECK(out[2] == (200 & 0x7f | 0x80));
    CHECK(out[3] == 1);
    CHECK(std::all_of(out.begin() + 4, out.begin() + 204, [](std::uint8_t b) { return b == 7; }));
    CHECK(out[204] == 1);
    CHECK(out[205] == 9);
    CHECK(out[206] == 3);
    CHECK(out[207] == 1);
    CHECK(out[209] == 3);
    CHECK(out[210] == 0xee);  // nothing past the segment
}
