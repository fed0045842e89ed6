// token_stream_encode.hpp - chooses the tables of one token stream and codes
// it (docs/FORMAT.md "Token stream"), appending to a caller's output.
//
// Shared by the CPU and the GPU block encoders (MANS_HD), like
// token_stream_decode.hpp: the lane loop and the output are template
// parameters. Every decision (contexts, precision) comes from integer cost
// estimates, so both write the same bytes.
#pragma once

#include <cstddef>
#include <cstdint>
#include <type_traits>

#include "core/byte_io.hpp"
#include "core/hd.hpp"
#include "core/team.hpp"
#include "entropy/cost_model.hpp"
#include "entropy/rans.hpp"
#include "entropy/rans_table.hpp"
#include "entropy/token_stream_decode.hpp"  // kStreamFlagReservedMask

namespace mans::detail {

MANS_HD unsigned symbols_in(const std::uint32_t* hist) {
    unsigned n = 0;
    for (unsigned s = 0; s < 256; ++s) n += hist[s] != 0;
    return n;
}

// Rough table size for a context, used to decide how many contexts pay.
MANS_HD std::uint64_t approx_table_fix16(unsigned nsym) {
    if (nsym == 0) return 2 * 8 * kFixOne;
    const std::uint64_t bytes = 1 + (nsym <= 40 ? nsym : 32) + nsym + nsym / 4;
    return bytes * 8 * kFixOne;
}

// Estimated coded size in 16.16 fixed-point bits of tokens with histogram
// `hist` (order 0), including an approximate table cost.
MANS_HD_CALL std::uint64_t estimate_order0_fix16(const std::uint32_t* hist) {
    return entropy_cost_fix16(hist, 256) + approx_table_fix16(symbols_in(hist));
}

// An order-0 estimate (estimate_order0_fix16) from sums over the bins of
// its histogram, which a team can split: with T the total, T*log2(T) -
// sum h*log2(h) equals entropy_cost_fix16's sum h*(log2(T) - log2(h))
// (integers, no term negative).
MANS_HD std::uint64_t order0_from_sums(std::uint64_t total, std::uint64_t log_sum, unsigned nsym) {
    return (total ? log2_fix16(total) * total - log_sum : 0) + approx_table_fix16(nsym);
}

// The sums of one histogram's estimate.
struct Order0Sums {
    std::uint64_t log_sum, total;  // sum of h * log2_small_fix16(h), of h
    std::uint32_t nsym;            // bins with h > 0
};
MANS_HD std::uint64_t order0_cost(const Order0Sums& s) { return order0_from_sums(s.total, s.log_sum, s.nsym); }

// The sums of hists[0..m) into sums[0..m) (scratch), by the team: rank r
// takes bins r, r + size, ... of each and adds its sums in; the same sums
// in every member after it.
template <typename Team>
MANS_HD_CALL void team_order0_sums(const Team& team, const std::uint32_t* const* hists, unsigned m, Order0Sums* sums) {
    team_zero(team, reinterpret_cast<std::uint8_t*>(sums), m * sizeof(Order0Sums));
    team.for_ranks([&](unsigned r) {
        for (unsigned h = 0; h < m; ++h) {
            std::uint64_t log_sum = 0, total = 0;
            std::uint32_t nsym = 0;
            for (unsigned s = r; s < 256; s += team.size()) {
                const std::uint32_t v = hists[h][s];
                if (!v) continue;
                ++nsym, total += v;
                log_sum += std::uint64_t{v} * log2_small_fix16(v);
            }
            if (nsym) team.add(&sums[h].nsym, nsym), team.add64(&sums[h].total, total), team.add64(&sums[h].log_sum, log_sum);
        }
    });
    team.fence_atomics();  // the sums are read next
}

// The context-count choice folds the 8 class histograms (by class of the
// previous token) into k = 1, 2, 4 or 8 contexts, classes >= k - 1 sharing
// the last: 15 merged contexts in all, context c of k at merged_context.
inline constexpr unsigned kMergedContexts = 2 * kMaxContexts - 1;
MANS_HD unsigned merged_context(unsigned k, unsigned c) { return k - 1 + c; }

// Bin s of context c of k.
MANS_HD std::uint32_t merged_count(const std::uint32_t (*hist8)[256], unsigned k, unsigned c, unsigned s) {
    if (c + 1 < k) return hist8[c][s];
    std::uint32_t v = 0;
    for (unsigned q = c; q < kMaxContexts; ++q) v += hist8[q][s];
    return v;
}

// What the order-0 estimates of the 15 merged contexts need, as sums over
// the bins (order0_from_sums), so that a team can split the bins instead
// of one member merging and estimating alone (on a GPU that was a chain of
// dependent loads and stores, several per block). A context's total is
// the sum of its classes' totals.
struct ContextSums {
    std::uint64_t log_sum[kMergedContexts];  // sum of h * log2_small_fix16(h)
    std::uint32_t nsym[kMergedContexts];     // bins with h > 0
    std::uint64_t class_total[kMaxContexts];
};

// The sums of hist8, by the team: rank r takes bins r, r + size, ... and
// adds its sums in (team.add, team.add64). The same sums in every member.
template <typename Team>
MANS_HD_CALL void team_context_sums(const Team& team, const std::uint32_t (*hist8)[256], ContextSums& sums) {
    team_zero(team, reinterpret_cast<std::uint8_t*>(&sums), sizeof sums);
    team.for_ranks([&](unsigned r) {
        std::uint64_t log_sum[kMergedContexts] = {};
        std::uint32_t nsym[kMergedContexts] = {};
        std::uint64_t total[kMaxContexts] = {};
        for (unsigned s = r; s < 256; s += team.size()) {
            std::uint32_t tail[kMaxContexts + 1];  // tail[q]: classes q .. 7
            tail[kMaxContexts] = 0;
            for (unsigned q = kMaxContexts; q-- > 0;) {
                const std::uint32_t h = hist8[q][s];
                total[q] += h;
                tail[q] = tail[q + 1] + h;
            }
            if (tail[0] == 0) continue;  // a token no class has: no context has it either
            for (unsigned k = 1; k <= kMaxContexts; k *= 2)
                for (unsigned c = 0; c < k; ++c) {
                    const std::uint32_t h = c + 1 < k ? tail[c] - tail[c + 1] : tail[c];
                    if (!h) continue;
                    const unsigned i = merged_context(k, c);
                    ++nsym[i];
                    log_sum[i] += std::uint64_t{h} * log2_small_fix16(h);
                }
        }
        for (unsigned i = 0; i < kMergedContexts; ++i)
            if (nsym[i]) team.add(&sums.nsym[i], nsym[i]), team.add64(&sums.log_sum[i], log_sum[i]);
        for (unsigned q = 0; q < kMaxContexts; ++q)
            if (total[q]) team.add64(&sums.class_total[q], total[q]);
    });
    team.fence_atomics();  // every member reads the sums next
}

// estimate_order0_fix16 of context c of k, from the sums.
MANS_HD std::uint64_t merged_order0_fix16(const ContextSums& sums, unsigned k, unsigned c) {
    const unsigned last = c + 1 < k ? c : kMaxContexts - 1;
    std::uint64_t total = 0;
    for (unsigned q = c; q <= last; ++q) total += sums.class_total[q];
    const unsigned i = merged_context(k, c);
    return order0_from_sums(total, sums.log_sum[i], sums.nsym[i]);
}

// Estimated coded size (16.16 bits) of the stream with the best number of
// contexts (returned in *contexts when non-null; ties go to fewer): the
// encoder's own choice.
MANS_HD std::uint64_t best_context_cost_fix16(const ContextSums& sums, unsigned* contexts) {
    std::uint64_t best_cost = ~0ull;
    for (unsigned k = 1; k <= kMaxContexts; k *= 2) {
        std::uint64_t cost = 0;
        for (unsigned c = 0; c < k; ++c) cost += merged_order0_fix16(sums, k, c);
        if (cost < best_cost) {
            best_cost = cost;
            if (contexts) *contexts = k;
        }
    }
    return best_cost;
}

// Histograms and tables of one stream's encode (about 65 KiB). They live
// in the caller's scratch, not on the stack: a GPU thread's stack is small
// (gfx9: 128 KiB, and hipcc inlines every call, so frames add up).
struct StreamWork {
    std::uint32_t hist8[kMaxContexts][256];   // by class of the previous token
    std::uint32_t merged[kMaxContexts][256];  // folded into the chosen contexts
    ContextSums sums;
    // The precision candidates' tables and estimated costs, [candidate]
    // [context]; the chosen candidate's tables are the stream's.
    FreqTable trials[2][kMaxContexts];
    std::uint64_t trial_cost[2][kMaxContexts];
    SymbolHeap heaps[2 * kMaxContexts];  // normalize_freqs: one per rank of a trial
};

// Buffers of one stream's encode, sized for up to n tokens.
struct TokenEncodeBuffers {
    EncSym* enc;            // kMaxContexts * 256 entries
    std::uint16_t* words;   // n + kWordPadding entries
    StreamWork* work;
};

// A stream's chosen tables (in its StreamWork).
struct StreamTables {
    const FreqTable* tables;  // one per context
    unsigned contexts, prob_bits;
};

// Chooses the stream's contexts and precision from w.hist8 (the token
// histogram by class of the previous token in the lane), normalises the
// chosen contexts' tables and builds their encoder entries in enc; by the
// team, the same choice in every member. The bins, the candidates' tables
// and the encoder entries are split over the ranks.
template <typename Team>
MANS_HD_CALL StreamTables team_choose_stream_tables(const Team& team, StreamWork& w, EncSym* enc) {
    // Contexts: the count whose entropy plus table cost is smallest.
    team_context_sums(team, w.hist8, w.sums);
    unsigned k = 1;
    best_context_cost_fix16(w.sums, &k);
    // The chosen contexts' histograms. An empty context still gets a valid
    // table (token 0 counted once) so that any decoded stream stays
    // memory-safe; it is never used by a valid stream.
    team.for_ranks([&](unsigned r) {
        for (unsigned s = r; s < 256; s += team.size())
            for (unsigned c = 0; c < k; ++c)
                w.merged[c][s] = s == 0 && w.sums.nsym[merged_context(k, c)] == 0 ? 1 : merged_count(w.hist8, k, c, s);
    });

    // Precision: 12 bits, or 10 when the smaller tables pay for it (the
    // first wins a tie). Any context fits either: 2^kMinProbBits >= 256
    // symbols. A trial is one (candidate, context) table.
    static_assert((1u << kMinProbBits) >= 256 && kMinProbBits <= 10, "every table fits 10 bits");
    constexpr unsigned candidates = 2, bits[candidates] = {10, kMaxProbBits};
    team.for_ranks([&](unsigned r) {
        for (unsigned t = r; t < candidates * k; t += team.size()) {
            const unsigned i = t / k, c = t % k;
            FreqTable& table = w.trials[i][c];
            normalize_freqs(w.merged[c], bits[i], &table, w.heaps[r]);
            w.trial_cost[i][c] = coded_cost_fix16(w.merged[c], table, bits[i]) + freq_table_bytes(table) * 8 * kFixOne;
        }
    });
    unsigned best = 0;
    std::uint64_t best_cost = ~0ull;
    for (unsigned i = 0; i < candidates; ++i) {
        std::uint64_t cost = 0;
        for (unsigned c = 0; c < k; ++c) cost += w.trial_cost[i][c];
        if (cost < best_cost) best_cost = cost, best = i;
    }
    team.for_ranks([&](unsigned r) {
        for (unsigned c = r; c < k; c += team.size()) build_enc_table(w.trials[best][c], bits[best], enc + c * 256);
    });
    return {w.trials[best], k, bits[best]};
}

#if !defined(__CUDA_ARCH__) && !defined(__HIP_DEVICE_COMPILE__)
// token_class8 of every token, as a table: the CPU's counting loops.
inline const std::uint8_t* host_token_classes() {
    struct ClassTable {
        std::uint8_t v[256];
        ClassTable() {
            for (unsigned t = 0; t < 256; ++t) v[t] = static_cast<std::uint8_t>(token_class8(t));
        }
    };
    static const ClassTable table;
    return table.v;
}

// encode_token_stream_into's histogram by previous-token class, for one
// thread on the CPU: the same counts, with the class from a table and
// alternate lanes counted in a second histogram (consecutive increments of
// one bin otherwise wait on each other's stores). `hist8` is zeroed.
inline void host_context_histogram(const std::uint8_t* tokens, const LaneLayout& lay, std::uint32_t (*hist8)[256]) {
    const std::uint8_t* const cls = host_token_classes();
    std::uint32_t odd[kMaxContexts][256] = {};
    const unsigned lanes = lay.lanes;
    const std::size_t full = lay.full_steps();
    if (lay.seg > 0)  // step 0: every lane starts in class 0
        for (unsigned j = 0, active = full > 0 ? lanes : lay.active_at(0); j < active; ++j) ++hist8[0][tokens[j]];
    for (std::size_t t = 1; t < lay.seg; ++t) {
        const unsigned active = t < full ? lanes : lay.active_at(t);
        const std::uint8_t* row = tokens + t * lanes;
        const std::uint8_t* prev = row - lanes;
        unsigned j = 0;
        for (; j + 1 < active; j += 2) {
            ++hist8[cls[prev[j]]][row[j]];
            ++odd[cls[prev[j + 1]]][row[j + 1]];
        }
        if (j < active) ++hist8[cls[prev[j]]][row[j]];
    }
    for (unsigned c = 0; c < kMaxContexts; ++c)
        for (unsigned s = 0; s < 256; ++s) hist8[c][s] += odd[c][s];
}
#endif

// Appends the coded stream of `lay.n` interleaved tokens to `out` (an output
// with `std::uint8_t* grow(std::size_t)`, null when it cannot take that
// many more bytes). `lanes_encode(RansEncodeArgs&)` runs the lane loop and
// fills the args' results in every member. Every member of `team`
// (core/team.hpp) calls this alike, each with its own `out` (the same
// cursor); the team splits the histogram, the tables' choice and the
// word copy, its leader writes the header. False when the output cannot
// take the stream or the coder fails (never for valid input); the same
// answer in every member.
template <typename LanesEncode, typename Out, typename Team = SoloTeam>
MANS_HD_CALL bool encode_token_stream_into(const std::uint8_t* tokens, const LaneLayout& lay,
                                           const LanesEncode& lanes_encode, const TokenEncodeBuffers& b, Out& out,
                                           const Team& team = Team{}) {
    // Histogram by class of the previous token in the same lane (computed,
    // as the decoder's context_offset is: a 256-entry table would be a
    // per-thread array in a GPU's local memory); each rank counts a
    // contiguous range of steps.
    StreamWork& w = *b.work;
    std::uint32_t (*hist8)[256] = w.hist8;
    team_zero(team, reinterpret_cast<std::uint8_t*>(hist8), sizeof w.hist8);
#if !defined(__CUDA_ARCH__) && !defined(__HIP_DEVICE_COMPILE__)
    if constexpr (std::is_same_v<Team, SoloTeam>) host_context_histogram(tokens, lay, hist8);
    else
#endif
    team.for_ranks([&](unsigned r) {
        const RankSpan steps = rank_span(r, team.size(), lay.seg);
        for (std::size_t t = steps.begin; t < steps.end; ++t) {
            const unsigned active = lay.active_at(t);
            const std::uint8_t* row = tokens + t * lay.lanes;
            if (t == 0) {
                for (unsigned j = 0; j < active; ++j) team.add(&hist8[0][row[j]], 1);
            } else {
                const std::uint8_t* prev = row - lay.lanes;
                for (unsigned j = 0; j < active; ++j) team.add(&hist8[token_class8(prev[j])][row[j]], 1);
            }
        }
    });
    team.fence_atomics();  // the team reads the histogram next

    const StreamTables chosen = team_choose_stream_tables(team, w, b.enc);
    const unsigned best_k = chosen.contexts, best_bits = chosen.prob_bits;
    const FreqTable* tables = chosen.tables;
    RansEncodeArgs args;
    args.tokens = tokens;
    args.table = b.enc;
    args.contexts = best_k;
    args.layout = lay;
    args.words_end = b.words + lay.n + kWordPadding;
    lanes_encode(args);
    if (!args.ok) return false;
    const std::size_t nwords = static_cast<std::size_t>(args.words_end - args.words_first);

    // Serialise: flags, precision, tables, word count, states, words.
    unsigned lanes_log2 = 0;
    while ((1u << lanes_log2) < lay.lanes) ++lanes_log2;
    unsigned k_log2 = 0;
    while ((1u << k_log2) < best_k) ++k_log2;
    std::size_t head_bytes = 2 + 4 + 4 * lay.lanes;
    for (unsigned c = 0; c < best_k; ++c) head_bytes += freq_table_bytes(tables[c]);
    std::uint8_t* dst = out.grow(head_bytes + 2 * nwords);
    if (!dst) return false;
    const bool head_ok = team_single(team, [&] {
        ByteWriter bw(dst, head_bytes);
        bw.write<std::uint8_t>(static_cast<std::uint8_t>(lanes_log2 | (k_log2 << 3)));
        bw.write<std::uint8_t>(static_cast<std::uint8_t>(best_bits));
        for (unsigned c = 0; c < best_k; ++c) write_freq_table(bw, tables[c]);
        bw.write<std::uint32_t>(static_cast<std::uint32_t>(nwords));
        for (unsigned j = 0; j < lay.lanes; ++j) bw.write<std::uint32_t>(args.states[j]);
        return std::uint64_t{bw.ok() && bw.size() == head_bytes};
    });
    if (!head_ok) return false;
    team_copy(team, dst + head_bytes, reinterpret_cast<const std::uint8_t*>(args.words_first), 2 * nwords);
    return true;
}

}  // namespace mans::detail
