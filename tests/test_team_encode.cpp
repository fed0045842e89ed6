// test_team_encode.cpp - the block encoder and the token stream encoder
// run by a team of ranks (core/team.hpp), as a GPU warp runs them, write
// the CPU backend's bytes: every mapping, dtype and size, every token
// distribution and lane count, teams smaller and larger than the stream's
// lanes, phases played forwards and backwards, and teams of real threads
// (thread_team.hpp) whose rANS lanes run as on a warp
// (rans_encode_as_member with a ballot). An output one byte too small
// fails in every member. The stream tables' choice, which the team splits,
// equals the one-thread choice kept here as the reference.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <utility>
#include <vector>

#include "backend.hpp"
#include "entropy/token_stream.hpp"
#include "entropy/token_stream_encode.hpp"
#include "mapping/block_batch.hpp"
#include "mapping/block_codec.hpp"
#include "test_support.hpp"
#include "thread_team.hpp"

namespace {

using mans::DType;
using namespace mans::detail;
using namespace mans_test;

// A deterministic stream of pseudo-random numbers.
struct Rng {
    std::uint64_t state;
    std::uint64_t next() {
        state = state * 6364136223846793005ull + 1442695040888963407ull;
        return state >> 33;
    }
    double unit() { return (static_cast<double>(next() % (1u << 30)) + 0.5) / (1u << 30); }
};

enum class TokenDist { constant, two_symbols, geometric, uniform, markov, sparse };
constexpr TokenDist kTokenDists[] = {TokenDist::constant, TokenDist::two_symbols, TokenDist::geometric,
                                     TokenDist::uniform,  TokenDist::markov,      TokenDist::sparse};
const char* dist_label(TokenDist d) {
    switch (d) {
        case TokenDist::constant: return "constant";
        case TokenDist::two_symbols: return "two symbols";
        case TokenDist::geometric: return "geometric";
        case TokenDist::uniform: return "uniform";
        case TokenDist::markov: return "markov";
        case TokenDist::sparse: return "sparse";
    }
    return "?";
}

// Tokens of a stream in the interleaved layout (slot t*lanes + j holds
// token t of lane j; slots past a lane's end are 0, as the tokenizers
// leave them). Markov tokens depend on the previous token of the lane, so
// that the encoder picks several contexts.
Bytes make_tokens(TokenDist d, const LaneLayout& lay, std::uint64_t seed) {
    Rng rng{seed};
    Bytes tok(lay.slots(), 0);
    for (unsigned j = 0; j < lay.lanes; ++j) {
        unsigned prev = 0;
        for (std::size_t t = 0; t < lay.lane_len(j); ++t) {
            unsigned v = 0;
            switch (d) {
                case TokenDist::constant: v = 200; break;
                case TokenDist::two_symbols: v = rng.next() % 5 == 0 ? 9 : 3; break;
                case TokenDist::geometric: v = static_cast<unsigned>(-std::log(rng.unit()) * 6.0); break;
                case TokenDist::uniform: v = rng.next() % 256; break;
                case TokenDist::markov:
                    v = prev >= 32 ? static_cast<unsigned>(rng.next() % 4)
                                   : 32 + static_cast<unsigned>(-std::log(rng.unit()) * 20.0);
                    break;
                case TokenDist::sparse: v = rng.next() % 97 == 0 ? 1 + rng.next() % 255 : 0; break;
            }
            v = v > 255 ? 255 : v;
            tok[t * lay.lanes + j] = static_cast<std::uint8_t>(v);
            prev = v;
        }
    }
    return tok;
}

// The CPU backend's encode (its SIMD kernels, growing vectors): the reference.
Bytes encode_on_cpu(const Bytes& tokens, const LaneLayout& lay) {
    static TokenStreamScratch sc;
    Bytes out;
    REQUIRE(encode_token_stream(tokens.data(), lay, cpu_backend().kernels(false), sc, out));
    return out;
}

// Fixed buffers that hold garbage, as on a GPU.
struct StreamBuffers {
    std::vector<EncSym> enc;
    std::vector<std::uint16_t> words;
    std::vector<StreamWork> work;
    explicit StreamBuffers(std::size_t n)
        : enc(std::size_t{kMaxContexts} * 256, EncSym{0xA5A5A5A5u, 0xA5A5A5A5u, 0xA5A5A5A5u, 0xA5A5A5A5u}),
          words(n + kWordPadding, 0xA5A5),
          work(1) {
        std::memset(static_cast<void*>(work.data()), 0xA5, sizeof(StreamWork));
    }
    TokenEncodeBuffers view() { return {enc.data(), words.data(), work.data()}; }
};

// An output of fixed capacity; each member of a team has its own cursor.
struct MemberOut {
    std::uint8_t* data;
    std::size_t cap;
    std::size_t used = 0;
    std::uint8_t* grow(std::size_t k) {
        if (k > cap - used) return nullptr;
        std::uint8_t* p = data + used;
        used += k;
        return p;
    }
};

struct Encoded {
    bool ok;
    Bytes out;  // the first `used` bytes (all of the buffer when !ok)
};

Encoded finish(bool ok, Bytes buf, std::size_t used) {
    if (ok) buf.resize(used);
    return {ok, buf};
}

// The reference lane loop, run once between phases (a SoloTeam or a
// LoopTeam, which runs that code once for the whole team).
const auto kReferenceLanes = [](RansEncodeArgs& a) { rans_encode_reference(a); };

template <typename Team>
Encoded encode_with(const Bytes& tokens, const LaneLayout& lay, std::size_t cap, const Team& team) {
    StreamBuffers b(lay.n);
    Bytes buf(cap, 0xEE);
    MemberOut out{buf.data(), cap};
    const bool ok = encode_token_stream_into(tokens.data(), lay, kReferenceLanes, b.view(), out, team);
    return finish(ok, buf, out.used);
}

// The rANS lanes of a team of real threads run the warp's lane loop
// (MemberEncodeLanes, as the GPU module does) with the barrier as the warp
// barrier and a ballot built from it.
struct ThreadOps {
    unsigned lane, n;
    ThreadTeamState* st;
    void sync() const { st->bar.wait(); }
    std::uint64_t ballot(bool p) const { return st->ballot(lane, n, p); }
    std::uint64_t* shared() const { return st->area; }
};
using ThreadEncodeLanes = MemberEncodeLanes<ThreadOps>;

// Encodes with `size` threads; the members must agree on the answer and
// on the output's length.
Encoded encode_with_threads(const Bytes& tokens, const LaneLayout& lay, std::size_t cap, unsigned size) {
    StreamBuffers b(lay.n);
    Bytes buf(cap, 0xEE);
    ThreadTeamState st(size);
    std::vector<MemberOut> outs(size, MemberOut{buf.data(), cap});
    std::vector<int> ok(size, -1);
    const TokenEncodeBuffers view = b.view();
    run_members(size, [&](unsigned r) {
        ok[r] = encode_token_stream_into(tokens.data(), lay, ThreadEncodeLanes{{r, size, &st}}, view, outs[r],
                                         ThreadTeam{r, size, &st});
    });
    for (unsigned r = 1; r < size; ++r) {
        REQUIRE(ok[r] == ok[0]);
        REQUIRE(outs[r].used == outs[0].used);
    }
    return finish(ok[0] == 1, buf, outs[0].used);
}

struct TeamShape {
    unsigned size;
    bool reverse;
};
// 3 and 7 split the steps unevenly; 64 leaves ranks without steps on short streams.
constexpr TeamShape kTeams[] = {{2, false}, {3, true}, {7, false}, {32, false}, {32, true}, {64, true}};

// The stream tables' choice as one thread made it before the team split
// it (team_context_sums, team_choose_stream_tables): merge the class
// histograms for each context count, estimate each merged context, then
// normalise every candidate precision's tables. The reference the split
// must equal in every decision and table.
void reference_merge(const std::uint32_t (*hist8)[256], unsigned k, std::uint32_t (*merged)[256]) {
    std::memset(merged, 0, sizeof(std::uint32_t) * kMaxContexts * 256);
    for (unsigned c = 0; c < kMaxContexts; ++c)
        for (unsigned s = 0; s < 256; ++s) merged[c < k ? c : k - 1][s] += hist8[c][s];
}
std::uint64_t reference_context_cost(const std::uint32_t (*hist8)[256], unsigned* contexts) {
    std::uint32_t merged[kMaxContexts][256];
    std::uint64_t best = ~0ull;
    for (unsigned k = 1; k <= kMaxContexts; k *= 2) {
        reference_merge(hist8, k, merged);
        std::uint64_t cost = 0;
        for (unsigned c = 0; c < k; ++c) cost += estimate_order0_fix16(merged[c]);
        if (cost < best) best = cost, *contexts = k;
    }
    return best;
}
struct ReferenceTables {
    unsigned k = 1, bits = 0;
    FreqTable tables[kMaxContexts];
    EncSym enc[kMaxContexts * 256];
};
void reference_choose(const std::uint32_t (*hist8)[256], ReferenceTables& out) {
    std::uint32_t merged[kMaxContexts][256];
    reference_context_cost(hist8, &out.k);
    reference_merge(hist8, out.k, merged);
    for (unsigned c = 0; c < out.k; ++c)
        if (symbols_in(merged[c]) == 0) merged[c][0] = 1;
    unsigned min_bits = kMinProbBits;
    for (unsigned c = 0; c < out.k; ++c)
        while ((1u << min_bits) < symbols_in(merged[c])) ++min_bits;
    static SymbolHeap heap;
    FreqTable trial;
    std::uint64_t best = ~0ull;
    for (unsigned bits : {min_bits > 10u ? min_bits : 10u, kMaxProbBits}) {
        std::uint64_t cost = 0;
        for (unsigned c = 0; c < out.k; ++c) {
            normalize_freqs(merged[c], bits, &trial, heap);
            cost += coded_cost_fix16(merged[c], trial, bits) + freq_table_bytes(trial) * 8 * kFixOne;
        }
        if (cost < best) best = cost, out.bits = bits;
    }
    std::memset(out.enc, 0, sizeof out.enc);
    for (unsigned c = 0; c < out.k; ++c) {
        normalize_freqs(merged[c], out.bits, &out.tables[c], heap);
        build_enc_table(out.tables[c], out.bits, out.enc + c * 256);
    }
}

// Class histograms of many shapes: empty classes, one symbol, all 256,
// counts past the log2 table (4097), a Markov-like mix that pays for
// contexts (all classes apart, or class 0 apart from the rest).
void make_class_histograms(unsigned shape, Rng& rng, std::uint32_t (*hist8)[256]) {
    std::memset(hist8, 0, sizeof(std::uint32_t) * kMaxContexts * 256);
    const unsigned used = 1 + rng.next() % kMaxContexts;  // classes with counts
    for (unsigned c = 0; c < kMaxContexts; ++c) {
        if (shape % 3 == 0 && c >= used) continue;
        for (unsigned s = 0; s < 256; ++s) {
            std::uint32_t v = 0;
            switch (shape % 7) {
                case 0: v = s == (c * 37) % 256 ? 1 + rng.next() % 70000 : 0; break;  // one symbol per class
                case 1: v = rng.next() % 3 == 0 ? rng.next() % 50 : 0; break;
                case 2: v = static_cast<std::uint32_t>(rng.next() % 9000 / (1 + s)); break;  // geometric-ish, > 4097
                case 3: v = 1 + rng.next() % 4; break;  // all 256 symbols
                case 4: v = (s / 32 == c) ? 1 + rng.next() % 3000 : (rng.next() % 40 == 0); break;  // by class
                case 5: v = rng.next() % 200 == 0 ? 1 + rng.next() % 200000 : 0; break;
                case 6: v = (s / 64 == (c == 0 ? 0u : 2u)) ? 1 + rng.next() % 500 : 0; break;  // class 0 apart
            }
            hist8[c][s] = v;
        }
    }
}

}  // namespace

