// plane_split_hd.hpp - the bit work of one bitplane chunk (FORMAT.md 4.5) as
// MANS_HD team code: the CPU's plane_coding.cpp runs it with one thread
// (SoloTeam), the tests with LoopTeams of 1-64 ranks, and a GPU kernel can
// run it with the lanes of a warp (tests/gpu/hd_compile_check.cu builds it).
//
// A chunk of len codes is held as nw = ceil(len / 64) words per plane: bit
// j of word w is code 64w + j. For plane b the reader already knows, per
// code, whether it is significant (a set bit in planes 0..b-1) and whether
// it became so in plane b-1 (fresh); those masks and the neighbours'
// significance put each code into one of five contexts (context_masks),
// and plane b is stored as five bit streams, one per context: a stream
// holds the plane's bits of its codes in code order (bit i at bit i % 8 of
// byte i / 8, unused high bits zero).
//
// The encoder's split needs the team's or_word and fence_atomics (in the
// GPU module's WarpTeam: built with MANS_GPU_ENCODE).
//
// Team split: rank r takes the contiguous words rank_span(r, size, nw). A
// stream's bits of rank r start after the bits of ranks 0..r-1, so each
// phase first counts every rank's bits per context (PlaneSplitScratch),
// then every rank writes (encoder, with the team's or_word where two ranks
// share a 32-bit word) or reads (decoder) its own bits at its offsets.
#pragma once

#include <cstddef>
#include <cstdint>

#include "core/byte_io.hpp"  // load_le
#include "core/hd.hpp"
#include "core/team.hpp"
#include "prism/codes.hpp"
#include "prism/lossless.hpp"  // Method

