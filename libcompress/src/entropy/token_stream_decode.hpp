// token_stream_decode.hpp - parses and decodes one token stream
// (docs/FORMAT.md "Token stream") into caller-provided buffers.
//
// Shared by the CPU and the GPU block decoders (MANS_HD): the lane loop is
// a template parameter, so the CPU passes its SIMD kernels and a GPU thread
// the reference loop, and everything around it (flags, tables, states, word
// count) is checked by this one function.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>

#include "core/byte_io.hpp"
#include "core/team.hpp"
#include "entropy/rans.hpp"
#include "entropy/rans_table.hpp"

namespace mans::detail {

inline constexpr unsigned kStreamFlagReservedMask = 0xe0;

// Token output: the interleaved slots (at most n + kMaxLanes - 1) plus the
// slack that decoders may store into.
MANS_HD std::size_t token_buffer_entries(std::size_t n) { return n + kMaxLanes + 64; }

// Views the decode writes to, sized for streams of up to n tokens.
struct TokenDecodeBuffers {
    std::uint32_t* dec_table;  // kMaxContexts << kMaxProbBits entries
    std::uint16_t* words;      // n + kWordPadding entries (aligned copy of the words)
    std::uint8_t* tokens;      // token_buffer_entries(n) entries
    FreqTable* freq;           // one: the context table being read
};

// Reads a stream of n tokens from r, leaving the tokens in interleaved order
// in b.tokens and the layout in *layout. `lanes_decode(const RansDecodeArgs&)`
// runs the lane loop (as a whole team: a warp's lanes run one rANS lane
// each). The team (core/team.hpp) splits the tables and the word copy.
// False on any inconsistency.
template <typename LanesDecode, typename Team = SoloTeam>
MANS_HD_CALL bool decode_token_stream_into(ByteReader& r, std::size_t n, const LanesDecode& lanes_decode,
                                      const TokenDecodeBuffers& b, LaneLayout* layout, const Team& team = Team{}) {
    std::uint8_t flags = 0, bits = 0;
    if (!r.read(&flags) || !r.read(&bits)) return false;
    if (flags & kStreamFlagReservedMask) return false;
    const unsigned lanes_log2 = flags & 7, k_log2 = (flags >> 3) & 3;
    if (lanes_log2 > 5) return false;
    if (bits < kMinProbBits || bits > kMaxProbBits) return false;
    const unsigned lanes = 1u << lanes_log2, contexts = 1u << k_log2;
    const LaneLayout lay = LaneLayout::make(n, lanes);

    for (unsigned c = 0; c < contexts; ++c) {
        // One member reads the frequencies into the team's b.freq; the
        // others skip the bytes it read. Then each builds its share of the
        // context's decode table.
        constexpr std::uint64_t kBadTable = ~std::uint64_t{0};
        const std::uint64_t table_bytes = team_single(team, [&]() -> std::uint64_t {
            ByteReader tr = r;
            if (!read_freq_table(tr, bits, b.freq)) return kBadTable;
            return r.remaining() - tr.remaining();
        });
        const std::uint8_t* skipped = nullptr;
        if (table_bytes == kBadTable || !r.take(static_cast<std::size_t>(table_bytes), &skipped)) return false;
        std::uint32_t* table = b.dec_table + (static_cast<std::size_t>(c) << bits);
        team.for_ranks([&](unsigned k) {
            const RankSpan part = rank_span(k, team.size(), std::uint64_t{1} << bits);
            build_dec_table(*b.freq, table, static_cast<std::uint32_t>(part.begin),
                            static_cast<std::uint32_t>(part.end));
        });
    }
    RansDecodeArgs args;
    args.table = b.dec_table;
    args.contexts = contexts;
    args.prob_bits = bits;
    args.layout = lay;
    std::uint32_t nwords = 0;
    if (!r.read(&nwords)) return false;
    for (unsigned j = 0; j < lanes; ++j) {
        if (!r.read(&args.states[j])) return false;
        // A state outside the coder's range can only come from corruption.
        if (args.states[j] < kStateLow || args.states[j] >= (kStateLow << 16)) return false;
    }
    const std::uint8_t* words = nullptr;
    if (nwords > n || !r.take(2ull * nwords, &words)) return false;
    // Words are little-endian u16; copied to aligned storage for the kernels,
    // with zeroed padding so that the lookahead reads defined values.
    team_copy(team, reinterpret_cast<std::uint8_t*>(b.words), words, 2ull * nwords);
    team_zero(team, reinterpret_cast<std::uint8_t*>(b.words + nwords), 2 * kWordPadding);
    args.words = b.words;
    args.nwords = nwords;
    args.out = b.tokens;
    if (!lanes_decode(args)) return false;
    *layout = lay;
    return true;
}

}  // namespace mans::detail