TEST_CASE("a team encodes every token stream as the CPU backend does", "[team][one_thread]") {
    std::size_t encodes = 0, contexts_seen[9] = {};
    std::uint64_t area[kTeamSharedWords];
    // Lanes as the encoder picks them (lanes_for), and every lane count on
    // one size, including more lanes than tokens.
    std::vector<LaneLayout> layouts;
    for (std::size_t n : {1, 2, 255, 600, 1000, 5000, 33000, 131072}) layouts.push_back(LaneLayout::make(n, lanes_for(n)));
    for (unsigned lanes = 1; lanes <= kMaxLanes; lanes *= 2) {
        layouts.push_back(LaneLayout::make(3001, lanes));
        layouts.push_back(LaneLayout::make(5, lanes));
    }
    for (const LaneLayout& lay : layouts)
        for (TokenDist d : kTokenDists) {
            INFO(dist_label(d) << " n=" << lay.n << " lanes=" << lay.lanes);
            const Bytes tokens = make_tokens(d, lay, 1000 + lay.n + lay.lanes);
            const Bytes cpu = encode_on_cpu(tokens, lay);
            ++contexts_seen[1u << ((cpu[0] >> 3) & 3)];
            const std::size_t cap = cpu.size() + 64;
            const Encoded solo = encode_with(tokens, lay, cap, SoloTeam{});
            REQUIRE(solo.ok);
            CHECK((solo.out == cpu));
            for (const TeamShape& t : kTeams) {
                INFO("team of " << t.size << (t.reverse ? ", phases reversed" : ""));
                for (std::uint64_t& w : area) w = 0xA5A5A5A5A5A5A5A5ull;
                const Encoded team = encode_with(tokens, lay, cap, LoopTeam{t.size, area, t.reverse});
                CHECK(team.ok);
                CHECK((team.out == cpu));
                ++encodes;
            }
            // One byte short: every form fails.
            CHECK_FALSE(encode_with(tokens, lay, cpu.size() - 1, SoloTeam{}).ok);
            CHECK_FALSE(encode_with(tokens, lay, cpu.size() - 1, LoopTeam{7, area, false}).ok);
        }
    // The streams used one, two or more contexts.
    CHECK(contexts_seen[1] > 10);
    CHECK(contexts_seen[2] + contexts_seen[4] + contexts_seen[8] > 5);
    std::printf("  team stream encodes: %zu, all equal to the CPU backend's\n", encodes);
}

