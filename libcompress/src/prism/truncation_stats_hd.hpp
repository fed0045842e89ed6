// truncation_stats_hd.hpp - a bitplane chunk's truncation statistics as
// MANS_HD team code: for every number d of low digits dropped, the largest
// |code error| and the sum of squared code errors (level_codes.cpp turns
// them into the header's tables, FORMAT.md 4.4).
//
// The sums are exact integers (128 bits: 2^17 codes of errors below 2^30),
// so they do not depend on the order in which ranks, warps or threads add
// them; a double accumulated code by code would. The conversion to double
// is one fixed formula, the same on every backend.
#pragma once

#include <cstdint>

#include "core/hd.hpp"
#include "core/team.hpp"
#include "prism/codes.hpp"

namespace mans::detail::prism {

// An exact sum of squares.
struct SquareSum {
    std::uint64_t lo = 0, hi = 0;
    MANS_HD void add(std::uint64_t v) {
        lo += v;
        hi += lo < v;  // carry
    }
    MANS_HD void add(const SquareSum& o) {
        add(o.lo);
        hi += o.hi;
    }
    // hi * 2^64 + lo as a double: hi < 2^53 is exact, so the only rounding
    // is that of lo and of the sum, in this order everywhere.
    MANS_HD double to_double() const {
        return static_cast<double>(hi) * 18446744073709551616.0 + static_cast<double>(lo);
    }
};

// Digits dropped d = 1..planes (entry 0 is all zero: nothing dropped).
struct TruncationPartial {
    std::uint32_t max_err = 0;
    SquareSum sum_sq;
};

// Rank r of the team adds up its codes of [0, n) into
// partials[r * (planes + 1) + d] (team.size() * (planes + 1) entries, any
// contents on entry); then out[d] (planes + 1 entries) receives the chunk's
// statistics, in the leading member (written where team.leads()).
// words are the codes' representation words (encode_code).
template <typename Team>
MANS_HD void truncation_stats(const Team& team, const std::int32_t* codes, const std::uint32_t* words,
                              std::uint64_t n, unsigned planes, Coding c, TruncationPartial* partials,
                              TruncationPartial* out) {
    const unsigned entries = planes + 1;
    team.for_ranks([&](unsigned r) {
        const RankSpan mine = rank_span(r, team.size(), n);
        TruncationPartial* p = partials + static_cast<std::uint64_t>(r) * entries;
        for (unsigned d = 0; d < entries; ++d) {
            TruncationPartial t;
            if (d > 0)
                for (std::uint64_t j = mine.begin; j < mine.end; ++j) {
                    if (codes[j] == 0) continue;
                    const std::int32_t e = truncation_error(words[j], codes[j], planes - d, planes, c);
                    const std::uint32_t a = static_cast<std::uint32_t>(e < 0 ? -static_cast<std::int64_t>(e) : e);
                    t.max_err = a > t.max_err ? a : t.max_err;
                    t.sum_sq.add(static_cast<std::uint64_t>(a) * a);
                }
            p[d] = t;
        }
    });
    if (!team.leads()) return;
    for (unsigned d = 0; d < entries; ++d) {
        TruncationPartial t;
        for (unsigned r = 0; r < team.size(); ++r) {
            const TruncationPartial& p = partials[static_cast<std::uint64_t>(r) * entries + d];
            t.max_err = p.max_err > t.max_err ? p.max_err : t.max_err;
            t.sum_sq.add(p.sum_sq);
        }
        out[d] = t;
    }
}

}  // namespace mans::detail::prism
