// base.hpp - the base segment: everything a retrieval needs besides planes
// (per-block stencil kinds, the mask of exactly kept values and their bits,
// outlier positions and values, the anchor).
#pragma once

#include <cstdint>
#include <limits>
#include <vector>

#include "prism/archive.hpp"
#include "prism/point_math.hpp"

namespace mans::detail::prism {

enum PointFlag : std::uint8_t {
    kRegular = 0,  // predicted and quantized
    kMasked = 1,   // non-finite or fill: output exact, prediction value inside
    kOutlier = 2,  // prediction failed: value stored exactly
    kAnchor = 3,   // the origin: value stored exactly
};

struct BaseData {
    std::vector<std::vector<std::uint8_t>> kind_bits;  // per level: one bit per block (per_block levels)
    std::vector<std::uint8_t> mask_bits;                // count bits when masked_count > 0
    std::vector<std::uint8_t> masked_values;            // element bytes, in point order
    std::vector<std::uint64_t> outlier_index;           // increasing
    std::vector<std::uint8_t> outlier_values;           // element bytes
    std::vector<std::uint8_t> anchor_value;             // element bytes (empty when masked or no data)
};

// Blob sequence of docs/FORMAT.md section 4.7.
std::vector<std::uint8_t> encode_base(const BaseData& b, std::size_t esize);
// Decodes and validates against the header (sizes, counts, positions).
Errc decode_base(const std::uint8_t* p, std::size_t n, const Header& h, BaseData* out);

inline std::uint64_t kind_block_count(const Header& h) { return BlockGrid::make(h.grid).count; }

}  // namespace mans::detail::prism

namespace mans::detail::prism {

// to_element: prism/point_math.hpp.

// Stencil kind of the point at coordinates c in a level.
inline Kind point_kind(KindMode mode, const std::vector<std::uint8_t>& bits, const BlockGrid& blocks,
                       const std::uint64_t* c) {
    if (mode != KindMode::per_block) return mode == KindMode::all_cubic ? Kind::cubic : Kind::linear;
    return block_kind(bits.data(), blocks, c);
}

}  // namespace mans::detail::prism