TEST_CASE("a team chooses a token stream's contexts, precision and tables, and estimates histograms, as one thread did", "[team][one_thread]") {
    std::uint64_t area[kTeamSharedWords];
    std::vector<StreamWork> work(1);
    std::vector<EncSym> enc(kMaxContexts * 256);
    std::size_t choices = 0, by_k[9] = {}, by_bits[13] = {};
    Rng rng{77};
    for (unsigned shape = 0; shape < 240; ++shape) {
        std::memset(static_cast<void*>(work.data()), 0xA5, sizeof(StreamWork));
        StreamWork& w = work[0];
        make_class_histograms(shape, rng, w.hist8);
        ReferenceTables ref;
        reference_choose(w.hist8, ref);
        unsigned ref_k_cost = 0;
        const std::uint64_t ref_cost = reference_context_cost(w.hist8, &ref_k_cost);
        ++by_k[ref.k], ++by_bits[ref.bits];
        const auto check = [&](const auto& team, const char* what) {
            INFO("shape " << shape << ", " << what << " of " << team.size());
            // rank_modes' order-0 estimates of single histograms.
            const std::uint32_t* hists[kMaxContexts];
            for (unsigned c = 0; c < kMaxContexts; ++c) hists[c] = w.hist8[c];
            Order0Sums sums[kMaxContexts];
            team_order0_sums(team, hists, kMaxContexts, sums);
            for (unsigned c = 0; c < kMaxContexts; ++c) CHECK(order0_cost(sums[c]) == estimate_order0_fix16(w.hist8[c]));
            // The sample estimate: the same cost.
            team_context_sums(team, w.hist8, w.sums);
            unsigned k = 0;
            CHECK(best_context_cost_fix16(w.sums, &k) == ref_cost);
            CHECK(k == ref_k_cost);
            // The stream's choice: the same contexts, precision, tables and encoder entries.
            std::fill(enc.begin(), enc.end(), EncSym{0, 0, 0, 0});
            const StreamTables got = team_choose_stream_tables(team, w, enc.data());
            REQUIRE(got.contexts == ref.k);
            CHECK(got.prob_bits == ref.bits);
            for (unsigned c = 0; c < ref.k; ++c) CHECK(std::memcmp(got.tables[c].q, ref.tables[c].q, sizeof ref.tables[c].q) == 0);
            CHECK(std::memcmp(enc.data(), ref.enc, sizeof ref.enc) == 0);
            ++choices;
        };
        check(SoloTeam{}, "solo");
        for (const TeamShape& t : kTeams) {
            for (std::uint64_t& v : area) v = 0xA5A5A5A5A5A5A5A5ull;
            check(LoopTeam{t.size, area, t.reverse}, t.reverse ? "loop team, reversed" : "loop team");
        }
        check(LoopTeam{16, area, false}, "loop team");
        check(LoopTeam{1, area, false}, "loop team");
    }
    // Every context count and both precisions were chosen.
    for (unsigned k = 1; k <= kMaxContexts; k *= 2) {
        INFO(k << " contexts");
        CHECK(by_k[k] > 5);
    }
    CHECK(by_bits[10] > 5);
    CHECK(by_bits[12] > 5);
    std::printf("  stream table choices: %zu, all equal to the one-thread reference\n", choices);
}

