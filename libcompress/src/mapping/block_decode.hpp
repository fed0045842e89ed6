// block_decode.hpp - validates and decodes one block payload
// (docs/FORMAT.md "Block payload"). Every field is checked against the
// payload, and a payload must be consumed exactly.
//
// Written once for the CPU and the GPU (MANS_HD): the CPU backend runs it
// for every block it decodes (block_decoder.cpp), a GPU thread runs it for
// one block (backends/gpu), so the CPU tests exercise the GPU's decoder.
// Three template parameters adapt it: the rANS lane loop (the CPU's SIMD
// kernels, the reference loop, or a warp's), the scratch provider (growing
// vectors on the CPU, fixed slices of one device allocation on a GPU) and
// the team that decodes the block (core/team.hpp: one thread, or the lanes
// of a warp, each taking whole rANS lanes and a share of the copies).
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <type_traits>

#include "core/bit_io.hpp"
#include "core/byte_io.hpp"
#include "core/hd.hpp"
#include "core/team.hpp"
#include "entropy/token_stream_decode.hpp"
#include "mapping/elements.hpp"
#include "mapping/token_map.hpp"

namespace mans::detail {

enum class BlockMode : std::uint8_t {
    stored = 0,
    constant = 1,
    token = 2,
    adm = 3,
    byte_planes = 4,
    dictionary = 5,
};

// Reference of the hybrid-token mapping (docs/FORMAT.md 2.1). center_repeat
// adds one token meaning "same value as the previous element of the lane",
// which turns runs of outliers (fill values, land masks) into cheap tokens.
enum class Predictor : std::uint8_t { center = 0, lane_previous = 1, center_repeat = 2 };

// Calls fn(std::integral_constant<Predictor, p>{}) so that the element loops
// below are instantiated per predictor; false for an unknown value.
template <typename Fn>
MANS_HD bool with_predictor(Predictor p, Fn&& fn) {
    switch (p) {
        case Predictor::center: return fn(std::integral_constant<Predictor, Predictor::center>{});
        case Predictor::lane_previous: return fn(std::integral_constant<Predictor, Predictor::lane_previous>{});
        case Predictor::center_repeat: return fn(std::integral_constant<Predictor, Predictor::center_repeat>{});
    }
    return false;
}

// A raw-bit section must be consumed exactly: no over-read, no spare byte.
MANS_HD bool bits_exact(const BitReader& br, std::uint32_t len) {
    return !br.overrun() && (br.bits_consumed() + 7) / 8 == len;
}

// Position just after the m-th set bit (m >= 1) of bits[0..len), found
// from the set bits counted per part (ones[q] for part q of `parts`,
// rank_span); false when there are fewer.
MANS_HD bool bit_after_nth_one(const std::uint8_t* bits, std::uint32_t len, const std::uint64_t* ones,
                               unsigned parts, std::uint64_t m, std::uint64_t* pos) {
    for (unsigned q = 0; q < parts; ++q) {
        if (ones[q] < m) {
            m -= ones[q];
            continue;
        }
        const RankSpan part = rank_span(q, parts, len);
        for (std::uint64_t i = part.begin; i < part.end; ++i) {
            const unsigned c = popcount64_hd(bits[i]);
            if (c < m) {
                m -= c;
                continue;
            }
            std::uint32_t b = bits[i];
            for (; m > 1; --m) b &= b - 1;  // drop the lower set bits
            *pos = 8 * i + ctz32(b) + 1;
            return true;
        }
    }
    return false;
}

// A raw-bit section whose lanes are split between a team's members
// (rank_span): each member reads its lanes from the bit where they start,
// which start(j0, &bit) finds (false: there is no such bit, the section is
// corrupt); body(br, lanes) decodes them and says whether they were valid.
// The member with the last lane ends where the section must end. True when
// every member's part was valid, in every member.
template <typename Team, typename Start, typename Body>
MANS_HD bool team_raw_bit_lanes(const Team& team, const LaneLayout& lay, const std::uint8_t* bits, std::uint32_t len,
                                Start&& start, Body&& body) {
    return team_all(team, [&](unsigned r) {
        const RankSpan mine = rank_span(r, team.size(), lay.lanes);
        if (mine.begin == mine.end) return true;
        std::uint64_t first_bit = 0;
        if (!start(mine.begin, &first_bit)) return false;
        BitReader br(bits, len, first_bit);
        return body(br, mine) && (mine.end < lay.lanes || bits_exact(br, len));
    });
}

// What a hybrid token means (hybrid_untoken): the value's bits above its
// raw bits, how many raw bits follow, and whether the token is valid.
struct HybridTokenInfo {
    std::uint64_t base;
    std::uint32_t nraw;
    std::uint32_t ok;
};
inline constexpr unsigned kHybridTokenInfoEntries = 256;

// Token t's entry (hybrid_untoken) in a section coded with `split`; under
// the repeat predictor its repeat token is valid and has no raw bits.
template <typename U, Predictor kPred>
MANS_HD HybridTokenInfo hybrid_token_info(unsigned t, HybridSplit split) {
    HybridTokenInfo ti{0, 0, 1};
    if (kPred == Predictor::center_repeat && t == hybrid_token_count(split, Elem<U>::B)) return ti;
    unsigned nr = 0;
    ti.ok = hybrid_untoken(t, split, Elem<U>::B, &ti.base, &nr);
    ti.nraw = nr;
    return ti;
}

// Inverse of tokenize_hybrid_lane (hybrid_tokens.hpp). A team member decodes
// whole lanes, from the raw bits of the lanes before its first one, which a
// first pass sums from the tokens (a token says how many raw bits follow).
// `info`: kHybridTokenInfoEntries entries of scratch, filled here by the
// team. It is not a per-thread array because on a GPU that would be 4 KiB
// of local memory in every lane of the warp, built 32 times.
template <typename U, Predictor kPred, typename Team>
MANS_HD_CALL bool reconstruct_hybrid(const Team& team, const std::uint8_t* tokens, const LaneLayout& lay,
                                     std::uint64_t flip, std::uint64_t center, HybridSplit split,
                                     const std::uint8_t* bits, std::uint32_t len, std::uint8_t* y,
                                     HybridTokenInfo* info) {
    using E = Elem<U>;
    const unsigned repeat_tok = hybrid_token_count(split, E::B);
    team.for_ranks([&](unsigned r) {
        for (unsigned t = r; t < kHybridTokenInfoEntries; t += team.size())
            info[t] = hybrid_token_info<U, kPred>(t, split);
    });
    std::uint64_t* lane_bits = team_region(team, kTeamLaneValues);  // size() > 1 only
    if (team.size() > 1)
        team.for_ranks([&](unsigned r) {
            const RankSpan mine = rank_span(r, team.size(), lay.lanes);
            for (std::uint64_t j = mine.begin; j < mine.end; ++j) {
                std::uint64_t sum = 0;
                const std::size_t lane_len = lay.lane_len(static_cast<unsigned>(j));
                for (std::size_t t = 0; t < lane_len; ++t) sum += info[tokens[t * lay.lanes + j]].nraw;
                lane_bits[j] = sum;
            }
        });
    const auto start = [&](std::uint64_t j0, std::uint64_t* first_bit) {
        for (std::uint64_t j = 0; j < j0; ++j) *first_bit += lane_bits[j];
        return true;
    };
    return team_raw_bit_lanes(team, lay, bits, len, start, [&](BitReader& br, RankSpan mine) {
        std::uint32_t all_ok = 1;
        for (std::uint64_t j = mine.begin; j < mine.end; ++j) {
            const std::size_t lane_len = lay.lane_len(static_cast<unsigned>(j));
            const std::uint8_t* src = tokens + j;
            std::uint8_t* dst = y + j * lay.seg * sizeof(U);
            std::uint64_t prev = center;  // a lane's first element refers to the center
            for (std::size_t t = 0; t < lane_len; ++t) {
                const unsigned tk = src[t * lay.lanes];
                const HybridTokenInfo ti = info[tk];
                all_ok &= ti.ok;
                const std::uint64_t v = ti.base | (E::B > 32 ? br.get_wide(ti.nraw) : br.get(ti.nraw));
                std::uint64_t u =
                    ((kPred == Predictor::lane_previous ? prev : center) + unzigzag(v, E::B)) & E::mask;
                if (kPred == Predictor::center_repeat) u = tk == repeat_tok ? prev : u;
                prev = u;
                store_elem<U>(dst, t, u ^ flip);
            }
        }
        return all_ok != 0;
    });
}

#if !defined(__CUDA_ARCH__) && !defined(__HIP_DEVICE_COMPILE__)
// reconstruct_hybrid for one thread on the CPU (the CPU's decode_block) and
// elements of up to 32 bits: the same elements and the same verdict. Each
// element's raw bits come from an 8-byte load at its bit position, so the
// only chain between elements is that position (BitReader's refill is a
// branch on the bits left, which mispredicts with variable counts). It
// works on raw values: flip is 0 or 2^(B-1), and adding it mod 2^B is
// XOR with it. test_hd_algo.cpp compares it with reconstruct_hybrid.
template <typename U, Predictor kPred>
bool reconstruct_hybrid_serial(const std::uint8_t* tokens, const LaneLayout& lay, std::uint64_t flip,
                               std::uint64_t center, HybridSplit split, const std::uint8_t* bits, std::uint32_t len,
                               std::uint8_t* y) {
    using E = Elem<U>;
    static_assert(E::B <= 32, "raw-bit counts of up to 31 per element");
    const unsigned repeat_tok = hybrid_token_count(split, E::B);
    std::uint32_t base[256];
    std::uint8_t nraw[256];
    std::uint32_t all_ok = 1, tok_ok[256];
    for (unsigned t = 0; t < 256; ++t) {  // hybrid_token_info in narrower arrays
        const HybridTokenInfo ti = hybrid_token_info<U, kPred>(t, split);
        base[t] = static_cast<std::uint32_t>(ti.base);
        nraw[t] = static_cast<std::uint8_t>(ti.nraw);
        tok_ok[t] = ti.ok;
    }
    const std::uint32_t raw_center = static_cast<std::uint32_t>(center ^ flip);
    const std::uint64_t end_bits = 8 * static_cast<std::uint64_t>(len);
    std::uint64_t pos = 0;  // bits read so far
    for (unsigned j = 0; j < lay.lanes; ++j) {
        const std::size_t lane_len = lay.lane_len(j);
        const std::uint8_t* src = tokens + j;
        std::uint8_t* dst = y + static_cast<std::size_t>(j) * lay.seg * sizeof(U);  // no alignment promised
        std::uint32_t prev = raw_center;  // a lane's first element refers to the center
        for (std::size_t t = 0; t < lane_len; ++t) {
            const unsigned tk = src[t * lay.lanes];
            all_ok &= tok_ok[tk];
            const unsigned nr = nraw[tk];
            const std::uint64_t byte = pos >> 3;
            std::uint64_t word = 0;  // the bits from pos on (zeros past the section's end)
            if (byte + 8 <= len) {
                word = load_le<std::uint64_t>(bits + byte);
            } else {
                for (std::uint64_t k = byte; k < len; ++k) word |= std::uint64_t{bits[k]} << (8 * (k - byte));
            }
            const std::uint32_t v = base[tk] | (static_cast<std::uint32_t>(word >> (pos & 7)) & ((1u << nr) - 1u));
            pos += nr;
            const std::uint32_t diff = (v >> 1) ^ (0u - (v & 1u));  // unzigzag mod 2^B
            std::uint32_t u = (kPred == Predictor::lane_previous ? prev : raw_center) + diff;
            if (kPred == Predictor::center_repeat) u = tk == repeat_tok ? prev : u;
            prev = u;
            store_le<U>(dst + t * sizeof(U), static_cast<U>(u));
        }
    }
    // BitReader's bits_exact: no bit past the end, and no spare byte.
    return all_ok != 0 && pos <= end_bits && (pos + 7) / 8 == len;
}

// reconstruct_hybrid_serial's arguments, for a CPU kernel that gives the
// same elements and verdict (RansKernels::reconstruct_hybrid, backend.hpp;
// null where the CPU has none).
struct HybridReconstructArgs {
    const std::uint8_t* tokens;  // interleaved, lay.slots() entries
    LaneLayout lay;              // lanes a power of two up to kMaxLanes, as every stream's
    std::uint64_t flip, center;
    HybridSplit split;
    unsigned esize;  // 1, 2 or 4
    Predictor pred;
    const std::uint8_t* bits;
    std::uint32_t len;
    std::uint8_t* y;
    std::uint8_t* lane_tokens;  // scratch of lay.slots() bytes
};

// Whether a scratch provider offers such a kernel (hybrid_reconstructor(),
// null when the CPU has none, and lane_tokens(n)); only the CPU's does.
template <typename Scratch, typename = void>
struct HasHybridReconstructor : std::false_type {};
template <typename Scratch>
struct HasHybridReconstructor<Scratch,
                              std::void_t<decltype(std::declval<const Scratch&>().hybrid_reconstructor())>>
    : std::true_type {};
#endif

// Scratch in caller-owned memory (the GPU's per-block slices) for blocks
// of up to `max_n` elements of `esize` bytes, or with esize 1 for blocks of
// any type of up to max_n bytes (the device API, which learns a stream's
// type from its header). Sizes: block_scratch_bytes(max_n, esize).
struct FixedBlockScratch {
    TokenDecodeBuffers buffers;
    std::uint8_t* dict_area;      // dict_bytes: the dictionary, in the block's type
    std::uint32_t* index_values;  // index_entries entries
    HybridTokenInfo* token_info;  // kHybridTokenInfoEntries entries
    std::size_t max_n, dict_bytes, index_entries;

