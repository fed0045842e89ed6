// lane_tokens.hpp - writes the tokens and the raw-bit section of a block's
// token mappings (hybrid tokens, ADM), split over a team (core/team.hpp).
//
// A mapping walks its lanes independently (a lane's first element refers to
// the center, not to the previous lane), and the raw bits follow element
// order, lane by lane (docs/FORMAT.md "Block payload"). So the lanes can be
// split between ranks if each rank knows where its bits start: a first
// phase only counts each rank's raw bits, a second writes tokens and bits
// from the rank's offset (the decoder's team_raw_bit_lanes in reverse). The
// words at either end of a rank's bits may hold another rank's bits too, so
// those are ORed into a zeroed section (team.or_word: atomic on a GPU); the
// words in between belong to the rank alone.
//
// lane(j, sink) walks lane j's elements in order and calls, for each,
// sink.put(slot, token, raw_value, raw_bit_count) (raw_bit_count <= 64).
#pragma once

#include <cstddef>
#include <cstdint>

#include "core/bit_io.hpp"
#include "core/hd.hpp"
#include "core/team.hpp"
#include "entropy/rans.hpp"

namespace mans::detail {

// Writes tokens and raw bits in element order (a team of one).
struct SerialTokenSink {
    std::uint8_t* tokens;
    BitWriter bits;
    MANS_HD void put(std::size_t slot, unsigned tok, std::uint64_t v, unsigned nraw) {
        tokens[slot] = static_cast<std::uint8_t>(tok);
        bits.put_wide(v, nraw);
    }
};

// Counts raw bits only (the first phase of a team).
struct CountingTokenSink {
    std::uint64_t bits = 0;
    MANS_HD void put(std::size_t, unsigned, std::uint64_t, unsigned nraw) { bits += nraw; }
};

// Writes tokens and the raw bits [start, start + count) of a zeroed
// section of 32-bit words (bit k of the section is bit k % 32 of word
// k / 32, which is the BitWriter's byte order on a little-endian machine).
template <typename Team>
struct RankTokenSink {
    const Team& team;
    std::uint8_t* tokens;
    std::uint32_t* words;
    std::uint64_t start, count;
    std::uint64_t word;     // the word acc fills
    std::uint64_t acc = 0;  // its pending bits (the bits below `start` are 0)
    unsigned fill;

    MANS_HD RankTokenSink(const Team& t, std::uint8_t* tok, std::uint32_t* w, std::uint64_t first_bit,
                          std::uint64_t bit_count)
        : team(t), tokens(tok), words(w), start(first_bit), count(bit_count), word(first_bit / 32),
          fill(static_cast<unsigned>(first_bit % 32)) {}

    MANS_HD void put(std::size_t slot, unsigned tok, std::uint64_t v, unsigned nraw) {
        tokens[slot] = static_cast<std::uint8_t>(tok);
        if (nraw > 32) {
            put_bits(v & 0xffffffffu, 32);
            put_bits(v >> 32, nraw - 32);
        } else {
            put_bits(v, nraw);
        }
    }
    // The last, partial word (when the rank's bits do not end on a word).
    MANS_HD void finish() {
        if (count > 0 && (start + count) % 32 != 0) emit();
    }

private:
    MANS_HD void put_bits(std::uint64_t v, unsigned n) {  // n <= 32
        acc |= (n == 0 ? 0 : v & (~0ull >> (64 - n))) << fill;
        fill += n;
        if (fill >= 32) {
            emit();
            acc >>= 32;
            fill -= 32;
            ++word;
        }
    }
    MANS_HD void emit() {
        const std::uint32_t w = static_cast<std::uint32_t>(acc);
        const bool shared = word == start / 32 || word == (start + count - 1) / 32;
        if (shared)
            team.or_word(&words[word], w);
        else
            words[word] = w;
    }
};

// Runs lane(j, sink) for every lane of `lay`, split over the team, and
// returns the raw-bit section's size in bytes, in every member. `bits`
// holds bit_writer_bytes(bits) bytes and, in a team of more than one, is
// 4-byte aligned.
template <typename Team, typename LaneFn>
MANS_HD std::size_t tokenize_lanes(const Team& team, const LaneLayout& lay, std::uint8_t* tokens,
                                   std::uint8_t* bits, LaneFn&& lane) {
    if (team.size() == 1) {
        SerialTokenSink sink{tokens, BitWriter(bits)};
        for (unsigned j = 0; j < lay.lanes; ++j) lane(j, sink);
        return sink.bits.flush();
    }
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
    static_assert(sizeof(Team) == 0, "RankTokenSink writes the section as little-endian words");
#endif
    std::uint64_t* counts = team_region(team, kTeamRankValues);
    team.for_ranks([&](unsigned r) {
        const RankSpan mine = rank_span(r, team.size(), lay.lanes);
        CountingTokenSink sink;
        for (std::uint64_t j = mine.begin; j < mine.end; ++j) lane(static_cast<unsigned>(j), sink);
        counts[r] = sink.bits;
    });
    std::uint64_t total = 0;
    for (unsigned r = 0; r < team.size(); ++r) total += counts[r];
    auto* words = reinterpret_cast<std::uint32_t*>(bits);
    team_zero(team, bits, static_cast<std::size_t>((total + 31) / 32 * 4));
    team.for_ranks([&](unsigned r) {
        std::uint64_t first = 0;
        for (unsigned q = 0; q < r; ++q) first += counts[q];
        RankTokenSink<Team> sink(team, tokens, words, first, counts[r]);
        const RankSpan mine = rank_span(r, team.size(), lay.lanes);
        for (std::uint64_t j = mine.begin; j < mine.end; ++j) lane(static_cast<unsigned>(j), sink);
        sink.finish();
    });
    team.fence_atomics();  // the section is copied out next
    return static_cast<std::size_t>((total + 7) / 8);
}

}  // namespace mans::detail
