// mask_hd.hpp - the encoder's mask of values it keeps exactly (non-finite
// and fill values) and the detection of a fill value, as MANS_HD code over
// ranges of points, so that a GPU reduces tiles in any order and gets the
// CPU's result (encoder.cpp runs the same functions over the whole field):
//
//   1. finite_range      per range: the smallest and largest finite value;
//      merged (min / max: any order);
//   2. fill_evidence     per range and candidate (the smallest and the
//      largest finite value, when fill_candidate): how often it occurs and
//      the largest |v| of the other finite values; merged (sum / max);
//      accept_fill decides;
//   3. mask_range        per range of whole mask bytes: the mask bits of
//      its points (non-finite, or bit-equal to a fill value), how many,
//      and the range of the values left; merged as in step 1 plus a sum.
//
// Every merge is exact (minima, maxima and integer counts), so the ranges
// do not change a bit; only ValueRange's ties need the point order.
#pragma once

#include <cmath>
#include <cstdint>
#include <type_traits>

#include "core/hd.hpp"

namespace mans::detail::prism {

// Finite: neither NaN nor an infinity (v - v is NaN for both), written so
// that it needs no math library in device code.
MANS_HD bool is_finite_value(double v) { return v - v == 0.0; }

// Smallest and largest finite value of a range; lo > hi when it has none.
// merge(o) takes o as the later range: on a tie (-0 and +0) the earlier
// value stays, as in one loop over the points, so partial ranges must be
// merged in point order (a GPU's tree reduction with the lower indices on
// the left does; atomics would not).
struct ValueRange {
    double lo = HUGE_VAL, hi = -HUGE_VAL;
    MANS_HD void add(double v) {
        lo = v < lo ? v : lo;
        hi = v > hi ? v : hi;
    }
    MANS_HD void merge(const ValueRange& o) {
        lo = o.lo < lo ? o.lo : lo;
        hi = o.hi > hi ? o.hi : hi;
    }
};

// x: the values, x[i] of point i (a pointer on a GPU, UnalignedValues on
// the CPU).
template <typename V>
MANS_HD ValueRange finite_range(V x, std::uint64_t first, std::uint64_t last) {
    ValueRange r;
    for (std::uint64_t i = first; i < last; ++i) {
        const double v = static_cast<double>(x[i]);
        if (is_finite_value(v)) r.add(v);
    }
    return r;
}

// Whether an extreme finite value may be a fill value: finite and at
// least 1e3 in magnitude.
MANS_HD bool fill_candidate(double cand) { return is_finite_value(cand) && ::fabs(cand) >= 1e3; }

// How often a candidate occurs, and the largest magnitude of the other
// finite values.
struct FillEvidence {
    std::uint64_t hits = 0;
    double other = 0;
    MANS_HD void merge(const FillEvidence& o) {
        hits += o.hits;
        other = o.other > other ? o.other : other;
    }
};

template <typename V>
MANS_HD FillEvidence fill_evidence(V x, std::uint64_t first, std::uint64_t last, double cand) {
    FillEvidence e;
    for (std::uint64_t i = first; i < last; ++i) {
        const double v = static_cast<double>(x[i]);
        if (v == cand) ++e.hits;
        else if (is_finite_value(v)) e.other = ::fabs(v) > e.other ? ::fabs(v) : e.other;
    }
    return e;
}

// A candidate is a fill value when it occurs at least twice and stands at
// least 1e6 times above every other value.
MANS_HD bool accept_fill(double cand, const FillEvidence& e) { return e.hits >= 2 && ::fabs(cand) >= 1e6 * e.other; }

// Bitwise equality (a NaN fill matches that NaN; -0 is not +0).
template <typename T>
MANS_HD bool same_value_bits(T a, T b) {
    static_assert(sizeof(T) == 4 || sizeof(T) == 8, "float or double");
    using Bits = std::conditional_t<sizeof(T) == 8, std::uint64_t, std::uint32_t>;
    Bits ua, ub;  // copied, as memcmp is no device function
    hd_memcpy(&ua, &a, sizeof a);
    hd_memcpy(&ub, &b, sizeof b);
    return ua == ub;
}

// Masked points of a range, and the range of the values left.
struct MaskPartial {
    std::uint64_t masked = 0;
    ValueRange kept;
    MANS_HD void merge(const MaskPartial& o) {
        masked += o.masked;
        kept.merge(o.kept);
    }
};

// Mask bytes [byte_first, byte_last) for the n points of x: bit i % 8 of
// byte i / 8 set when point i is not finite or equals one of the nfill
// fill values bit for bit; bits past n are zero. Every byte of the range
// is written.
template <typename T, typename V>
MANS_HD MaskPartial mask_range(V x, std::uint64_t n, const T* fills, unsigned nfill, std::uint64_t byte_first,
                               std::uint64_t byte_last, std::uint8_t* mask) {
    MaskPartial p;
    for (std::uint64_t byte = byte_first; byte < byte_last; ++byte) {
        unsigned bits = 0;
        for (unsigned j = 0; j < 8; ++j) {
            const std::uint64_t i = byte * 8 + j;
            if (i >= n) break;
            const T v = static_cast<T>(x[i]);
            bool drop = !is_finite_value(static_cast<double>(v));
            for (unsigned f = 0; f < nfill && !drop; ++f) drop = same_value_bits(v, fills[f]);
            if (drop) {
                bits |= 1u << j;
                ++p.masked;
            } else {
                p.kept.add(static_cast<double>(v));
            }
        }
        mask[byte] = static_cast<std::uint8_t>(bits);
    }
    return p;
}

}  // namespace mans::detail::prism