    MANS_HD bool stream(std::size_t n, TokenDecodeBuffers* b) const {
        *b = buffers;
        return n <= max_n;
    }
    template <typename U>
    MANS_HD U* dict(std::size_t count) const {
        return count <= dict_bytes / sizeof(U) ? reinterpret_cast<U*>(dict_area) : nullptr;
    }
    MANS_HD std::uint32_t* index(std::size_t n) const { return n <= index_entries ? index_values : nullptr; }
    MANS_HD HybridTokenInfo* hybrid_token_info() const { return token_info; }
};

// Where a FixedBlockScratch's parts are (byte offsets, each 16-byte aligned)
// and what its dictionary parts hold. Only types of 16 bits or more have a
// dictionary (get_dictionary): at most one entry per element, in the
// block's type, so at most a block's raw bytes, and a u32 index per element
// of such a block. Sizing them as u64 entries for max_n elements took
// 12 max_n bytes; this takes 3 max_n with esize 1 (ABI 10).
struct BlockScratchLayout {
    std::size_t freq, token_info, dict, index, words, tokens, total;  // dec_table at 0
    std::size_t dict_bytes, index_entries;
};
MANS_HD std::size_t align16(std::size_t v) { return (v + 15) & ~std::size_t{15}; }
MANS_HD BlockScratchLayout block_scratch_layout(std::size_t max_n, unsigned esize) {
    BlockScratchLayout l{};
    l.dict_bytes = max_n * esize;
    l.index_entries = esize >= 2 ? max_n : max_n / 2;  // elements of a 16-bit-or-wider block
    std::size_t at = align16((std::size_t{kMaxContexts} << kMaxProbBits) * 4);
    l.freq = at;
    at += align16(sizeof(FreqTable));
    l.token_info = at;
    at += align16(kHybridTokenInfoEntries * sizeof(HybridTokenInfo));
    l.dict = at;
    at += align16(l.dict_bytes);
    l.index = at;
    at += align16(l.index_entries * 4);
    l.words = at;
    at += align16((max_n + kWordPadding) * 2);
    l.tokens = at;
    l.total = at + align16(token_buffer_entries(max_n));
    return l;
}
MANS_HD std::size_t block_scratch_bytes(std::size_t max_n, unsigned esize) {
    return block_scratch_layout(max_n, esize).total;
}
MANS_HD FixedBlockScratch carve_block_scratch(std::uint8_t* base, std::size_t max_n, unsigned esize) {
    const BlockScratchLayout l = block_scratch_layout(max_n, esize);
    FixedBlockScratch s;
    s.buffers.dec_table = reinterpret_cast<std::uint32_t*>(base);
    s.buffers.freq = reinterpret_cast<FreqTable*>(base + l.freq);
    s.token_info = reinterpret_cast<HybridTokenInfo*>(base + l.token_info);
    s.dict_area = base + l.dict;
    s.index_values = reinterpret_cast<std::uint32_t*>(base + l.index);
    s.buffers.words = reinterpret_cast<std::uint16_t*>(base + l.words);
    s.buffers.tokens = base + l.tokens;
    s.max_n = max_n;
    s.dict_bytes = l.dict_bytes;
    s.index_entries = l.index_entries;
    return s;
}

// kNested: the index block inside a dictionary block, which cannot itself be
// a dictionary (a separate instantiation, so no recursion on a GPU).
template <typename U, typename LanesDecode, typename Scratch, typename Team = SoloTeam, bool kNested = false>
class BlockDecoder {
public:
    using E = Elem<U>;
    MANS_HD BlockDecoder(ByteReader r, std::size_t n, std::uint8_t* dst, std::uint64_t flip,
                         const LanesDecode& lanes, const Scratch& sc, const Team& team)
        : r_(r), n_(n), y_(dst), flip_(flip), lanes_(lanes), sc_(sc), team_(team) {}

