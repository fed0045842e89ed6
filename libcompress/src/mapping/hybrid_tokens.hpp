// hybrid_tokens.hpp - the encoder side of the hybrid-token mapping
// (docs/FORMAT.md 2.1): its cost model and split search, and the element
// loop that turns a block into tokens plus raw bits. The inverse,
// reconstruct_hybrid, is in block_decode.hpp. MANS_HD: the GPU encoder
// runs it too.
#pragma once

#include <cstddef>
#include <cstdint>
#include <type_traits>

#include "core/bit_io.hpp"
#include "core/hd.hpp"
#include "entropy/cost_model.hpp"
#include "entropy/token_stream_encode.hpp"
#include "mapping/block_decode.hpp"
#include "mapping/elements.hpp"
#include "mapping/token_map.hpp"

namespace mans::detail {

// Sample histograms of the hybrid-token source values v.
struct ValueHist {
    std::uint32_t small[256] = {};   // v < 256
    std::uint32_t big[64][16] = {};  // v >= 256: [bit position e][top 4 mantissa bits]
    std::uint64_t vmax = 0;

    MANS_HD void clear() { hd_memset(this, 0, sizeof *this); }
    MANS_HD void add(std::uint64_t v) {
        vmax = v > vmax ? v : vmax;
        ++*bin(v);
    }
    // The bin that counts v (a team adds to it atomically and combines
    // vmax itself).
    MANS_HD std::uint32_t* bin(std::uint64_t v) {
        if (v < 256) return &small[v];
        const unsigned e = bit_length64(v) - 1;
        return &big[e][(v >> (e - 4)) & 15];
    }
};

// Estimated bits (16.16) of coding the sampled values with split p; `tok`
// is work space for a 256-entry token histogram.
MANS_HD_CALL std::uint64_t hybrid_cost_fix16(const ValueHist& h, HybridSplit p, unsigned B, std::uint32_t repeats,
                                             std::uint32_t* tok) {
    hd_memset(tok, 0, 256 * sizeof(std::uint32_t));
    if (repeats) tok[hybrid_token_count(p, B)] = repeats;
    std::uint64_t raw_bits = 0;
    const unsigned small_end = h.vmax < 255 ? static_cast<unsigned>(h.vmax) + 1 : 256;
    for (unsigned v = 0; v < small_end; ++v) {
        if (!h.small[v]) continue;
        unsigned nraw = 0;
        tok[hybrid_token(v, p, &nraw)] += h.small[v];
        raw_bits += static_cast<std::uint64_t>(h.small[v]) * nraw;
    }
    const unsigned e_end = bit_length64(h.vmax) < B ? bit_length64(h.vmax) : B;
    for (unsigned e = 8; e < e_end; ++e) {
        for (unsigned top = 0; top < 16; ++top) {
            const std::uint32_t c = h.big[e][top];
            if (!c) continue;
            const unsigned t = (1u << p.s) + ((e - p.s) << p.m) + (top >> (4 - p.m));
            tok[t] += c;
            raw_bits += static_cast<std::uint64_t>(c) * (e - p.m);
        }
    }
    return estimate_order0_fix16(tok) + raw_bits * kFixOne;
}

struct HybridChoice {
    HybridSplit split{0, 0};
    std::uint64_t cost = ~0ull;
};

// The splits best_split tries, in its order, as fn(k, split) for k = 0,
// 1, ...: every valid split (repeats: one that leaves room for the repeat
// token) up to the first valid one at which every value is a direct token
// (from there on, m and larger s change nothing, so the first such split
// is the one a full search keeps). At most kMaxSplitCandidates.
inline constexpr unsigned kMaxSplitCandidates = 35;  // s 0..8, m 0..min(s, 4)
template <typename F>
MANS_HD void for_split_candidates(const ValueHist& h, unsigned B, bool repeats, F&& fn) {
    unsigned k = 0;
    for (unsigned s = 0; s <= 8; ++s) {
        const bool all_direct = h.vmax < (1ull << s);
        for (unsigned m = 0; m <= 4 && m <= s; ++m) {
            const HybridSplit p{s, m};
            if (!hybrid_split_valid(p, B, repeats)) continue;
            fn(k++, p);
            if (all_direct) return;
        }
    }
}

// `repeats` > 0 asks for a split that leaves room for the repeat token.
// `tok`: work space of 256 entries (hybrid_cost_fix16). The cheapest
// candidate, the first of equal ones. This is the definition; the host's
// best_split computes the same costs from group sums (below).
MANS_HD_CALL HybridChoice best_split_by_cost(const ValueHist& h, unsigned B, std::uint32_t repeats, std::uint32_t* tok) {
    HybridChoice best;
    for_split_candidates(h, B, repeats != 0, [&](unsigned, HybridSplit p) {
        const std::uint64_t c = hybrid_cost_fix16(h, p, B, repeats, tok);
        if (c < best.cost) best = {p, c};
    });
    return best;
}

#if !defined(__CUDA_ARCH__) && !defined(__HIP_DEVICE_COMPILE__)
// best_split_by_cost's choice and costs, bit for bit, without building a
// token histogram per candidate. A split's token counts are sums over
// groups of values: the direct tokens are h.small[v] for v < 2^s; the token
// of leading bit e and top mantissa g counts the values of a run of 2^(e-m)
// consecutive small values, or of 2^(4-m) consecutive big[e] bins. With
// prefix sums every count is one subtraction, and since the total T is the
// same for every candidate, order0_from_sums (T*log2 T - sum c*log2 c, the
// same integer as entropy_cost_fix16) gives hybrid_cost_fix16's value.
// The split search was 5-14 % of MANS and PRISM compression on the CPU
// (perf; docs/PERFORMANCE.md has the end-to-end gain); a GPU lane would
// need the prefix sums' 5.8 KiB of stack, so the kernels keep
// best_split_by_cost.
inline HybridChoice best_split_by_groups(const ValueHist& h, unsigned B, std::uint32_t repeats) {
    // The value ranges hybrid_cost_fix16 reads (the others are empty).
    const unsigned small_end = h.vmax < 255 ? static_cast<unsigned>(h.vmax) + 1 : 256;
    const unsigned e_end = bit_length64(h.vmax) < B ? bit_length64(h.vmax) : B;
    std::uint32_t below[257];  // below[v]: small values < v (uint32 sums, as the token bins)
    below[0] = 0;
    for (unsigned v = 0; v < 256; ++v) below[v + 1] = below[v] + (v < small_end ? h.small[v] : 0u);
    std::uint32_t tops[64][17];  // tops[e][t]: big[e][0..t)
    std::uint64_t lead[64] = {};  // values with leading bit e
    for (unsigned e = 0; e < 8; ++e) lead[e] = below[2u << e > 256 ? 256 : 2u << e] - below[1u << e];
    for (unsigned e = 8; e < e_end; ++e) {
        tops[e][0] = 0;
        for (unsigned t = 0; t < 16; ++t) tops[e][t + 1] = tops[e][t] + h.big[e][t];
        lead[e] = tops[e][16];
    }
    std::uint64_t total = below[256] + std::uint64_t{repeats};
    for (unsigned e = 8; e < e_end; ++e) total += lead[e];
    auto add_bin = [](std::uint32_t c, std::uint64_t* log_sum, unsigned* nsym) {
        if (!c) return;
        *log_sum += c * log2_small_fix16(c);
        ++*nsym;
    };
    // The direct tokens' sums for s = 0..8 (values below 2^s).
    std::uint64_t direct_log[9];
    unsigned direct_sym[9];
    {
        std::uint64_t log_sum = 0;
        unsigned nsym = 0;
        for (unsigned s = 0, v = 0; s <= 8; ++s) {
            for (; v < (1u << s) && v < 256; ++v) add_bin(below[v + 1] - below[v], &log_sum, &nsym);
            direct_log[s] = log_sum, direct_sym[s] = nsym;
        }
    }
    HybridChoice best;
    for_split_candidates(h, B, repeats != 0, [&](unsigned, HybridSplit p) {
        std::uint64_t log_sum = direct_log[p.s], raw_bits = 0;
        unsigned nsym = direct_sym[p.s];
        add_bin(repeats, &log_sum, &nsym);
        const unsigned groups = 1u << p.m;
        for (unsigned e = p.s; e < 8; ++e) {
            if (!lead[e]) continue;
            raw_bits += lead[e] * (e - p.m);
            const unsigned width = 1u << (e - p.m);
            for (unsigned g = 0, lo = 1u << e; g < groups; ++g, lo += width)
                add_bin(below[lo + width] - below[lo], &log_sum, &nsym);
        }
        for (unsigned e = 8; e < e_end; ++e) {
            if (!lead[e]) continue;
            raw_bits += lead[e] * (e - p.m);
            const unsigned width = 16u >> p.m;
            for (unsigned g = 0, t = 0; g < groups; ++g, t += width) add_bin(tops[e][t + width] - tops[e][t], &log_sum, &nsym);
        }
        const std::uint64_t c = order0_from_sums(total, log_sum, nsym) + raw_bits * kFixOne;
        if (c < best.cost) best = {p, c};
    });
    return best;
}
#endif

// best_split_by_cost's result: the kernels run it, the host computes it
// from group sums (best_split_by_groups); `tok` is the kernels' work space.
MANS_HD_CALL HybridChoice best_split(const ValueHist& h, unsigned B, std::uint32_t repeats, std::uint32_t* tok) {
#if defined(__CUDA_ARCH__) || defined(__HIP_DEVICE_COMPILE__)
    return best_split_by_cost(h, B, repeats, tok);
#else
    (void)tok;
    return best_split_by_groups(h, B, repeats);
#endif
}

// best_split of count histograms (h[q] with repeats[q]) by a team: the
// candidates of all of them are shared out (candidate k of histogram q,
// item q * kMaxSplitCandidates + k, is costed by rank item % size, with
// that rank's token histogram tok[r]; costs[item] holds the result), then
// every member picks each histogram's first cheapest candidate from the
// costs, as best_split does. out[q] in every member.
template <typename Team>
MANS_HD_CALL void team_best_splits(const Team& team, const ValueHist* const* h, const std::uint32_t* repeats,
                                   unsigned count, unsigned B, std::uint32_t (*tok)[256], std::uint64_t* costs,
                                   HybridChoice* out) {
    team.for_ranks([&](unsigned r) {
        for (unsigned q = 0; q < count; ++q)
            for_split_candidates(*h[q], B, repeats[q] != 0, [&](unsigned k, HybridSplit p) {
                const unsigned item = q * kMaxSplitCandidates + k;
                if (item % team.size() == r) costs[item] = hybrid_cost_fix16(*h[q], p, B, repeats[q], tok[r]);
            });
    });
    for (unsigned q = 0; q < count; ++q) {
        HybridChoice best;
        for_split_candidates(*h[q], B, repeats[q] != 0, [&](unsigned k, HybridSplit p) {
            const std::uint64_t c = costs[q * kMaxSplitCandidates + k];
            if (c < best.cost) best = {p, c};
        });
        out[q] = best;
    }
}

// Hot loop of the hybrid-token mapping, kept free of member accesses so that
// the byte stores cannot force reloads (char stores alias everything): lane
// j's elements in order, each as sink.put(slot, token, value, raw bits)
// (mapping/lane_tokens.hpp runs it for every lane, split over a team).
template <typename U, Predictor kPred, typename Sink>
MANS_HD void tokenize_hybrid_lane(const std::uint8_t* x, const LaneLayout& lay, std::uint64_t flip,
                                  std::uint64_t center, HybridSplit split, unsigned j, Sink& sink) {
    using E = Elem<U>;
    const unsigned repeat_tok = hybrid_token_count(split, E::B);
    const std::size_t len = lay.lane_len(j);
    const std::uint8_t* src = x + j * lay.seg * sizeof(U);
    std::uint64_t prev = center;  // a lane's first element refers to the center
    for (std::size_t t = 0; t < len; ++t) {
        const std::uint64_t u = load_biased<U>(src, t, flip);
        const std::uint64_t v = zigzag((u - (kPred == Predictor::lane_previous ? prev : center)) & E::mask, E::B);
        unsigned nraw = 0;
        unsigned tok = hybrid_token(v, split, &nraw);
        if (kPred == Predictor::center_repeat && u == prev && nraw) tok = repeat_tok, nraw = 0;
        prev = u;
        sink.put(t * lay.lanes + j, tok, v, nraw);
    }
}

#if !defined(__CUDA_ARCH__) && !defined(__HIP_DEVICE_COMPILE__)
// The CPU's hybrid tokens, for elements of up to 32 bits: hybrid_token's
// token and raw-bit count, without its select between the direct and the
// big case, which GCC compiles to a branch that mispredicts on real data.
// For a big value the token is its top m + 1 bits plus a constant per
// leading bit: (v >> (e - m)) = 2^m + mantissa, so
//   (1 << s) + ((e - s) << m) + mantissa = (v >> (e - m)) + (e << m) + k_off
// with k_off = 2^s - (s << m) - 2^m (mod 2^32). A direct value is v >> 0.
// test_hd_algo.cpp checks it against hybrid_token for every split.
struct HybridTokens32 {
    unsigned m;
    std::uint32_t direct_end;  // 2^s (OR-ed in, it also keeps clz from seeing 0)
    std::uint32_t k_off;

