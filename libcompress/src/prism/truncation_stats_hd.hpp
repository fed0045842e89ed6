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

#if !defined(__CUDA_ARCH__) && !defined(__HIP_DEVICE_COMPILE__)
// truncation_stats of one thread (the CPU encoder's form), into out[0..planes]:
// the same exact results with less work per code: no test for codes of 0
// (their error is 0 and adds nothing), and the squares of four codes summed
// in 64 bits before they go into the 128-bit sum (every |error| is below
// 2^31, so four squares are below 2^64).
inline void truncation_stats_one_thread(const std::int32_t* codes, const std::uint32_t* words, std::uint64_t n,
                                        unsigned planes, Coding c, TruncationPartial* out) {
    out[0] = TruncationPartial{};
    for (unsigned d = 1; d <= planes; ++d) {
        const unsigned kept = planes - d;
        auto error_of = [&](std::uint64_t j) -> std::uint32_t {
            const std::int32_t e = truncation_error(words[j], codes[j], kept, planes, c);
            return static_cast<std::uint32_t>(e < 0 ? -static_cast<std::int64_t>(e) : e);
        };
        std::uint32_t max_err = 0;
        SquareSum sum;
        std::uint64_t j = 0;
        for (; j + 4 <= n; j += 4) {
            std::uint64_t part = 0;
            for (unsigned i = 0; i < 4; ++i) {
                const std::uint32_t a = error_of(j + i);
                max_err = a > max_err ? a : max_err;
                part += static_cast<std::uint64_t>(a) * a;
            }
            sum.add(part);
        }
        for (; j < n; ++j) {
            const std::uint32_t a = error_of(j);
            max_err = a > max_err ? a : max_err;
            sum.add(static_cast<std::uint64_t>(a) * a);
        }
        out[d].max_err = max_err;
        out[d].sum_sq = sum;
    }
}
#endif

}  // namespace mans::detail::prism
