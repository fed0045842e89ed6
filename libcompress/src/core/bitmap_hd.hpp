// bitmap_hd.hpp - the set bits of a bitmap (bit i % 8 of byte i / 8) listed
// in increasing order, as MANS_HD steps in which no thread walks the whole
// bitmap: count each range of bytes (bitmap_count), an exclusive scan of
// the counts (core/scan_hd.hpp), then each range lists its bits from its
// offset (bitmap_list). The PRISM encoder's base segment lists its
// outliers and masked points this way.
#pragma once

#include <cstdint>

#include "core/hd.hpp"

namespace mans::detail {

MANS_HD std::uint64_t bitmap_count(const std::uint8_t* bits, std::uint64_t first_byte, std::uint64_t last_byte) {
    std::uint64_t n = 0;
    for (std::uint64_t b = first_byte; b < last_byte; ++b) n += popcount64_hd(bits[b]);
    return n;
}

// out[at++] = i for every set bit i of bytes [first_byte, last_byte), in
// order; returns the next free index.
MANS_HD std::uint64_t bitmap_list(const std::uint8_t* bits, std::uint64_t first_byte, std::uint64_t last_byte,
                                  std::uint64_t at, std::uint64_t* out) {
    for (std::uint64_t b = first_byte; b < last_byte; ++b)
        for (unsigned v = bits[b]; v; v &= v - 1) out[at++] = b * 8 + ctz32(v);
    return at;
}

}  // namespace mans::detail