TEST_CASE("the context count's estimate keeps the fewer contexts on a tie", "[team][one_thread]") {
    // Empty classes and symbol counts only, so each cost is its tables':
    // 1 context with 2 symbols (5 bytes) ties 2 contexts with 0 and 1
    // symbols (2 + 3 bytes); 4 and 8 contexts cost more.
    ContextSums sums{};
    for (unsigned i = 0; i < kMergedContexts; ++i) sums.nsym[i] = 200;
    sums.nsym[merged_context(1, 0)] = 2;
    sums.nsym[merged_context(2, 0)] = 0;
    sums.nsym[merged_context(2, 1)] = 1;
    REQUIRE(merged_order0_fix16(sums, 1, 0) == 5 * 8 * kFixOne);
    REQUIRE(merged_order0_fix16(sums, 2, 0) + merged_order0_fix16(sums, 2, 1) == 5 * 8 * kFixOne);
    unsigned k = 0;
    CHECK(best_context_cost_fix16(sums, &k) == 5 * 8 * kFixOne);
    CHECK(k == 1);
    // One symbol fewer in context 1 of 2: 2 contexts win.
    sums.nsym[merged_context(2, 1)] = 0;
    CHECK(best_context_cost_fix16(sums, &k) == 4 * 8 * kFixOne);
    CHECK(k == 2);
}

