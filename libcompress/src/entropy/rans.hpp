// rans.hpp - interleaved static rANS over byte tokens with context tables.
//
// A token stream of n tokens is coded by `nl` (1..32) lanes. Lane j owns the
// contiguous token range [j*seg, j*seg + len_j) with seg = ceil(n / nl), so a
// token's context (the class of the previous token of the same lane) is
// available to every lane at once: the layout decodes with one SIMD register
// set on a CPU and with one warp on a GPU. Tokens travel through the coder in
// step-major ("interleaved") order: slot k = t*nl + j holds token t of lane j.
//
// State: 32 bits in [kStateLow, kStateLow << 16); renormalisation moves one
// 16-bit word. Probabilities have P bits (8..12, chosen per stream), so a
// decode-table entry packs symbol, frequency and bias into 32 bits.
// See docs/FORMAT.md, section "Token stream".
#pragma once

#include <cstddef>
#include <cstdint>

#include "core/hd.hpp"

namespace mans::detail {

inline constexpr std::uint32_t kStateLow = 1u << 15;
inline constexpr unsigned kMaxLanes = 32;
inline constexpr unsigned kMinProbBits = 8;
inline constexpr unsigned kMaxProbBits = 12;
inline constexpr unsigned kMaxContexts = 8;

// Encoder entry for one (context, symbol): Ryg-style reciprocal division,
// exact for states below 2^31.
struct EncSym {
    std::uint32_t x_max;   // renormalise while x >= x_max
    std::uint32_t rcp;     // reciprocal of the frequency
    std::uint32_t bias;    // cumulative frequency (+ M-1 when freq == 1)
    std::uint32_t cmpl_shift;  // (M - freq) | (rcp_shift << 16)
};

// Decoder entry: symbol | (freq - 1) << 8 | bias << 20.
MANS_HD std::uint32_t dec_entry(std::uint32_t sym, std::uint32_t freq, std::uint32_t bias) {
    return sym | ((freq - 1) << 8) | (bias << 20);
}

// One encoder lane step, split so that a GPU warp can order the emitted words
// with a ballot: first ask whether a word leaves, then apply the symbol.
MANS_HD bool enc_needs_word(std::uint32_t x, const EncSym& s) { return x >= s.x_max; }
MANS_HD std::uint32_t enc_apply(std::uint32_t x, const EncSym& s) {
    const std::uint32_t q =
        static_cast<std::uint32_t>((static_cast<std::uint64_t>(x) * s.rcp) >> 32) >> (s.cmpl_shift >> 16);
    return x + s.bias + q * (s.cmpl_shift & 0xffffu);
}

// One decoder lane step; the caller pulls a word when dec_needs_word().
MANS_HD std::uint32_t dec_apply(std::uint32_t x, std::uint32_t entry, unsigned prob_bits) {
    const std::uint32_t freq = ((entry >> 8) & 0xfffu) + 1;
    return freq * (x >> prob_bits) + (entry >> 20);
}
MANS_HD bool dec_needs_word(std::uint32_t x) { return x < kStateLow; }

// One whole decoder lane step, as the scalar loop and the GPU warp kernel
// (backends/gpu) run it: look up the token of state x in the context's table
// (ctx_off: its offset in the tables, context_offset() of the previous
// token, 0 at step 0), advance the state and say whether a word must be
// pulled. The caller finds the word:
// the scalar loop at its cursor, a warp at cursor + the number of lower
// lanes that also pull one (ballot), which is the same (step, lane) order.
struct DecLaneStep {
    std::uint32_t token;
    std::uint32_t x;   // state after the symbol, before the refill
    bool needs_word;
};
MANS_HD DecLaneStep dec_lane_step(std::uint32_t x, const std::uint32_t* table, std::uint32_t ctx_off,
                                  unsigned prob_bits) {
    const std::uint32_t e = table[ctx_off + (x & ((1u << prob_bits) - 1))];
    const std::uint32_t xv = dec_apply(x, e, prob_bits);
    return {e & 0xffu, xv, dec_needs_word(xv)};
}
MANS_HD std::uint32_t dec_refill(const DecLaneStep& s, std::uint16_t word) {
    return s.needs_word ? (s.x << 16) | word : s.x;
}

// Context class of a token: its bit length capped at 7 (then at K-1).
MANS_HD unsigned token_class8(unsigned tok) {
    const unsigned len = bit_length64(tok);  // a count-leading-zeros instruction
    return len < 7 ? len : 7u;
}

// Context index of a token in a stream with `contexts` (1, 2, 4, 8) contexts.
MANS_HD unsigned context_of(unsigned tok, unsigned contexts) {
    const unsigned c = token_class8(tok);
    return c < contexts ? c : contexts - 1;
}

// Offset of the decode table that follows token `prev` in a stream of
// `contexts` tables of 2^prob_bits entries. Computed rather than looked up:
// on a GPU a lookup table would be a per-thread array in local memory and
// one more dependent load in every lane step.
MANS_HD std::uint32_t context_offset(unsigned prev, unsigned contexts, unsigned prob_bits) {
    return static_cast<std::uint32_t>(context_of(prev, contexts)) << prob_bits;
}

// Geometry of one token stream.
struct LaneLayout {
    std::size_t n = 0;    // tokens
    unsigned lanes = 1;   // 1, 2, 4, 8, 16 or 32
    std::size_t seg = 0;  // ceil(n / lanes)