    MANS_HD Errc run() {
        std::uint8_t mode = 0;
        if (!r_.read(&mode)) return Errc::corrupt_block;
        bool ok = false;
        switch (static_cast<BlockMode>(mode)) {
            case BlockMode::stored: ok = get_stored(); break;
            case BlockMode::constant: ok = get_constant(); break;
            case BlockMode::token: ok = get_token(); break;
            case BlockMode::adm: ok = get_adm(); break;
            case BlockMode::byte_planes: ok = get_byte_planes(); break;
            case BlockMode::dictionary: ok = !kNested && get_dictionary(); break;
            default: return Errc::corrupt_block;
        }
        // A payload must be consumed exactly.
        if (!ok || r_.remaining() != 0) return Errc::corrupt_block;
        return Errc::ok;
    }

private:
    MANS_HD bool get_value(std::uint64_t* v) {
        const std::uint8_t* p = nullptr;
        if (!r_.take(sizeof(U), &p)) return false;
        *v = load_le<U>(p);
        return true;
    }

    MANS_HD bool get_stored() {
        const std::uint8_t* p = nullptr;
        if (!r_.take(n_ * sizeof(U), &p)) return false;
        team_copy(team_, y_, p, n_ * sizeof(U));
        return true;
    }

    MANS_HD bool get_constant() {
        std::uint64_t v = 0;
        if (!get_value(&v)) return false;
        team_.for_ranks([&](unsigned r) {
            for (std::size_t i = r; i < n_; i += team_.size()) store_elem<U>(y_, i, v ^ flip_);
        });
        return true;
    }