TEST_CASE("a team of threads chooses a token stream's tables as one thread did", "[team][thread_team]") {
    // Real threads (ThreadSanitizer runs this): each rank's heap, trials
    // and sums are its own, or the threads race.
    Rng rng{91};
    std::vector<StreamWork> work(1);
    for (unsigned shape = 0; shape < 21; ++shape) {
        StreamWork& w = work[0];
        std::memset(static_cast<void*>(&w), 0xA5, sizeof w);
        make_class_histograms(shape, rng, w.hist8);
        ReferenceTables ref;
        reference_choose(w.hist8, ref);
        unsigned ref_k = 0;
        const std::uint64_t ref_cost = reference_context_cost(w.hist8, &ref_k);
        for (unsigned size : {3u, 16u, 32u}) {
            INFO("shape " << shape << ", " << size << " threads");
            ThreadTeamState st(size);
            std::vector<EncSym> enc(kMaxContexts * 256);
            std::vector<std::uint64_t> cost(size), order0(size);
            std::vector<unsigned> k(size), bits(size);
            Order0Sums sums[1];  // scratch, as the encoder's
            run_members(size, [&](unsigned r) {
                const ThreadTeam team{r, size, &st};
                const std::uint32_t* hists[1] = {w.hist8[0]};
                team_order0_sums(team, hists, 1, sums);
                order0[r] = order0_cost(sums[0]);
                team_context_sums(team, w.hist8, w.sums);
                cost[r] = best_context_cost_fix16(w.sums, nullptr);
                const StreamTables got = team_choose_stream_tables(team, w, enc.data());
                k[r] = got.contexts, bits[r] = got.prob_bits;
            });
            for (unsigned r = 0; r < size; ++r) {
                CHECK(order0[r] == estimate_order0_fix16(w.hist8[0]));
                CHECK(cost[r] == ref_cost);
                CHECK(k[r] == ref.k);
                CHECK(bits[r] == ref.bits);
            }
            for (unsigned c = 0; c < ref.k; ++c) CHECK(std::memcmp(w.trials[ref.bits == 10 ? 0 : 1][c].q, ref.tables[c].q, sizeof ref.tables[c].q) == 0);
            CHECK(std::memcmp(enc.data(), ref.enc, sizeof ref.enc) == 0);
        }
    }
}

TEST_CASE("a team of threads with a ballot encodes token streams as the CPU backend does", "[team][thread_team]") {
    std::size_t encodes = 0;
    // Members: a warp (32) and a gfx9 wavefront (64), at least one per lane.
    const LaneLayout layouts[] = {LaneLayout::make(1, 1),    LaneLayout::make(700, 2), LaneLayout::make(3000, 4),
                                  LaneLayout::make(5, 32),   LaneLayout::make(2500, 32)};
    for (const LaneLayout& lay : layouts)
        for (TokenDist d : {TokenDist::two_symbols, TokenDist::geometric, TokenDist::uniform, TokenDist::markov}) {
            const Bytes tokens = make_tokens(d, lay, 7 + lay.n);
            const Bytes cpu = encode_on_cpu(tokens, lay);
            for (unsigned size : {32u, 64u}) {
                if (size == 64 && lay.n != 2500) continue;
                INFO(dist_label(d) << " n=" << lay.n << " lanes=" << lay.lanes << ", " << size << " threads");
                const Encoded team = encode_with_threads(tokens, lay, cpu.size() + 64, size);
                CHECK(team.ok);
                CHECK((team.out == cpu));
                ++encodes;
            }
            CHECK_FALSE(encode_with_threads(tokens, lay, cpu.size() - 1, 32).ok);
        }
    std::printf("  thread-team stream encodes: %zu, all equal to the CPU backend's\n", encodes);
}