    explicit HybridTokens32(HybridSplit p)
        : m(p.m), direct_end(1u << p.s), k_off((1u << p.s) - (p.s << p.m) - (1u << p.m)) {}

    // v < 2^32; *nraw <= 31.
    unsigned token(std::uint32_t v, unsigned* nraw) const {
        const unsigned e = 31u - static_cast<unsigned>(__builtin_clz(v | direct_end));
        const std::uint32_t big = 0u - static_cast<std::uint32_t>(v >= direct_end);  // all ones or zero
        const unsigned shift = (e - m) & big;
        *nraw = shift;
        return (v >> shift) + (((e << m) + k_off) & big);
    }
};

// One element of the CPU's hybrid tokenizers (tokenize_hybrid_serial, and
// the chunk tails of backends/cpu/tokenize_avx2.cpp), on raw values: flip
// is 0 or 2^(B-1), and XOR with 2^(B-1) is addition mod 2^B, so the biased
// difference u - ref equals the raw one, raw - (ref - flip); the center is
// moved by -flip.
template <typename U, Predictor kPred>
struct HybridStep32 {
    using E = Elem<U>;
    static_assert(E::B <= 32, "raw-bit counts of up to 31 per element");
    HybridTokens32 hyb;
    std::uint32_t repeat_tok;
    std::uint32_t raw_center;

