// elements.hpp - element access shared by the block encoder and decoder.
#pragma once

#include <cstddef>
#include <cstdint>

#include "core/byte_io.hpp"
#include "core/hd.hpp"
#include "entropy/rans.hpp"
#include "mans/mans.hpp"

namespace mans::detail {

template <typename U>
struct Elem {
    static constexpr unsigned B = 8 * sizeof(U);
    static constexpr std::uint64_t mask = B == 64 ? ~0ull : ((1ull << B) - 1);
};


// Element buffers come from the caller as void* with no alignment promise,
// so elements are read and written through memcpy (a plain move on x86).
// Biased (order-preserving unsigned) value of element i:
template <typename U>
MANS_HD std::uint64_t load_biased(const std::uint8_t* p, std::size_t i, std::uint64_t flip) {
    return static_cast<std::uint64_t>(load_le<U>(p + i * sizeof(U))) ^ flip;
}
template <typename U>
MANS_HD void store_elem(std::uint8_t* p, std::size_t i, std::uint64_t v) {
    store_le<U>(p + i * sizeof(U), static_cast<U>(v));
}


// Walks the elements of lanes [j0, j1) in element order, lane by lane:
// fn(slot, element index), where slot is the element's position in the
// coder's interleaved order.
template <typename Fn>
MANS_HD void for_each_element_of_lanes(const LaneLayout& lay, std::uint64_t j0, std::uint64_t j1, Fn&& fn) {
    for (std::uint64_t j = j0; j < j1; ++j) {
        const std::size_t len = lay.lane_len(static_cast<unsigned>(j)), first = j * lay.seg;
        for (std::size_t t = 0; t < len; ++t) fn(t * lay.lanes + j, first + t);
    }
}
template <typename Fn>
MANS_HD void for_each_element(const LaneLayout& lay, Fn&& fn) {
    for_each_element_of_lanes(lay, 0, lay.lanes, fn);
}

MANS_HD std::uint64_t sign_flip(DType t) {
    switch (t) {
        case DType::i16: return 1ull << 15;
        case DType::i32: return 1ull << 31;
        case DType::i64: return 1ull << 63;
        default: return 0;
    }
}

// Bytes per element (dtype_size, usable on a GPU); 0 for an unknown value.
MANS_HD unsigned elem_bytes(DType t) {
    switch (t) {
        case DType::u8: return 1;
        case DType::u16: case DType::i16: return 2;
        case DType::u32: case DType::i32: return 4;
        case DType::u64: case DType::i64: return 8;
    }
    return 0;
}

template <typename Fn>
void dispatch_width(DType t, Fn&& fn) {
    switch (dtype_size(t)) {
        case 1: fn(std::uint8_t{}); break;
        case 2: fn(std::uint16_t{}); break;
        case 4: fn(std::uint32_t{}); break;
        case 8: fn(std::uint64_t{}); break;
        default: break;
    }
}

}  // namespace mans::detail