    // Decodes a token stream of n_ tokens into tokens_ (interleaved order).
    MANS_HD_CALL bool get_tokens(LaneLayout* lay) {
        TokenDecodeBuffers b;
        if (!sc_.stream(n_, &b)) return false;
        tokens_ = b.tokens;
        return decode_token_stream_into(r_, n_, lanes_, b, lay, team_);
    }

    // A token stream, then its raw-bit section (u32 length, then exactly
    // that many bytes): the twin of the encoder's put_tokens_and_bits.
    MANS_HD bool get_tokens_and_bits(LaneLayout* lay, const std::uint8_t** bits, std::uint32_t* len) {
        return get_tokens(lay) && r_.read(len) && r_.take(*len, bits);
    }

    MANS_HD_CALL bool get_token() {
        std::uint8_t pred = 0, s = 0, m = 0;
        std::uint64_t c = 0;
        if (!r_.read(&pred) || !get_value(&c) || !r_.read(&s) || !r_.read(&m)) return false;
        const HybridSplit split{s, m};
        if (pred > 2 || !hybrid_split_valid(split, E::B, pred == 2)) return false;
        LaneLayout lay;
        const std::uint8_t* bits = nullptr;
        std::uint32_t len = 0;
        if (!get_tokens_and_bits(&lay, &bits, &len)) return false;
        return with_predictor(static_cast<Predictor>(pred), [&](auto p) {
#if !defined(__CUDA_ARCH__) && !defined(__HIP_DEVICE_COMPILE__)
            if constexpr (std::is_same_v<Team, SoloTeam> && E::B <= 32) {  // the CPU's decode_block
                if constexpr (HasHybridReconstructor<Scratch>::value) {
                    if (const auto reconstruct = sc_.hybrid_reconstructor())  // the CPU's SIMD kernel
                        return reconstruct(HybridReconstructArgs{tokens_, lay, flip_, c, split, sizeof(U),
                                                                 decltype(p)::value, bits, len, y_,
                                                                 sc_.lane_tokens(lay.slots())});
                }
                return reconstruct_hybrid_serial<U, decltype(p)::value>(tokens_, lay, flip_, c, split, bits, len, y_);
            }
#endif
            return reconstruct_hybrid<U, decltype(p)::value>(team_, tokens_, lay, flip_, c, split, bits, len, y_,
                                                             sc_.hybrid_token_info());
        });
    }