namespace mans::detail::prism {

inline constexpr unsigned kPlaneStreams = 5;

// 64-code words of a chunk of len codes.
MANS_HD std::uint64_t plane_word_count(std::uint64_t len) { return len / 64 + (len % 64 != 0); }

// 32-bit words of a context stream's buffer: a stream has at most len bits.
MANS_HD std::uint64_t stream_word_count(std::uint64_t len) { return 2 * plane_word_count(len); }

// Each rank's bit count per context in the phase that is running. One
// for the whole team, in memory every member sees (a warp's shared
// memory): a copy per member would give wrong offsets, and a team played
// by one thread could not tell.
struct PlaneSplitScratch {
    std::uint32_t counts[kPlaneStreams][kMaxTeamSize];
};

// Plane (0 = most significant of `planes`) that holds bit s of a
// representation word (codes.hpp, with_plane_bit); `planes` when bit s is
// not one of them.
MANS_HD unsigned plane_of_bit(unsigned s, unsigned planes, Coding c) {
    if (c == Coding::sign_magnitude) {
        if (s == 31) return planes ? 0 : planes;
        return s + 1 < planes ? planes - 1 - s : planes;  // magnitude digits: planes 1 .. planes-1
    }
    return s < planes ? planes - 1 - s : planes;
}

// Context masks of the 64 codes of word w (FORMAT.md 4.5): not yet
// significant: 0, 1, 2 by the number of significant neighbours j-1, j+1;
// significant: 3 when its first set bit was the previous plane (fresh),
// else 4. Codes past the chunk's end are in none; the last code's right
// neighbour is read from the bit after it, which is 0 because sig never
// has bits past len (transpose_planes, merge_plane and significance_words
// set none there).
MANS_HD void context_masks(const std::uint64_t* sig, const std::uint64_t* fresh, std::uint64_t w,
                           std::uint64_t nw, std::uint64_t len, std::uint64_t* m) {
    const std::uint64_t s = sig[w];
    const std::uint64_t prev_top = w ? sig[w - 1] >> 63 : 0;
    const std::uint64_t next_low = w + 1 < nw ? sig[w + 1] & 1 : 0;
    const std::uint64_t left_codes = len - 64 * w;
    const std::uint64_t valid = left_codes >= 64 ? ~std::uint64_t{0} : (std::uint64_t{1} << left_codes) - 1;
    const std::uint64_t left = (s << 1) | prev_top;  // bit j: code j-1 significant
    const std::uint64_t right = (s >> 1) | (next_low << 63);
    const std::uint64_t free = ~s & valid;
    m[0] = free & ~left & ~right;
    m[1] = free & (left ^ right);
    m[2] = free & left & right;
    m[3] = s & fresh[w] & valid;
    m[4] = s & ~fresh[w] & valid;
}

// Portable PEXT / PDEP, one set bit of the mask at a time (cheap for the
// sparse masks of high planes). plane_coding.cpp gives the CPU a table
// form with the same results.
struct LoopBitGather {
    // The bits of v at the positions of mask, packed low.
    MANS_HD std::uint64_t gather(std::uint64_t v, std::uint64_t mask) const {
        if (mask == ~std::uint64_t{0}) return v;
        std::uint64_t out = 0;
        for (std::uint64_t x = v & mask; x; x &= x - 1)  // bit at position p goes to the mask's rank of p
            out |= std::uint64_t{1} << popcount64_hd(mask & ((x & (~x + 1)) - 1));
        return out;
    }
    // The low bits of v placed at the positions of mask.
    MANS_HD std::uint64_t scatter(std::uint64_t v, std::uint64_t mask) const {
        if (mask == ~std::uint64_t{0}) return v;
        std::uint64_t out = 0;
        for (std::uint64_t m = mask; m && v; m &= m - 1, v >>= 1) out |= (v & 1) << ctz64(m);
        return out;
    }
};

// bits[b * nw + w] = plane b of the codes of word w, for b < planes, from
// the representation words words[0..len). Bits of a word outside its
// `planes` planes are ignored (the caller's planes come from their OR).
template <typename Team>
MANS_HD void transpose_planes(const Team& team, const std::uint32_t* words, std::uint64_t len, unsigned planes,
                              Coding c, std::uint64_t* bits) {
    const std::uint64_t nw = plane_word_count(len);
    team.for_ranks([&](unsigned r) {
        for (std::uint64_t w = r; w < nw; w += team.size()) {
            std::uint64_t acc[kMaxPlanes + 1] = {};  // acc[planes]: bits outside the planes
            const std::uint64_t n = len - 64 * w < 64 ? len - 64 * w : 64;
            for (std::uint64_t j = 0; j < n; ++j)
                for (std::uint32_t v = words[64 * w + j]; v; v &= v - 1)
                    acc[plane_of_bit(ctz32(v), planes, c)] |= std::uint64_t{1} << j;
            for (unsigned b = 0; b < planes; ++b) bits[static_cast<std::uint64_t>(b) * nw + w] = acc[b];
        }
    });
}

// transpose_planes by votes, for a team of 32 or 64 ranks (a warp): rank r
// holds code g * size + r of group g, and plane b of the group is the
// ballot of its digits. `ballot(p)` is called by every member at the same
// points and returns the mask of the ranks whose p was true (the warp's
// ballot). Same result as transpose_planes, without a per-code loop over
// set bits or per-plane accumulators. team.size() must be 32 or 64 (it
// must divide 64); other teams use transpose_planes.
template <typename Team, typename Ballot>
MANS_HD void transpose_planes_by_ballot(const Team& team, Ballot&& ballot, const std::uint32_t* words,
                                        std::uint64_t len, unsigned planes, Coding c, std::uint64_t* bits) {
    const unsigned size = team.size();  // 32 or 64: a group is a whole word or half of one
    const std::uint64_t nw = plane_word_count(len);
    team.for_ranks([&](unsigned r) {
        for (std::uint64_t first = 0; first < len; first += size) {
            const std::uint64_t j = first + r;
            const std::uint32_t word = j < len ? words[j] : 0;
            const std::uint64_t w = first / 64;
            const unsigned shift = static_cast<unsigned>(first % 64);
            for (unsigned b = 0; b < planes; ++b) {
                const std::uint64_t votes = ballot((word & with_plane_bit(0, b, planes, c, 1)) != 0);
                if (r != 0) continue;
                std::uint64_t* out = bits + static_cast<std::uint64_t>(b) * nw + w;
                *out = shift ? *out | votes << shift : votes;  // rank 0 writes both halves of a word
            }
        }
    });
}

// sig[w] = the codes of word w with a bit in `higher` (the planes a reader
// already has), for every word of the chunk.
template <typename Team>
MANS_HD void significance_words(const Team& team, const std::uint32_t* words, std::uint64_t len,
                                std::uint32_t higher, std::uint64_t* sig) {
    const std::uint64_t nw = plane_word_count(len);
    team.for_ranks([&](unsigned r) {
        for (std::uint64_t w = r; w < nw; w += team.size()) {
            std::uint64_t s = 0;
            if (higher) {
                const std::uint64_t n = len - 64 * w < 64 ? len - 64 * w : 64;
                for (std::uint64_t j = 0; j < n; ++j) s |= std::uint64_t{(words[64 * w + j] & higher) != 0} << j;
            }
            sig[w] = s;
        }
    });
}

// After plane b: fresh = codes whose first set bit is plane b, sig |= plane.
template <typename Team>
MANS_HD void advance_significance(const Team& team, const std::uint64_t* plane, std::uint64_t* sig,
                                  std::uint64_t* fresh, std::uint64_t nw) {
    team.for_ranks([&](unsigned r) {
        for (std::uint64_t w = r; w < nw; w += team.size()) {
            fresh[w] = plane[w] & ~sig[w];
            sig[w] |= plane[w];
        }
    });
}

// True, in every member, when plane[0..nw) has a set bit.
template <typename Team>
MANS_HD bool plane_has_bits(const Team& team, const std::uint64_t* plane, std::uint64_t nw) {
    return !team_all(team, [&](unsigned r) {
        for (std::uint64_t w = r; w < nw; w += team.size())
            if (plane[w]) return false;
        return true;
    });
}

// Counts every rank's bits per context into scratch and returns, in every
// member, the totals (the streams' lengths in bits) in total[].
template <typename Team>
MANS_HD void count_context_bits(const Team& team, const std::uint64_t* sig, const std::uint64_t* fresh,
                                std::uint64_t len, PlaneSplitScratch* scratch, std::uint64_t* total) {
    const std::uint64_t nw = plane_word_count(len);
    team.for_ranks([&](unsigned r) {
        const RankSpan mine = rank_span(r, team.size(), nw);
        std::uint32_t n[kPlaneStreams] = {};
        for (std::uint64_t w = mine.begin; w < mine.end; ++w) {
            std::uint64_t m[kPlaneStreams];
            context_masks(sig, fresh, w, nw, len, m);
            for (unsigned k = 0; k < kPlaneStreams; ++k) n[k] += popcount64_hd(m[k]);
        }
        for (unsigned k = 0; k < kPlaneStreams; ++k) scratch->counts[k][r] = n[k];
    });
    for (unsigned k = 0; k < kPlaneStreams; ++k) {
        total[k] = 0;
        for (unsigned r = 0; r < team.size(); ++r) total[k] += scratch->counts[k][r];
    }
}

// Where rank r's bits of context k start: after those of ranks 0..r-1.
MANS_HD std::uint64_t rank_stream_start(const PlaneSplitScratch& scratch, unsigned k, unsigned r) {
    std::uint64_t at = 0;
    for (unsigned q = 0; q < r; ++q) at += scratch.counts[k][q];
    return at;
}

// ORs the n <= 64 bits v (v < 2^n) into a stream at bit `at`.
template <typename Team>
MANS_HD void put_stream_bits(const Team& team, std::uint32_t* stream, std::uint64_t at, std::uint64_t v,
                             unsigned n) {
    while (n) {
        const unsigned shift = static_cast<unsigned>(at % 32);
        const unsigned take = 32 - shift < n ? 32 - shift : n;
        const std::uint32_t part = static_cast<std::uint32_t>(v & ((std::uint64_t{1} << take) - 1)) << shift;
        if (part) team.or_word(stream + at / 32, part);
        v >>= take;
        at += take;
        n -= take;
    }
}

// The n <= 64 bits at bit `at` of a stream of nbytes bytes (at + n within
// them): two loads where 9 bytes from at / 8 are there, else a byte at a
// time, so that no byte past the stream is read.
MANS_HD std::uint64_t take_stream_bits(const std::uint8_t* stream, std::uint64_t nbytes, std::uint64_t at,
                                       unsigned n) {
    const std::uint64_t byte = at / 8;
    const unsigned shift = static_cast<unsigned>(at % 8);
    std::uint64_t v = 0;
    if (byte + 9 <= nbytes) {
        v = load_le<std::uint64_t>(stream + byte) >> shift;
        if (shift) v |= static_cast<std::uint64_t>(stream[byte + 8]) << (64 - shift);
        return n == 64 ? v : v & ((std::uint64_t{1} << n) - 1);
    }
    for (unsigned got = 0; got < n;) {  // near the end: only the stream's own bytes
        const std::uint64_t bit = at + got;
        const unsigned in_byte = static_cast<unsigned>(bit % 8);
        const unsigned take = 8 - in_byte < n - got ? 8 - in_byte : n - got;
        v |= static_cast<std::uint64_t>((stream[bit / 8] >> in_byte) & ((1u << take) - 1)) << got;
        got += take;
    }
    return v;
}

// Splits plane[0..nw) into the five context streams: streams holds
// kPlaneStreams buffers of stream_word_count(len) words each (stream k at
// streams + k * stream_word_count(len); contents on entry do not matter),
// and bits[k] receives stream k's length in bits, in every member. A
// stream's bytes are its buffer's first ceil(bits[k] / 8) bytes.
template <typename Team, typename Gather = LoopBitGather>
MANS_HD void split_plane(const Team& team, const std::uint64_t* plane, const std::uint64_t* sig,
                         const std::uint64_t* fresh, std::uint64_t len, PlaneSplitScratch* scratch,
                         std::uint32_t* streams, std::uint64_t* bits, const Gather& gather = Gather{}) {
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
    static_assert(sizeof(Team) == 0, "split_plane writes the streams as little-endian words");
#endif
    const std::uint64_t nw = plane_word_count(len);
    const std::uint64_t stride = stream_word_count(len);
    count_context_bits(team, sig, fresh, len, scratch, bits);
    team.for_ranks([&](unsigned r) {
        for (unsigned k = 0; k < kPlaneStreams; ++k)
            for (std::uint64_t i = r; i < (bits[k] + 31) / 32; i += team.size()) streams[k * stride + i] = 0;
    });
    team.for_ranks([&](unsigned r) {
        const RankSpan mine = rank_span(r, team.size(), nw);
        std::uint64_t at[kPlaneStreams];
        for (unsigned k = 0; k < kPlaneStreams; ++k) at[k] = rank_stream_start(*scratch, k, r);
        for (std::uint64_t w = mine.begin; w < mine.end; ++w) {
            std::uint64_t m[kPlaneStreams];
            context_masks(sig, fresh, w, nw, len, m);
            for (unsigned k = 0; k < kPlaneStreams; ++k) {
                const unsigned n = popcount64_hd(m[k]);
                if (n && (plane[w] & m[k])) put_stream_bits(team, streams + k * stride, at[k], gather.gather(plane[w], m[k]), n);
                at[k] += n;
            }
        }
    });
    team.fence_atomics();
}

#if !defined(__CUDA_ARCH__) && !defined(__HIP_DEVICE_COMPILE__)
// split_plane for one thread on the CPU (plane_coding.hpp's kernel sets):
// one pass that keeps each stream's pending bits in a register and stores
// them a 32-bit word at a time, where split_plane counts the contexts
// first, clears the streams and ORs every piece in (what a team needs to
// find its ranks' offsets). The same streams and lengths; scratch holds
// the counts as count_context_bits leaves them for one thread.
template <typename Gather>
void split_plane_one_pass(const std::uint64_t* plane, const std::uint64_t* sig, const std::uint64_t* fresh,
                          std::uint64_t len, PlaneSplitScratch* scratch, std::uint32_t* streams,
                          std::uint64_t* bits, const Gather& gather) {
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
    static_assert(sizeof(Gather) == 0, "split_plane_one_pass writes the streams as little-endian words");
#endif
    const std::uint64_t nw = plane_word_count(len);
    const std::uint64_t stride = stream_word_count(len);
    std::uint32_t* out[kPlaneStreams];
    std::uint64_t pending[kPlaneStreams] = {};  // bits not yet stored, first bit lowest
    unsigned fill[kPlaneStreams] = {};          // how many: below 32 between appends
    for (unsigned k = 0; k < kPlaneStreams; ++k) out[k] = streams + k * stride, bits[k] = 0;
    // n <= 32 bits v (v < 2^n) after stream k's bits.
    const auto append = [&](unsigned k, std::uint64_t v, unsigned n) {
        pending[k] |= v << fill[k];
        fill[k] += n;
        if (fill[k] >= 32) {
            *out[k]++ = static_cast<std::uint32_t>(pending[k]);
            pending[k] >>= 32;
            fill[k] -= 32;
        }
    };
    for (std::uint64_t w = 0; w < nw; ++w) {
        std::uint64_t m[kPlaneStreams];
        context_masks(sig, fresh, w, nw, len, m);
        for (unsigned k = 0; k < kPlaneStreams; ++k) {
            const unsigned n = popcount64_hd(m[k]);
            if (!n) continue;
            const std::uint64_t v = plane[w] & m[k] ? gather.gather(plane[w], m[k]) : 0;
            if (n > 32) {
                append(k, v & 0xffffffffu, 32);
                append(k, v >> 32, n - 32);
            } else {
                append(k, v, n);
            }
            bits[k] += n;
        }
    }
    for (unsigned k = 0; k < kPlaneStreams; ++k) {
        if (fill[k]) *out[k] = static_cast<std::uint32_t>(pending[k]);
        scratch->counts[k][0] = static_cast<std::uint32_t>(bits[k]);
    }
}
#endif

// The inverse: plane[0..nw) from the five streams' bytes (stream[k] holds
// at least ceil(bits[k] / 8) bytes, bits[] from count_context_bits of the
// same sig / fresh / scratch: call it first).
template <typename Team, typename Gather = LoopBitGather>
MANS_HD void merge_plane(const Team& team, const std::uint8_t* const* stream, const std::uint64_t* sig,
                         const std::uint64_t* fresh, std::uint64_t len, const PlaneSplitScratch& scratch,
                         std::uint64_t* plane, const Gather& gather = Gather{}) {
    const std::uint64_t nw = plane_word_count(len);
    std::uint64_t nbytes[kPlaneStreams];
    for (unsigned k = 0; k < kPlaneStreams; ++k) nbytes[k] = (rank_stream_start(scratch, k, team.size()) + 7) / 8;
    team.for_ranks([&](unsigned r) {
        const RankSpan mine = rank_span(r, team.size(), nw);
        std::uint64_t at[kPlaneStreams];
        for (unsigned k = 0; k < kPlaneStreams; ++k) at[k] = rank_stream_start(scratch, k, r);
        for (std::uint64_t w = mine.begin; w < mine.end; ++w) {
            std::uint64_t m[kPlaneStreams];
            context_masks(sig, fresh, w, nw, len, m);
            std::uint64_t p = 0;
            for (unsigned k = 0; k < kPlaneStreams; ++k) {
                const unsigned n = popcount64_hd(m[k]);
                if (n) p |= gather.scatter(take_stream_bits(stream[k], nbytes[k], at[k], n), m[k]);
                at[k] += n;
            }
            plane[w] = p;
        }
    });
}

// words[j] |= digit for every code j set in plane[0..nw).
template <typename Team>
MANS_HD void deposit_plane(const Team& team, const std::uint64_t* plane, std::uint64_t nw, std::uint32_t digit,
                           std::uint32_t* words) {
    team.for_ranks([&](unsigned r) {
        for (std::uint64_t w = r; w < nw; w += team.size())
            for (std::uint64_t p = plane[w]; p; p &= p - 1) words[64 * w + ctz64(p)] |= digit;
    });
}

// A plane's segment (FORMAT.md 4.5): u16 with 2 bits per context (its
// method), then for each context whose method is not zero: varint stored
// bytes and the payload. Its size first, then the bytes (one thread).
MANS_HD std::size_t plane_segment_bytes(const Method* method, const std::size_t* size) {
    std::size_t n = 2;
    std::uint8_t v[kMaxVarintBytes];
    for (unsigned k = 0; k < kPlaneStreams; ++k)
        if (method[k] != Method::zero) n += encode_varint(size[k], v) + size[k];
    return n;
}
MANS_HD std::size_t write_plane_segment(const Method* method, const std::uint8_t* const* payload,
                                        const std::size_t* size, std::uint8_t* out) {
    unsigned methods = 0;
    for (unsigned k = 0; k < kPlaneStreams; ++k) methods |= static_cast<unsigned>(method[k]) << (2 * k);
    out[0] = static_cast<std::uint8_t>(methods);
    out[1] = static_cast<std::uint8_t>(methods >> 8);
    std::size_t at = 2;
    for (unsigned k = 0; k < kPlaneStreams; ++k) {
        if (method[k] == Method::zero) continue;
        at += encode_varint(size[k], out + at);
        hd_memcpy(out + at, payload[k], size[k]);
        at += size[k];
    }
    return at;
}

}  // namespace mans::detail::prism