namespace {

// The CPU encoder's payload for a block (its SIMD kernels, growing scratch):
// the reference.
Bytes block_on_cpu(DType dt, const Bytes& raw, std::size_t n, ModeHint hint) {
    static BlockScratch scratch;
    Bytes payload;
    encode_block(dt, raw.data(), n, cpu_backend().kernels(false), scratch, payload, hint);
    return payload;
}

// One block through the batch entry the GPU kernels run
// (encode_batch_block_as), in a slice that holds garbage, by a team that
// run(member) plays; returns the payload (status and size checked).
struct BlockRun {
    mans_backend_encode_batch batch{};
    std::vector<std::uint8_t> slice, slot;
    std::uint64_t payload_bytes = ~0ull;
    std::uint8_t* base = nullptr;
    BlockRun(DType dt, const Bytes& raw, std::size_t n) {
        const unsigned esize = static_cast<unsigned>(mans::dtype_size(dt));
        slice.assign(encode_slice_layout(n, esize).total + 16, 0xA5);
        base = reinterpret_cast<std::uint8_t*>((reinterpret_cast<std::uintptr_t>(slice.data()) + 15) &
                                               ~std::uintptr_t{15});
        slot.assign(1 + n * esize + 1, 0xEE);  // one guard byte past the slot
        batch.dtype = static_cast<int>(dt);
        batch.blocks = 1;
        batch.block_elems = n;
        batch.last_elems = n;
        batch.src = raw.data();
        batch.slots = slot.data();
        batch.slot_bytes = slot.size() - 1;
        batch.payload_bytes = &payload_bytes;
    }
    // The payload; nothing past it in the slot was written.
    Bytes payload() const {
        REQUIRE(payload_bytes <= batch.slot_bytes);
        std::size_t written_past = 0;
        for (std::size_t i = payload_bytes; i < slot.size(); ++i) written_past += slot[i] != 0xEE;
        CHECK(written_past == 0);
        return Bytes(slot.begin(), slot.begin() + static_cast<std::ptrdiff_t>(payload_bytes));
    }
};

// Runs the block encoder directly (any mapping hint) as one member of a
// team in the slice at base; returns the member's output size (the
// payload is at base + layout.out once every member is done).
// cap: the output's capacity (0: the encoder's bound).
template <typename U, typename Team, typename Lanes>
std::size_t run_member(DType dt, const Bytes& raw, std::size_t n, ModeHint hint, std::uint8_t* base,
                       const Team& team, const Lanes& lanes, std::size_t cap = 0) {
    const EncodeSliceLayout lay = encode_slice_layout(n, sizeof(U));
    FixedEncodeEnv<Lanes> env{base, lay, n, sizeof(U),
                              FixedOut{base + lay.out, cap ? cap : block_encode_out_bound(n, sizeof(U))}, lanes};
    const bool ok = BlockEncoder<U, FixedEncodeEnv<Lanes>, false, Team>(raw.data(), n, sign_flip(dt), env, team).run(hint);
    return ok ? env.payload.used : ~std::size_t{0};
}

Bytes payload_at(const BlockRun& run, std::size_t used, unsigned esize) {
    REQUIRE(used != ~std::size_t{0});
    const std::uint8_t* p = run.base + encode_slice_layout(run.batch.block_elems, esize).out;
    return Bytes(p, p + used);
}

// A LoopTeam: through the batch entry (automatic choice), or directly with a hint.
template <typename U>
Bytes block_as_loop_team(DType dt, const Bytes& raw, std::size_t n, ModeHint hint, unsigned size, bool reverse) {
    BlockRun run(dt, raw, n);
    std::uint64_t area[kTeamSharedWords];
    for (std::uint64_t& w : area) w = 0xA5A5A5A5A5A5A5A5ull;
    const LoopTeam team{size, area, reverse};
    if (hint != ModeHint::automatic)
        return payload_at(run, run_member<U>(dt, raw, n, hint, run.base, team, ReferenceEncodeLanes{}), sizeof(U));
    const std::int32_t st = encode_batch_block_as<U>(run.batch, 0, run.base, team);
    REQUIRE(st == MANS_OK);
    return run.payload();
}

// A team of threads, the same two ways; the members must agree. With a
// cap (an output too small), every member must fail: returns no bytes.
template <typename U>
Bytes block_as_thread_team(DType dt, const Bytes& raw, std::size_t n, ModeHint hint, unsigned size,
                           std::size_t cap = 0) {
    BlockRun run(dt, raw, n);
    ThreadTeamState st(size);
    std::vector<std::size_t> result(size, 0);
    run_members(size, [&](unsigned r) {
        const ThreadTeam team{r, size, &st};
        const ThreadEncodeLanes lanes{{r, size, &st}};
        if (hint != ModeHint::automatic)
            result[r] = run_member<U>(dt, raw, n, hint, run.base, team, lanes, cap);
        else
            result[r] = static_cast<std::size_t>(encode_batch_block_as<U>(run.batch, 0, run.base, team, lanes));
    });
    for (std::size_t v : result) REQUIRE(v == result[0]);
    if (cap) {
        CHECK(result[0] == ~std::size_t{0});
        return {};
    }
    if (hint != ModeHint::automatic) return payload_at(run, result[0], sizeof(U));
    REQUIRE(result[0] == static_cast<std::size_t>(MANS_OK));
    return run.payload();
}

template <typename F>
void with_elem_type(DType dt, F&& fn) {
    switch (mans::dtype_size(dt)) {
        case 1: return fn(std::uint8_t{});
        case 2: return fn(std::uint16_t{});
        case 4: return fn(std::uint32_t{});
        default: return fn(std::uint64_t{});
    }
}

const ModeHint kHints[] = {ModeHint::automatic,    ModeHint::stored,      ModeHint::constant,
                           ModeHint::token_center, ModeHint::token_delta, ModeHint::token_repeat,
                           ModeHint::adm,          ModeHint::byte_planes, ModeHint::dictionary};

}  // namespace

