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
MANS_HD constexpr std::uint64_t log2_fix16(std::uint64_t x) {
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

// log2_fix16 of 0 .. kLog2SmallEntries - 1 (frequencies, small counts),
// computed by the compiler, so host and device read the same table.
inline constexpr std::uint32_t kLog2SmallEntries = 4098;
struct Log2SmallTable {
    std::uint32_t v[kLog2SmallEntries];
};
MANS_HD constexpr Log2SmallTable make_log2_small_table() {
    Log2SmallTable t{};
    for (std::uint32_t i = 0; i < kLog2SmallEntries; ++i) t.v[i] = static_cast<std::uint32_t>(log2_fix16(i));
    return t;
}
inline constexpr Log2SmallTable kLog2SmallHost = make_log2_small_table();
#if defined(__CUDACC__) || defined(__HIPCC__)
// The kernels' copy (16 KiB, L1-cached). Computing log2_fix16 instead is
// 16 dependent 64-bit squarings, which the mode choice's cost estimates
// run hundreds of thousands of times per block, mostly in one lane while
// the others wait: a CPU model of the warp encoder put that at about 45%
// of a u16 block's critical path.
static __device__ const Log2SmallTable kLog2SmallDevice = make_log2_small_table();
#endif

// log2_fix16 for x <= 4097 from the table.
MANS_HD std::uint64_t log2_small_fix16(std::uint32_t x) {
#if defined(__CUDA_ARCH__) || defined(__HIP_DEVICE_COMPILE__)
    return x < kLog2SmallEntries ? kLog2SmallDevice.v[x] : log2_fix16(x);
#else
    return x < kLog2SmallEntries ? kLog2SmallHost.v[x] : log2_fix16(x);
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