    MANS_HD_CALL bool get_adm() {
        if (E::B != 16 && E::B != 32) return false;
        std::uint64_t c = 0;
        if (!get_value(&c)) return false;
        LaneLayout lay;
        const std::uint8_t* bits = nullptr;
        std::uint32_t len = 0;
        if (!get_tokens_and_bits(&lay, &bits, &len)) return false;
        // An element's raw bits end with their first set bit, so the lanes
        // before a member's first one end at set bit number "their element
        // count": the member starts there (set bits counted per part first).
        const unsigned S = team_.size();
        std::uint64_t* ones = team_region(team_, kTeamRankValues);  // S > 1 only
        if (S > 1)
            team_.for_ranks([&](unsigned r) {
                const RankSpan part = rank_span(r, S, len);
                std::uint64_t count = 0;
                for (std::uint64_t i = part.begin; i < part.end; ++i) count += popcount64_hd(bits[i]);
                ones[r] = count;
            });
        const std::uint8_t* tok = tokens_;
        const auto start = [&](std::uint64_t j0, std::uint64_t* first_bit) {
            const std::uint64_t before = j0 * lay.seg < n_ ? j0 * lay.seg : n_;  // elements of the lanes before
            return before == 0 || bit_after_nth_one(bits, len, ones, S, before, first_bit);
        };
        return team_raw_bit_lanes(team_, lay, bits, len, start, [&](BitReader& br, RankSpan mine) {
            bool bad = false;
            for_each_element_of_lanes(lay, mine.begin, mine.end, [&](std::size_t slot, std::size_t i) {
                const std::uint32_t w = br.peek32();
                if (w == 0) {  // no terminating one within kAdmMaxK bits
                    bad = true;
                    br.get(32);
                    return;
                }
                const unsigned k = ctz32(w) + 1;
                br.get(k);
                std::uint64_t u = 0;
                bad |= !adm_value(tok[slot], k, c, E::mask, &u);
                store_elem<U>(y_, i, u ^ flip_);
            });
            return !bad;
        });
    }