    MANS_HD static LaneLayout make(std::size_t n, unsigned lanes) {
        LaneLayout l;
        l.n = n;
        l.lanes = lanes;
        l.seg = (n + lanes - 1) / lanes;
        return l;
    }
    // Tokens owned by lane j. (MANS_HD: GPU kernels walk the same layout.)
    MANS_HD std::size_t lane_len(unsigned j) const {
        const std::size_t start = static_cast<std::size_t>(j) * seg;
        if (start >= n) return 0;
        return n - start < seg ? n - start : seg;
    }
    // Steps at which every lane is active.
    MANS_HD std::size_t full_steps() const { return lane_len(lanes - 1); }
    // Lanes still active at step t (always a prefix 0..count-1).
    MANS_HD unsigned active_at(std::size_t t) const {
        unsigned a = lanes;
        while (a > 0 && lane_len(a - 1) <= t) --a;
        return a;
    }
    MANS_HD std::size_t slots() const { return seg * lanes; }
};

// The encoder's lane count: fewer lanes on short streams, where each lane's
// 4-byte final state would be a visible cost.
MANS_HD unsigned lanes_for(std::size_t n) {
    unsigned lanes = 1;
    while (lanes < kMaxLanes && static_cast<std::size_t>(lanes) * 2 * 256 <= n) lanes *= 2;
    return lanes;
}

// Decoders read a step's words before checking the count, so word buffers
// carry this many readable padding words.
inline constexpr std::size_t kWordPadding = 64;

struct RansEncodeArgs {
    const std::uint8_t* tokens;     // interleaved, layout.slots() entries
    const EncSym* table;            // kMaxContexts x 256 entries; after token t those
                                    // of context_of(t, K)
    unsigned contexts;              // K
    LaneLayout layout;
    std::uint16_t* words_end;       // words are written downwards from here;
                                    // at least layout.n + kWordPadding words below it