    HybridStep32(HybridSplit split, std::uint64_t center, std::uint64_t flip)
        : hyb(split), repeat_tok(hybrid_token_count(split, E::B)),
          raw_center(static_cast<std::uint32_t>(center - flip)) {}

    // u's token, with *nraw raw bits in *raw; prev is the lane's previous
    // raw element (raw_center before its first).
    std::uint32_t operator()(std::uint32_t u, std::uint32_t prev, std::uint32_t* raw, unsigned* nraw) const {
        const std::uint32_t d = u - (kPred == Predictor::lane_previous ? prev : raw_center);
        std::uint32_t v = (d << 1) ^ (0u - ((d >> (E::B - 1)) & 1u));  // zigzag mod 2^B
        if constexpr (E::B < 32) v &= static_cast<std::uint32_t>(E::mask);
        unsigned nr = 0;
        std::uint32_t tok = hyb.token(v, &nr);
        if (kPred == Predictor::center_repeat) {
            const std::uint32_t rep = 0u - static_cast<std::uint32_t>(u == prev && nr != 0);
            tok = (tok & ~rep) | (repeat_tok & rep);
            nr &= ~rep;
        }
        *nraw = nr;
        *raw = v & ((1u << nr) - 1u);
        return tok;
    }
};

// BitWriter::put with the pending bits in registers (fewer than 8 between
// puts): each put stores 8 bytes at the cursor and keeps the unfinished
// byte, so the output needs BitWriter's 8 bytes of slack.
struct HostBitPacker {
    std::uint8_t* out;
    std::uint64_t acc = 0;
    unsigned fill = 0;
    explicit HostBitPacker(std::uint8_t* o) : out(o) {}
    // bits < 2^n, n <= 32
    void put(std::uint32_t bits, unsigned n) {
        acc |= static_cast<std::uint64_t>(bits) << fill;
        fill += n;
        store_le<std::uint64_t>(out, acc);
        out += fill >> 3;
        acc >>= fill & 56u;
        fill &= 7u;
    }
    // bits < 2^n, n <= 64: put's steps, and the bits shifted out of the
    // 64-bit accumulator (when fill + n > 64) become the next one.
    void put_wide(std::uint64_t bits, unsigned n) {
        const std::uint64_t spill = (bits >> 1) >> (63 - fill);  // bits >> (64 - fill), 0 when fill is 0
        acc |= bits << fill;
        store_le<std::uint64_t>(out, acc);
        const unsigned total = fill + n;
        out += total >> 3;
        acc = total >= 64 ? spill : acc >> (total & 56u);
        fill = total & 7u;
    }
    // The end of the written bytes, the last partial byte included.
    std::uint8_t* finish() {
        if (fill) *out++ = static_cast<std::uint8_t>(acc);
        fill = 0;
        return out;
    }
};

// tokenize_lanes with tokenize_hybrid_lane for a team of one (the CPU's
// encode_block), for elements of up to 32 bits: the same tokens and raw
// bits (test_hd_algo.cpp compares them for every predictor, split and
// dtype; the team tests compare whole blocks with the GPU's path). One
// loop with every value in a register: tokenize_lanes' sink kept its bit
// writer in memory and hybrid_token branched, about 17 cycles an element
// against 7 here (u16, exafel).
template <typename U, Predictor kPred>
std::size_t tokenize_hybrid_serial(const std::uint8_t* x, const LaneLayout& lay, std::uint64_t flip,
                                   std::uint64_t center, HybridSplit split, std::uint8_t* tokens, std::uint8_t* bits) {
    const HybridStep32<U, kPred> step(split, center, flip);
    const unsigned lanes = lay.lanes;
    HostBitPacker packer(bits);
    for (unsigned j = 0; j < lanes; ++j) {
        const std::size_t len = lay.lane_len(j);
        const std::uint8_t* src = x + static_cast<std::size_t>(j) * lay.seg * sizeof(U);
        std::uint8_t* tok_out = tokens + j;
        std::uint32_t prev = step.raw_center;  // a lane's first element refers to the center
        for (std::size_t t = 0; t < len; ++t) {
            const std::uint32_t u = static_cast<std::uint32_t>(load_le<U>(src + t * sizeof(U)));
            std::uint32_t raw = 0;
            unsigned nraw = 0;
            tok_out[t * lanes] = static_cast<std::uint8_t>(step(u, prev, &raw, &nraw));
            prev = u;
            packer.put(raw, nraw);
        }
    }
    return static_cast<std::size_t>(packer.finish() - bits);
}

// tokenize_hybrid_serial's arguments, for a CPU kernel that computes the
// same tokens and raw bits (RansKernels::tokenize_hybrid, backend.hpp;
// null where the CPU has none, and then tokenize_hybrid_serial runs).
struct HybridTokenizeArgs {
    const std::uint8_t* x;
    LaneLayout lay;
    std::uint64_t flip, center;
    HybridSplit split;
    unsigned esize;  // 1, 2 or 4
    Predictor pred;
    std::uint8_t* tokens;
    std::uint8_t* bits;  // bit_writer_bytes(n * 8 * esize)
};
#endif

}  // namespace mans::detail