TEST_CASE("a team encodes every block as the CPU backend does", "[team][one_thread]") {
    std::size_t encodes = 0, by_mode[8] = {};
    // Every distribution with the automatic choice (the batch entry the
    // kernels run), and every mapping forced on three of them.
    for (DType dt : kAllDTypes)
        for (Dist dist : kAllDists)
            for (std::size_t n : {1, 31, 513, 8193, 20000})
                for (ModeHint hint : kHints) {
                    if (hint != ModeHint::automatic && dist != Dist::skewed && dist != Dist::small_range_2100 &&
                        dist != Dist::sparse_values)
                        continue;
                    const Bytes raw = generate(dt, dist, n, 300 + n);
                    const Bytes cpu = block_on_cpu(dt, raw, n, hint);
                    ++by_mode[cpu[0] & 7];
                    for (const TeamShape& t : kTeams) {
                        INFO(mans::dtype_name(dt) << " " << dist_name(dist) << " n=" << n << " hint "
                                                  << int(hint) << " mode " << int(cpu[0]) << ", team of " << t.size
                                                  << (t.reverse ? ", phases reversed" : ""));
                        with_elem_type(dt, [&](auto u) {
                            CHECK((block_as_loop_team<decltype(u)>(dt, raw, n, hint, t.size, t.reverse) == cpu));
                        });
                        ++encodes;
                    }
                }
    // Every mapping was written by teams (modes 0..5).
    for (int m = 0; m <= 5; ++m) {
        INFO("mode " << m);
        CHECK(by_mode[m] > 10);
    }
    std::printf("  team block encodes: %zu, all equal to the CPU backend's\n", encodes);
}

TEST_CASE("a team of threads with a ballot encodes blocks as the CPU backend does", "[team][thread_team]") {
    std::size_t encodes = 0, by_mode[8] = {}, dictionary_won = 0;
    // 31 elements: 1 rANS lane; 3000: 8 lanes. The automatic choice on
    // sparse values: a dictionary that wins replaces the first mapping
    // (erase_output).
    for (DType dt : {DType::u8, DType::u16, DType::i32, DType::u64})
        for (std::size_t n : {31, 3000})
            for (ModeHint hint : kHints) {
                const Dist dist = hint == ModeHint::automatic ? Dist::sparse_values
                                  : hint == ModeHint::constant ? Dist::constant
                                                               : Dist::skewed;
                const Bytes raw = generate(dt, dist, n, 11 + n);
                const Bytes cpu = block_on_cpu(dt, raw, n, hint);
                ++by_mode[cpu[0] & 7];
                dictionary_won += hint == ModeHint::automatic && (cpu[0] & 7) == 5;
                INFO(mans::dtype_name(dt) << " n=" << n << " hint " << int(hint) << " mode " << int(cpu[0]));
                with_elem_type(dt, [&](auto u) {
                    CHECK((block_as_thread_team<decltype(u)>(dt, raw, n, hint, 32) == cpu));
                });
                ++encodes;
            }
    for (int m = 0; m <= 5; ++m) {
        INFO("mode " << m);
        CHECK(by_mode[m] > 0);
    }
    CHECK(dictionary_won > 0);
    // 32 rANS lanes: one per member of a warp, and a gfx9 wavefront of 64
    // with members past the lanes.
    const std::pair<ModeHint, unsigned> wide[] = {
        {ModeHint::automatic, 32}, {ModeHint::token_delta, 64}, {ModeHint::adm, 32}};
    for (const auto& [hint, size] : wide) {
        const Bytes raw = generate(DType::u16, Dist::skewed, 20000, 5);
        const Bytes cpu = block_on_cpu(DType::u16, raw, 20000, hint);
        INFO("u16 n=20000 hint " << int(hint) << ", " << size << " threads");
        CHECK((block_as_thread_team<std::uint16_t>(DType::u16, raw, 20000, hint, size) == cpu));
        ++encodes;
    }
    // An output that fills: every member fails alike.
    const Bytes raw = generate(DType::u32, Dist::skewed, 3000, 9);
    block_as_thread_team<std::uint32_t>(DType::u32, raw, 3000, ModeHint::token_center, 32, 40);
    std::printf("  thread-team block encodes: %zu, all equal to the CPU backend's\n", encodes);
}