    // outputs
    std::uint16_t* words_first = nullptr;  // first written word
    std::uint32_t states[kMaxLanes] = {};
    bool ok = false;
};

struct RansDecodeArgs {
    const std::uint32_t* table;     // K tables of (1 << prob_bits) entries; after token t
                                    // the table at context_offset(t, K, prob_bits)
    unsigned contexts;              // K
    unsigned prob_bits;
    LaneLayout layout;
    std::uint32_t states[kMaxLanes];
    const std::uint16_t* words;     // followed by kWordPadding readable words
    std::size_t nwords;
    std::uint8_t* out;              // interleaved, layout.slots() entries
};

// Scalar reference kernels (always available; SIMD kernels must match them).
void rans_encode_scalar(RansEncodeArgs& a);
bool rans_decode_scalar(const RansDecodeArgs& a);

// Pieces of the reference loops that SIMD kernels reuse for the steps they
// do not vectorise. Encoding runs steps [t_lo, t_hi) downwards, decoding
// upwards; both update the lane states x and the word cursor. MANS_HD: the
// GPU block coders run them too.
//
// The encoder walks steps backwards and lanes from high to low, writing
// words downwards, so that the decoder reads words forwards in (step, lane)
// ascending order. Every SIMD or GPU kernel must emit exactly these bytes.
MANS_HD_CALL void rans_encode_steps_scalar(const RansEncodeArgs& a, std::size_t t_lo, std::size_t t_hi,
                                      std::uint32_t* x, std::uint16_t** wp) {
    const LaneLayout& lay = a.layout;
    std::uint16_t* w = *wp;
    for (std::size_t t = t_hi; t-- > t_lo;) {
        const unsigned active = lay.active_at(t);
        const std::uint8_t* row = a.tokens + t * lay.lanes;
        const std::uint8_t* prev = t ? row - lay.lanes : nullptr;
        for (unsigned j = active; j-- > 0;) {
            const unsigned ctx = prev ? context_of(prev[j], a.contexts) : 0;
            const EncSym& s = a.table[ctx * 256 + row[j]];
            // Branch-free renormalisation: the store is harmless when unused.
            const std::uint32_t xv = x[j];
            const bool out = enc_needs_word(xv, s);
            w[-1] = static_cast<std::uint16_t>(xv);
            w -= out;
            x[j] = enc_apply(out ? xv >> 16 : xv, s);
        }
    }
    *wp = w;
}

// The whole reference encode (rans_encode_scalar is this, out of line).
MANS_HD void rans_encode_reference(RansEncodeArgs& a) {
    std::uint32_t x[kMaxLanes];
    for (unsigned j = 0; j < a.layout.lanes; ++j) x[j] = kStateLow;
    std::uint16_t* w = a.words_end;
    rans_encode_steps_scalar(a, 0, a.layout.seg, x, &w);
    for (unsigned j = 0; j < a.layout.lanes; ++j) a.states[j] = x[j];
    a.words_first = w;
    a.ok = true;
}

MANS_HD_CALL bool rans_decode_steps_scalar(const RansDecodeArgs& a, std::size_t t_lo, std::size_t t_hi,
                                      std::uint32_t* x, std::size_t* rdp) {
    const LaneLayout& lay = a.layout;
    std::size_t rd = *rdp;
    for (std::size_t t = t_lo; t < t_hi; ++t) {
        const unsigned active = lay.active_at(t);
        std::uint8_t* row = a.out + t * lay.lanes;
        const std::uint8_t* prev = t ? row - lay.lanes : nullptr;
        for (unsigned j = 0; j < active; ++j) {
            const std::uint32_t off = prev ? context_offset(prev[j], a.contexts, a.prob_bits) : 0;
            const DecLaneStep s = dec_lane_step(x[j], a.table, off, a.prob_bits);
            row[j] = static_cast<std::uint8_t>(s.token);
            // Branch-free refill; reads stay within the padding and the
            // count is checked once per step.
            x[j] = dec_refill(s, a.words[rd]);
            rd += s.needs_word;
        }
        for (unsigned j = active; j < lay.lanes; ++j) row[j] = 0;
        if (rd > a.nwords) return false;
    }
    *rdp = rd;
    return true;
}

// Final checks of a decode: every word consumed, every lane back at
// kStateLow (its initial state) - a strong check against corrupt payloads.
MANS_HD bool rans_decode_finished(const RansDecodeArgs& a, const std::uint32_t* x, std::size_t rd) {
    if (rd != a.nwords) return false;
    for (unsigned j = 0; j < a.layout.lanes; ++j)
        if (x[j] != kStateLow) return false;
    return true;
}

// The lane loop as one member of a warp runs it: member `lane` runs rANS
// lane `lane` (members past the stream's lanes only vote). Words leave the
// stream in (step, lane) order, so a lane's word is at the cursor plus the
// number of lower lanes that also pull one at this step. ballot(p) returns
// the mask of members whose p is true, and every member calls it at every
// step (a warp ballot on a GPU; the CPU tests build one from a barrier).
// The team has a member for every lane (a warp: 32 or 64 members, streams
// at most kMaxLanes lanes). Returns what the reference decode
// (rans_decode_steps_scalar, then rans_decode_finished) returns, in every
// member.
template <typename Ballot>
MANS_HD bool rans_decode_as_member(const RansDecodeArgs& a, unsigned lane, const Ballot& ballot) {
    const LaneLayout& lay = a.layout;
    const bool lane_exists = lane < lay.lanes;
    std::uint32_t x = lane_exists ? a.states[lane] : kStateLow;
    std::size_t rd = 0;
    const std::uint64_t lower = (std::uint64_t{1} << lane) - 1;
    bool ok = true;
    // The context comes from the lane's own previous token, kept in a
    // register: reading it back from `out` would put a load of memory just
    // written (on a GPU, through L2) into every step's dependency chain.
    std::uint32_t off = 0;  // step 0's table
    for (std::size_t t = 0; t < lay.seg && ok; ++t) {
        const bool active = lane < lay.active_at(t);
        DecLaneStep s{0, x, false};
        if (active) {
            s = dec_lane_step(x, a.table, off, a.prob_bits);
            off = context_offset(s.token, a.contexts, a.prob_bits);
        }
        const std::uint64_t pulls = ballot(active && s.needs_word);
        // rd <= nwords here and at most 31 lower lanes pull: inside the
        // kWordPadding readable words.
        const std::size_t at = rd + popcount64_hd(pulls & lower);
        if (active) x = dec_refill(s, s.needs_word ? a.words[at] : 0);
        if (lane_exists) a.out[t * lay.lanes + lane] = active ? static_cast<std::uint8_t>(s.token) : 0;
        rd += popcount64_hd(pulls);
        ok = rd <= a.nwords;  // the same in every member
    }
    const bool all_done = ballot(lane_exists && x != kStateLow) == 0;
    return ok && rd == a.nwords && all_done;
}

// The encoder's lane loop as one member of a warp runs it: member `lane`
// runs rANS lane `lane` (members past the stream's lanes only vote). The
// reference walks each step's lanes from high to low and writes words
// downwards (rans_encode_steps_scalar), so a lane's word goes just below
// those of the higher lanes that also emit one at this step: at the cursor
// minus one minus their number. ballot(p) is rans_decode_as_member's. Each
// member writes only its own words; it returns its lane's final state (a
// member without a lane: kStateLow) and, in every member, the first word.
struct MemberEncodeResult {
    std::uint32_t state;
    std::uint16_t* words_first;
};
template <typename Ballot>
MANS_HD MemberEncodeResult rans_encode_as_member(const RansEncodeArgs& a, unsigned lane, const Ballot& ballot) {
    const LaneLayout& lay = a.layout;
    std::uint32_t x = kStateLow;
    std::uint16_t* w = a.words_end;
    const std::uint64_t higher = ~((std::uint64_t{2} << lane) - 1);  // lane < 64: 0 for lane 63
    for (std::size_t t = lay.seg; t-- > 0;) {
        const bool active = lane < lay.active_at(t);
        EncSym s{};
        bool out = false;
        if (active) {
            const std::uint8_t* row = a.tokens + t * lay.lanes;
            const unsigned ctx = t ? context_of((row - lay.lanes)[lane], a.contexts) : 0;
            s = a.table[ctx * 256 + row[lane]];
            out = enc_needs_word(x, s);
        }
        const std::uint64_t emits = ballot(out);
        if (out) w[-1 - static_cast<std::ptrdiff_t>(popcount64_hd(emits & higher))] = static_cast<std::uint16_t>(x);
        if (active) x = enc_apply(out ? x >> 16 : x, s);
        w -= popcount64_hd(emits);
    }
    return {x, w};
}

// The whole reference decode (rans_decode_scalar is this, out of line).
MANS_HD bool rans_decode_reference(const RansDecodeArgs& a) {
    std::uint32_t x[kMaxLanes];
    for (unsigned j = 0; j < a.layout.lanes; ++j) x[j] = a.states[j];
    std::size_t rd = 0;
    if (!rans_decode_steps_scalar(a, 0, a.layout.seg, x, &rd)) return false;
    return rans_decode_finished(a, x, rd);
}

}  // namespace mans::detail