    MANS_HD_CALL bool get_byte_planes() {
        std::uint64_t base = 0;
        std::uint8_t nplanes = 0;
        if (!get_value(&base) || !r_.read(&nplanes) || nplanes == 0 || nplanes > sizeof(U))
            return false;
        // Accumulate the planes of w = u - base in place, then rebase.
        team_zero(team_, y_, n_ * sizeof(U));
        unsigned lanes = 0;
        for (unsigned b = 0; b < nplanes; ++b) {
            LaneLayout lay;
            if (!get_tokens(&lay)) return false;
            if (b > 0 && lay.lanes != lanes) return false;  // all planes share one layout
            lanes = lay.lanes;
            const std::uint8_t* tok = tokens_;
            team_.for_ranks([&](unsigned r) {
                const RankSpan mine = rank_span(r, team_.size(), lay.lanes);
                for_each_element_of_lanes(lay, mine.begin, mine.end, [&](std::size_t slot, std::size_t i) {
                    store_elem<U>(y_, i,
                                  load_le<U>(y_ + i * sizeof(U)) | (static_cast<std::uint64_t>(tok[slot]) << (8 * b)));
                });
            });
        }
        return team_all(team_, [&](unsigned r) {
            bool bad = false;
            for (std::size_t i = r; i < n_; i += team_.size()) {
                const std::uint64_t w = load_le<U>(y_ + i * sizeof(U));
                bad |= w > E::mask - base;  // the sum would leave the type's range
                store_elem<U>(y_, i, (base + w) ^ flip_);
            }
            return !bad;
        });
    }

