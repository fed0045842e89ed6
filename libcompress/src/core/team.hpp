// team.hpp - the threads that code one block together.
//
// The block decoder (mapping/block_decode.hpp) and the block encoder
// (mapping/block_encode.hpp, with its token streams) run as a team: on a GPU the
// lanes of one warp (WarpTeam, backends/gpu), on a CPU one thread
// (SoloTeam), and in the tests a loop over ranks that plays a warp phase by
// phase (LoopTeam). Every member runs the same code on the same bytes, so
// its control flow is the same; the work is split only inside
// for_ranks(fn), where rank r < size() runs fn(r), with a barrier before
// and after. What one rank computes for others goes through shared() and is
// read after the barrier; other writes happen only where leads().
//
// A Team provides:
//   unsigned size() const                 ranks (1 .. kMaxTeamSize)
//   void for_ranks(fn) const              fn(r) for every rank, between barriers
//   bool leads() const                    true in the one member that does
//                                         the team's single writes
//   std::uint64_t* shared() const         kTeamSharedWords words (unused
//                                         when size() == 1: may be null)
//   void add(std::uint32_t* p, std::uint32_t v) const
//                                         *p += v, also when other ranks of
//                                         the phase add to *p (atomic on a
//                                         GPU): histograms
//   void add64(std::uint64_t* p, std::uint64_t v) const
//                                         the same for 64-bit sums
//   void or_word(std::uint32_t* p, std::uint32_t v) const
//                                         *p |= v, likewise: raw-bit words
//                                         that two ranks share
//   void fence_atomics() const            called by every member after a
//                                         phase with add/or_word, before
//                                         plain loads of what they wrote
//                                         (a GPU's atomics bypass the L1
//                                         cache that those loads may hit)
#pragma once

#include <cstddef>
#include <cstdint>

#include "core/hd.hpp"

