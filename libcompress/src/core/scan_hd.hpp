// scan_hd.hpp - exclusive prefix sums of n values in tiles, as MANS_HD
// steps in which no thread walks all n values (a GPU runs steps 1 and 3
// with a thread per tile and per value, step 2 with one thread doing one
// add per tile; the CPU tests run the same steps in loops):
//   1. scan_tile_sum     for every tile t: the sum of its values;
//   2. scan_tile_bases   once: the sums, in place, become each tile's
//                        exclusive prefix; returns the total;
//   3. scan_item_offset  for every value i: its tile's base plus the
//                        values before it in the tile.
// value(i) -> std::uint64_t gives the values (an array or a computed size).
#pragma once

#include <cstdint>

#include "core/hd.hpp"

namespace mans::detail {

template <typename Value>
MANS_HD std::uint64_t scan_tile_sum(const Value& value, std::uint64_t n, std::uint64_t tile, std::uint64_t t) {
    const std::uint64_t end = (t + 1) * tile < n ? (t + 1) * tile : n;
    std::uint64_t sum = 0;
    for (std::uint64_t i = t * tile; i < end; ++i) sum += value(i);
    return sum;
}

MANS_HD std::uint64_t scan_tile_bases(std::uint64_t* sums, std::uint64_t tiles) {
    std::uint64_t total = 0;
    for (std::uint64_t t = 0; t < tiles; ++t) {
        const std::uint64_t sum = sums[t];
        sums[t] = total;
        total += sum;
    }
    return total;
}

template <typename Value>
MANS_HD std::uint64_t scan_item_offset(const Value& value, std::uint64_t tile, const std::uint64_t* bases,
                                       std::uint64_t i) {
    const std::uint64_t t = i / tile;
    std::uint64_t at = bases[t];
    for (std::uint64_t k = t * tile; k < i; ++k) at += value(k);
    return at;
}

}  // namespace mans::detail