    MANS_HD_CALL bool get_dictionary() {
        std::uint64_t count_m1 = 0, value = 0;
        if (E::B < 16 || !r_.read_varint64(&count_m1) || count_m1 >= n_ || !get_value(&value)) return false;
        // Every gap takes at least one byte: bound the allocation by the input.
        if (count_m1 > r_.remaining()) return false;
        const std::size_t dict_size = static_cast<std::size_t>(count_m1) + 1;
        U* dict = sc_.template dict<U>(dict_size);
        if (!dict) return false;
        // Every member reads the gaps (they decide the control flow); one writes.
        const bool writes = team_.leads();
        if (writes) dict[0] = static_cast<U>(value);
        for (std::size_t d = 1; d < dict_size; ++d) {
            std::uint64_t gap_m1 = 0;
            if (!r_.read_varint64(&gap_m1) || gap_m1 >= E::mask - value) return false;  // strictly inside range
            value += gap_m1 + 1;
            if (writes) dict[d] = static_cast<U>(value);
        }
        // The rest of the payload is the nested u32 block of indices.
        std::uint32_t* index = sc_.index(n_);
        if (!index) return false;
        const std::uint8_t* rest = nullptr;
        const std::size_t rest_bytes = r_.remaining();
        r_.take(rest_bytes, &rest);
        BlockDecoder<std::uint32_t, LanesDecode, Scratch, Team, true> nested(
            ByteReader(rest, rest_bytes), n_, reinterpret_cast<std::uint8_t*>(index), 0, lanes_, sc_, team_);
        if (nested.run() != Errc::ok) return false;
        const std::uint64_t size = dict_size;
        return team_all(team_, [&](unsigned r) {
            std::uint32_t bad = 0;
            for (std::size_t i = r; i < n_; i += team_.size()) {
                const std::uint32_t k = index[i];
                bad |= k >= size;
                store_elem<U>(y_, i, std::uint64_t{dict[k < size ? k : 0]} ^ flip_);
            }
            return !bad;
        });
    }

    ByteReader r_;
    std::size_t n_;
    std::uint8_t* y_;
    std::uint64_t flip_;
    const LanesDecode& lanes_;
    const Scratch& sc_;
    const Team& team_;
    const std::uint8_t* tokens_ = nullptr;  // the last token stream's output
};


// Decodes a payload of exactly `size` bytes into n elements of `dtype` at dst,
// with every member of `team` calling it alike.
template <typename LanesDecode, typename Scratch, typename Team = SoloTeam>
MANS_HD Errc decode_block_payload(DType dtype, const std::uint8_t* payload, std::size_t size, std::size_t n,
                                  std::uint8_t* dst, const LanesDecode& lanes, const Scratch& scratch,
                                  const Team& team = Team{}) {
    const ByteReader r(payload, size);
    const std::uint64_t flip = sign_flip(dtype);
    switch (elem_bytes(dtype)) {
        case 1: return BlockDecoder<std::uint8_t, LanesDecode, Scratch, Team>(r, n, dst, flip, lanes, scratch, team).run();
        case 2: return BlockDecoder<std::uint16_t, LanesDecode, Scratch, Team>(r, n, dst, flip, lanes, scratch, team).run();
        case 4: return BlockDecoder<std::uint32_t, LanesDecode, Scratch, Team>(r, n, dst, flip, lanes, scratch, team).run();
        case 8: return BlockDecoder<std::uint64_t, LanesDecode, Scratch, Team>(r, n, dst, flip, lanes, scratch, team).run();
    }
    return Errc::unsupported_dtype;
}

}  // namespace mans::detail