namespace mans::detail {

inline constexpr unsigned kMaxTeamSize = 64;  // a gfx9 wavefront

// Regions of shared(): a value per rank for team_all / team sums, a second
// value per rank, a value per rANS lane (at most 32), and a third value per
// rank (the block statistics' sums).
inline constexpr unsigned kTeamRankFlags = 0;
inline constexpr unsigned kTeamRankValues = kMaxTeamSize;
inline constexpr unsigned kTeamLaneValues = 2 * kMaxTeamSize;
inline constexpr unsigned kTeamRankSums = 2 * kMaxTeamSize + 32;
inline constexpr unsigned kTeamSharedWords = 3 * kMaxTeamSize + 32;

// Region `at` of a team's shared words; null in a team of one, which has
// none (and never reads them).
template <typename Team>
MANS_HD std::uint64_t* team_region(const Team& team, unsigned at) {
    return team.size() > 1 ? team.shared() + at : nullptr;
}

// One thread is the whole team (the CPU backend).
struct SoloTeam {
    MANS_HD unsigned size() const { return 1; }
    template <typename F>
    MANS_HD void for_ranks(F&& fn) const {
        fn(0u);
    }
    MANS_HD bool leads() const { return true; }
    MANS_HD std::uint64_t* shared() const { return nullptr; }
    MANS_HD void add(std::uint32_t* p, std::uint32_t v) const { *p += v; }
    MANS_HD void add64(std::uint64_t* p, std::uint64_t v) const { *p += v; }
    MANS_HD void or_word(std::uint32_t* p, std::uint32_t v) const { *p |= v; }
    MANS_HD void fence_atomics() const {}
};

// The items [begin, end) of n that rank r of `size` takes when a range is
// split into contiguous parts (rANS lanes, byte ranges).
struct RankSpan {
    std::uint64_t begin, end;
};
MANS_HD RankSpan rank_span(unsigned r, unsigned size, std::uint64_t n) {
    return {n * r / size, n * (r + 1) / size};
}

// fn(r) -> bool for every rank; true when every rank returned true. The
// same answer in every member.
template <typename Team, typename F>
MANS_HD bool team_all(const Team& team, F&& fn) {
    if (team.size() == 1) {
        bool ok = false;
        team.for_ranks([&](unsigned r) { ok = fn(r); });
        return ok;
    }
    std::uint64_t* flag = team_region(team, kTeamRankFlags);
    team.for_ranks([&](unsigned r) { flag[r] = fn(r) ? 1 : 0; });
    bool ok = true;
    for (unsigned r = 0; r < team.size(); ++r) ok &= flag[r] != 0;
    return ok;
}

// fn(r) -> std::uint32_t for every rank; the OR of the results, the same
// in every member.
template <typename Team, typename F>
MANS_HD std::uint32_t team_or(const Team& team, F&& fn) {
    if (team.size() == 1) {
        std::uint32_t v = 0;
        team.for_ranks([&](unsigned r) { v = fn(r); });
        return v;
    }
    std::uint64_t* slot = team_region(team, kTeamRankFlags);
    team.for_ranks([&](unsigned r) { slot[r] = fn(r); });
    std::uint32_t v = 0;
    for (unsigned r = 0; r < team.size(); ++r) v |= static_cast<std::uint32_t>(slot[r]);
    return v;
}

// fn() -> std::uint64_t in rank 0 alone, in a phase of its own (the team's
// serial work: it may write anything); its result in every member.
template <typename Team, typename F>
MANS_HD std::uint64_t team_single(const Team& team, F&& fn) {
    if (team.size() == 1) return fn();
    std::uint64_t* slot = team_region(team, kTeamRankValues);
    team.for_ranks([&](unsigned r) {
        if (r == 0) slot[0] = fn();
    });
    return slot[0];
}

// How many j < m have keep(j), counted by the team (each rank its
// rank_span); the same count in every member. Uses the shared region
// kTeamRankValues, where rank r's count stays (team_enumerate numbers
// from them).
template <typename Team, typename Keep>
MANS_HD std::uint64_t team_count(const Team& team, std::uint64_t m, const Keep& keep) {
    std::uint64_t* count = team_region(team, kTeamRankValues);
    std::uint64_t total = 0;
    team.for_ranks([&](unsigned r) {
        const RankSpan s = rank_span(r, team.size(), m);
        std::uint64_t c = 0;
        for (std::uint64_t j = s.begin; j < s.end; ++j) c += keep(j) ? 1 : 0;
        if (team.size() == 1)
            total = c;
        else
            count[r] = c;
    });
    if (team.size() > 1)
        for (unsigned r = 0; r < team.size(); ++r) total += count[r];
    return total;
}

// dst[0..n) = src[0..n), split over the team (byte i by rank i % size, so
// that a warp's accesses are contiguous).
template <typename Team>
MANS_HD void team_copy(const Team& team, std::uint8_t* dst, const std::uint8_t* src, std::size_t n) {
    if (team.size() == 1) {
        hd_memcpy(dst, src, n);
        return;
    }
    team.for_ranks([&](unsigned r) {
        for (std::size_t i = r; i < n; i += team.size()) dst[i] = src[i];
    });
}

template <typename Team>
MANS_HD void team_zero(const Team& team, std::uint8_t* dst, std::size_t n) {
    if (team.size() == 1) {
        hd_memset(dst, 0, n);
        return;
    }
    team.for_ranks([&](unsigned r) {
        for (std::size_t i = r; i < n; i += team.size()) dst[i] = 0;
    });
}

// Sorts a[0..n) ascending, split over the team: a bitonic network in which
// every comparator puts the smaller value at the lower index (the first
// step of each merge compares mirror images), so that the network for the
// next power of two works on any n by skipping comparators whose upper
// index is past n (those would compare with +infinity and leave both
// alone). The pairs of a step are disjoint: ranks take every size()-th
// lower index. Same result as any sort (the keys are plain integers).
template <typename Team>
MANS_HD void team_sort_u64(const Team& team, std::uint64_t* a, std::size_t n) {
    std::size_t span = 1;
    while (span < n) span <<= 1;
    for (std::size_t k = 2; k <= span; k <<= 1)
        for (std::size_t j = k / 2; j > 0; j /= 2)
            team.for_ranks([&](unsigned r) {
                for (std::size_t i = r; i < span; i += team.size()) {
                    if (i & j) continue;  // the upper index of a pair
                    const std::size_t p = j == k / 2 ? i ^ (k - 1) : i | j;
                    if (p >= n || a[p] >= a[i]) continue;
                    const std::uint64_t t = a[i];
                    a[i] = a[p];
                    a[p] = t;
                }
            });
}

// Numbers the indices j < m for which keep(j) holds, in increasing order:
// put(j, number) for each; returns how many, in every member. Split over
// the team in two phases: each rank counts its range (rank_span), then
// numbers it from the counts of the ranks before it. keep(j) must give the
// same answer in both phases: put(j, .) runs after keep(j) and may change
// only what keep(j) itself reads (no other index's). Uses the shared
// region kTeamRankValues.
template <typename Team, typename Keep, typename Put>
MANS_HD std::uint64_t team_enumerate(const Team& team, std::uint64_t m, const Keep& keep, const Put& put) {
    if (team.size() == 1) {
        std::uint64_t at = 0;
        for (std::uint64_t j = 0; j < m; ++j)
            if (keep(j)) put(j, at++);
        return at;
    }
    const std::uint64_t total = team_count(team, m, keep);
    const std::uint64_t* count = team_region(team, kTeamRankValues);
    team.for_ranks([&](unsigned r) {
        std::uint64_t at = 0;
        for (unsigned q = 0; q < r; ++q) at += count[q];
        const RankSpan s = rank_span(r, team.size(), m);
        for (std::uint64_t j = s.begin; j < s.end; ++j)
            if (keep(j)) put(j, at++);
    });
    return total;
}

// Plays a team of n ranks on one CPU thread: the code between phases runs
// once (it is the same in every member), and a phase runs its ranks one
// after another, in reverse when asked, so that a rank that read what
// another writes in the same phase (a race on a GPU) changes the result.
// The tests and the host stand-in module run the GPU's split this way.
struct LoopTeam {
    unsigned n;
    std::uint64_t* area;  // kTeamSharedWords words
    bool reverse = false;
    unsigned size() const { return n; }
    template <typename F>
    void for_ranks(F&& fn) const {
        for (unsigned k = 0; k < n; ++k) fn(reverse ? n - 1 - k : k);
    }
    bool leads() const { return true; }
    std::uint64_t* shared() const { return area; }
    void add(std::uint32_t* p, std::uint32_t v) const { *p += v; }
    void add64(std::uint64_t* p, std::uint64_t v) const { *p += v; }
    void or_word(std::uint32_t* p, std::uint32_t v) const { *p |= v; }
    void fence_atomics() const {}
};

}  // namespace mans::detail