// The encoder's output bound (block_encode_out_bound, 2 * (1 + n * esize)
// bytes) relies on a mapping that does not fit losing, as a longer one
// would, instead of failing the block. A block the CPU stores must come
// out stored from an output of any size from the stored payload's (S) up:
// every mapping tried (forced, or the automatic choice's, and any
// dictionary trial behind it) that does not fit must lose, wherever its
// bytes run out (a header, a token stream, its raw bits); an output of
// S - 1 bytes fails in every member.
TEST_CASE("a mapping that does not fit the encoder's output loses, as a longer one would", "[team]") {
    std::size_t stored_runs = 0;
    for (DType dt : kAllDTypes)
        for (std::size_t n : {31, 513, 8193})
            for (ModeHint hint : kHints) {
                if (hint == ModeHint::stored || hint == ModeHint::constant) continue;
                const Bytes raw = generate(dt, Dist::random_full, n, 70 + n);
                const Bytes cpu = block_on_cpu(dt, raw, n, hint);
                const std::size_t stored = 1 + n * mans::dtype_size(dt);
                REQUIRE(cpu.size() <= stored);
                if (cpu.size() != stored) continue;  // a mapping won: it fits any output that holds the stored block
                std::vector<std::size_t> caps = {stored - 1, stored, stored + 1};
                for (std::size_t j = 1; j <= 24; ++j) caps.push_back(stored + stored * j / 24);
                for (const std::size_t cap : caps) {
                    INFO(mans::dtype_name(dt) << " n=" << n << " hint " << int(hint) << ", output of " << cap
                                              << " bytes for " << stored << " stored");
                    with_elem_type(dt, [&](auto u) {
                        using U = decltype(u);
                        BlockRun run(dt, raw, n);
                        std::uint64_t area[kTeamSharedWords];
                        for (std::uint64_t& w : area) w = 0xA5A5A5A5A5A5A5A5ull;
                        const std::size_t used = run_member<U>(dt, raw, n, hint, run.base, LoopTeam{7, area, false},
                                                               ReferenceEncodeLanes{}, cap);
                        if (cap < stored) {
                            CHECK(used == ~std::size_t{0});
                        } else {
                            REQUIRE(used == stored);
                            CHECK(payload_at(run, used, sizeof(U)) == cpu);
                            ++stored_runs;
                        }
                    });
                }
            }
    // Every dtype and size, with the automatic choice and forced mappings.
    CHECK(stored_runs >= 4 * 3 * 3 * 26);
    std::printf("  blocks stored in outputs from the stored size up: %zu\n", stored_runs);
    // Values from a few random ones all over the range (holes), as many
    // as the mode choice takes for a dictionary candidate: the dictionary
    // trial, written behind the first mapping in the encoder's own bound
    // (the batch entry's output), wins and replaces it.
    std::size_t dictionary_won = 0;
    for (DType dt : {DType::u16, DType::u32, DType::u64})
        for (std::size_t distinct : {64, 256, 500}) {
            const std::size_t n = 8193, esize = mans::dtype_size(dt);
            Rng rng{distinct * 7 + esize};
            std::vector<std::uint64_t> values(distinct);
            for (std::uint64_t& v : values) v = rng.next() << 33 ^ rng.next() << 2 ^ rng.next();
            Bytes raw(n * esize);
            for (std::size_t i = 0; i < n; ++i) {
                const std::uint64_t v = values[rng.next() % distinct];
                std::memcpy(raw.data() + i * esize, &v, esize);  // little-endian low bytes
            }
            const Bytes cpu = block_on_cpu(dt, raw, n, ModeHint::automatic);
            INFO(mans::dtype_name(dt) << " " << distinct << " distinct values, mode " << int(cpu[0] & 7));
            dictionary_won += (cpu[0] & 7) == 5;
            with_elem_type(dt, [&](auto u) {  // through the kernels' batch entry, in the bound
                CHECK((block_as_loop_team<decltype(u)>(dt, raw, n, ModeHint::automatic, 32, false) == cpu));
            });
        }
    CHECK(dictionary_won == 9);
}
