// hd_algo.hpp - the few standard algorithms the shared (MANS_HD) encoder
// needs, for the CPU and the GPU.
//
// The CPU uses <algorithm>; a GPU thread cannot, and sorts with a heap sort
// instead. Sorting integers gives one result whatever the algorithm, so the
// bytes do not depend on which one ran; heap_sort_u64 is exercised on the
// CPU by the tests all the same.
#pragma once

#include <cstddef>
#include <cstdint>

#include "core/hd.hpp"

#if !defined(__CUDA_ARCH__) && !defined(__HIP_DEVICE_COMPILE__)
#include <algorithm>
#endif

namespace mans::detail {

// In-place ascending heap sort (O(n log n), no extra memory).
MANS_HD void heap_sort_u64(std::uint64_t* a, std::size_t n) {
    if (n < 2) return;
    const auto sift = [a](std::size_t i, std::size_t end) {
        const std::uint64_t v = a[i];
        while (true) {
            std::size_t c = 2 * i + 1;
            if (c >= end) break;
            if (c + 1 < end && a[c] < a[c + 1]) ++c;
            if (!(v < a[c])) break;
            a[i] = a[c];
            i = c;
        }
        a[i] = v;
    };
    for (std::size_t i = n / 2; i-- > 0;) sift(i, n);
    for (std::size_t end = n; end-- > 1;) {
        const std::uint64_t top = a[0];
        a[0] = a[end];
        a[end] = top;
        sift(0, end);
    }
}

MANS_HD void sort_u64(std::uint64_t* a, std::size_t n) {
#if defined(__CUDA_ARCH__) || defined(__HIP_DEVICE_COMPILE__)
    heap_sort_u64(a, n);
#else
    std::sort(a, a + n);
#endif
}

#if !defined(__CUDA_ARCH__) && !defined(__HIP_DEVICE_COMPILE__)
// sort_u64 of keys below 2^key_bits (key_bits <= 64), for the CPU: a
// least-significant-digit radix sort, a byte per pass, with tmp holding n
// entries. Passes whose byte is the same in every key are skipped. The
// encoder's median sample (2,048 keys a block) took std::sort about 7 % of
// MANS compression on u16 data; this is several times faster there.
// With first_bit > 0 only bits [first_bit, key_bits) are the key, and
// entries with equal keys keep their order (the sort is stable).
inline void radix_sort_u64(std::uint64_t* a, std::size_t n, std::uint64_t* tmp, unsigned key_bits,
                           unsigned first_bit = 0) {
    std::uint64_t* from = a;
    std::uint64_t* to = tmp;
    for (unsigned shift = first_bit; shift < key_bits; shift += 8) {
        std::size_t count[256] = {};
        for (std::size_t i = 0; i < n; ++i) ++count[(from[i] >> shift) & 0xff];
        if (n == 0 || count[(from[0] >> shift) & 0xff] == n) continue;  // one byte value: the order stays
        std::size_t at = 0;
        for (std::size_t& c : count) {
            const std::size_t k = c;
            c = at;
            at += k;
        }
        for (std::size_t i = 0; i < n; ++i) to[count[(from[i] >> shift) & 0xff]++] = from[i];
        std::uint64_t* const t = from;
        from = to;
        to = t;
    }
    if (from != a) std::copy(from, from + n, a);
}

// A dictionary from n (value << 32 | element) pairs sorted by value (B <=
// 32): the distinct values go to pairs[0, size) in order, and index[e] gets
// the position of element e's value. Returns size.
inline std::size_t dictionary_from_sorted_pairs(std::uint64_t* pairs, std::size_t n, std::uint32_t* index) {
    std::size_t size = 0;
    std::uint64_t last = 0;
    for (std::size_t k = 0; k < n; ++k) {
        const std::uint64_t pair = pairs[k];  // read before pairs[size - 1] (size - 1 <= k) is written
        const std::uint64_t value = pair >> 32;
        if (k == 0 || value != last) pairs[size++] = value;
        last = value;
        index[static_cast<std::uint32_t>(pair)] = static_cast<std::uint32_t>(size - 1);
    }
    return size;
}
#endif

// Removes adjacent duplicates of a sorted range; returns the new length.
MANS_HD std::size_t unique_u64(std::uint64_t* a, std::size_t n) {
    if (n == 0) return 0;
    std::size_t w = 1;
    for (std::size_t i = 1; i < n; ++i)
        if (a[i] != a[w - 1]) a[w++] = a[i];
    return w;
}

// First index i in the sorted a[0, n) with a[i] >= v (std::lower_bound).
MANS_HD std::size_t lower_bound_u64(const std::uint64_t* a, std::size_t n, std::uint64_t v) {
    std::size_t lo = 0, len = n;
    while (len > 0) {
        const std::size_t half = len / 2;
        if (a[lo + half] < v) {
            lo += half + 1;
            len -= half + 1;
        } else {
            len = half;
        }
    }
    return lo;
}

}  // namespace mans::detail
