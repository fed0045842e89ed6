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

// Folds the 8 class histograms into k contexts: classes >= k-1 share the last.
MANS_HD void merge_contexts(const std::uint32_t (*hist8)[256], unsigned k, std::uint32_t (*merged)[256]) {
    hd_memset(merged, 0, sizeof(std::uint32_t) * kMaxContexts * 256);
    for (unsigned c = 0; c < kMaxContexts; ++c) {
        const unsigned dst = c < k ? c : k - 1;
        for (unsigned s = 0; s < 256; ++s) merged[dst][s] += hist8[c][s];
    }
}

// Estimated coded size in 16.16 fixed-point bits of tokens with histogram
// `hist` (order 0), including an approximate table cost.
MANS_HD_CALL std::uint64_t estimate_order0_fix16(const std::uint32_t* hist) {
    return entropy_cost_fix16(hist, 256) + approx_table_fix16(symbols_in(hist));
}

// Estimated coded size (16.16 bits) of tokens whose histogram by class of the
// previous token is hist8, with the best number of contexts (returned in
// *contexts when non-null). The encoder's own choice uses this.
// `merged` is work space for kMaxContexts histograms.
MANS_HD_CALL std::uint64_t estimate_context_cost_fix16(const std::uint32_t (*hist8)[256], unsigned* contexts,
                                                      std::uint32_t (*merged)[256]) {
    std::uint64_t best_cost = ~0ull;
    for (unsigned k = 1; k <= kMaxContexts; k *= 2) {
        merge_contexts(hist8, k, merged);
        std::uint64_t cost = 0;
        for (unsigned c = 0; c < k; ++c) cost += estimate_order0_fix16(merged[c]);
        if (cost < best_cost) {
            best_cost = cost;
            if (contexts) *contexts = k;
        }
    }
    return best_cost;
}

// Histograms and tables of one stream's encode (about 26 KiB). They live
// in the caller's scratch, not on the stack: a GPU thread's stack is small
// (gfx9: 128 KiB, and hipcc inlines every call, so frames add up).
struct StreamWork {
    std::uint32_t hist8[kMaxContexts][256];   // by class of the previous token
    std::uint32_t merged[kMaxContexts][256];  // folded into the chosen contexts
    FreqTable tables[kMaxContexts];
    FreqTable trial;  // a precision candidate's table
    SymbolHeap heap;  // normalize_freqs
};

// Buffers of one stream's encode, sized for up to n tokens.
struct TokenEncodeBuffers {
    EncSym* enc;            // kMaxContexts * 256 entries
    std::uint16_t* words;   // n + kWordPadding entries
    StreamWork* work;
};

// Chooses the stream's contexts and precision from w.hist8 (the token
// histogram by class of the previous token in the lane), normalises
// w.tables[0..k) and builds their encoder entries in enc; returns k | bits << 8.
MANS_HD_CALL std::uint32_t choose_stream_tables(StreamWork& w, EncSym* enc) {
    // Contexts: the count whose entropy plus table cost is smallest.
    unsigned best_k = 1;
    std::uint64_t best_cost = estimate_context_cost_fix16(w.hist8, &best_k, w.merged);
    std::uint32_t (*merged)[256] = w.merged;
    merge_contexts(w.hist8, best_k, merged);
    // An empty context still gets a valid table so that any decoded stream
    // stays memory-safe; it is never used by a valid stream.
    for (unsigned c = 0; c < best_k; ++c)
        if (symbols_in(merged[c]) == 0) merged[c][0] = 1;

    // Precision: 12 bits, or fewer when the smaller tables pay for it.
    unsigned min_bits = kMinProbBits;
    for (unsigned c = 0; c < best_k; ++c)
        while ((1u << min_bits) < symbols_in(merged[c])) ++min_bits;
    unsigned best_bits = kMaxProbBits;
    best_cost = ~0ull;
    const unsigned candidates[2] = {min_bits > 10u ? min_bits : 10u, kMaxProbBits};
    for (unsigned bits : candidates) {
        std::uint64_t cost = 0;
        for (unsigned c = 0; c < best_k; ++c) {
            normalize_freqs(merged[c], bits, &w.trial, w.heap);
            cost += coded_cost_fix16(merged[c], w.trial, bits) + freq_table_bytes(w.trial) * 8 * kFixOne;
        }
        if (cost < best_cost) best_cost = cost, best_bits = bits;
    }
    for (unsigned c = 0; c < best_k; ++c) {
        normalize_freqs(merged[c], best_bits, &w.tables[c], w.heap);
        build_enc_table(w.tables[c], best_bits, enc + c * 256);
    }
    return best_k | best_bits << 8;
}

// Appends the coded stream of `lay.n` interleaved tokens to `out` (an output
// with `std::uint8_t* grow(std::size_t)`, null when it cannot take that
// many more bytes). `lanes_encode(RansEncodeArgs&)` runs the lane loop and
// fills the args' results in every member. Every member of `team`
// (core/team.hpp) calls this alike, each with its own `out` (the same
// cursor); the team splits the histogram and the word copy, its leader
// chooses the tables and writes the header. False when the coder or the
// output fails (never for valid input and an output of
// block_encode_out_bound capacity); the same answer in every member.
template <typename LanesEncode, typename Out, typename Team = SoloTeam>
MANS_HD_CALL bool encode_token_stream_into(const std::uint8_t* tokens, const LaneLayout& lay,
                                           const LanesEncode& lanes_encode, const TokenEncodeBuffers& b, Out& out,
                                           const Team& team = Team{}) {
    // Histogram by class of the previous token in the same lane (the class
    // from a table: the compare chain of token_class8 costs more here);
    // each rank counts a contiguous range of steps.
    std::uint8_t class8[256];
    for (unsigned s = 0; s < 256; ++s) class8[s] = static_cast<std::uint8_t>(token_class8(s));
    StreamWork& w = *b.work;
    std::uint32_t (*hist8)[256] = w.hist8;
    team_zero(team, reinterpret_cast<std::uint8_t*>(hist8), sizeof w.hist8);
    team.for_ranks([&](unsigned r) {
        const RankSpan steps = rank_span(r, team.size(), lay.seg);
        for (std::size_t t = steps.begin; t < steps.end; ++t) {
            const unsigned active = lay.active_at(t);
            const std::uint8_t* row = tokens + t * lay.lanes;
            if (t == 0) {
                for (unsigned j = 0; j < active; ++j) team.add(&hist8[0][row[j]], 1);
            } else {
                const std::uint8_t* prev = row - lay.lanes;
                for (unsigned j = 0; j < active; ++j) team.add(&hist8[class8[prev[j]]][row[j]], 1);
            }
        }
    });
    team.fence_atomics();  // the leader reads the histogram next

    const std::uint32_t chosen =
        static_cast<std::uint32_t>(team_single(team, [&] { return std::uint64_t{choose_stream_tables(w, b.enc)}; }));
    const unsigned best_k = chosen & 0xffu, best_bits = chosen >> 8;
    const FreqTable* tables = w.tables;
    std::uint8_t ctx_of[256];
    for (unsigned s = 0; s < 256; ++s) ctx_of[s] = static_cast<std::uint8_t>(context_of(s, best_k));

    RansEncodeArgs args;
    args.tokens = tokens;
    args.table = b.enc;
    args.ctx_of = ctx_of;
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
