// cost_model.hpp - integer-only bit-cost estimates.
//
// Encoder decisions (block mode, token split, contexts, probability bits)
// change the output bytes, so they must come out the same on every compiler
// and backend: costs are computed in 16.16 fixed point with integer math
// only, in MANS_HD functions that the GPU encoder runs too.
#pragma once

#include <cstdint>

#include "core/hd.hpp"

namespace mans::detail {

// floor(log2(x) * 65536) for x >= 1, by repeated squaring of the mantissa.
MANS_HD std::uint64_t log2_fix16(std::uint64_t x) {
    if (x == 0) return 0;
    unsigned e = 63;
    while (!(x >> e)) --e;
    // Mantissa in Q1.31: [2^31, 2^32).
    std::uint64_t m = e >= 31 ? (x >> (e - 31)) : (x << (31 - e));
    std::uint64_t r = static_cast<std::uint64_t>(e) << 16;
    for (int bit = 15; bit >= 0; --bit) {
        m = (m * m) >> 31;
        if (m >= (1ull << 32)) {
            m >>= 1;
            r |= 1ull << bit;
        }
    }
    return r;
}

// log2_fix16 for x <= 4097 (frequencies, small counts) from a table on the
// CPU; a GPU computes the same values (it has no function-local statics).
MANS_HD std::uint64_t log2_small_fix16(std::uint32_t x) {
#if defined(__CUDA_ARCH__) || defined(__HIP_DEVICE_COMPILE__)
    return log2_fix16(x);
#else
    struct Table {
        std::uint32_t v[4098];
        Table() {
            for (std::uint32_t i = 0; i < 4098; ++i) v[i] = static_cast<std::uint32_t>(log2_fix16(i));
        }
    };
    static const Table table;
    return x < 4098 ? table.v[x] : log2_fix16(x);
#endif
}

// Order-0 cost in 16.16 fixed-point bits of a histogram: sum c*log2(total/c).
MANS_HD std::uint64_t entropy_cost_fix16(const std::uint32_t* hist, unsigned nbins) {
    std::uint64_t total = 0;
    for (unsigned s = 0; s < nbins; ++s) total += hist[s];
    if (total == 0) return 0;
    const std::uint64_t lt = log2_fix16(total);
    std::uint64_t cost = 0;
    for (unsigned s = 0; s < nbins; ++s)
        if (hist[s]) cost += hist[s] * (lt - log2_small_fix16(hist[s]));
    return cost;
}

inline constexpr std::uint64_t kFixOne = 1ull << 16;

}  // namespace mans::detail
