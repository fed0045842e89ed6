// lossless.hpp - the zero-aware lossless stage of PRISM segments.
//
// Every bitplane chunk and every part of the base segment is coded with the
// smallest of: nothing (all zero), raw, zero elimination (sparse planes) and
// a MANS stream (rANS; dense, skewed planes and integer side data).
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "mans/mans.hpp"

namespace mans::detail::prism {

enum class Method : std::uint8_t { zero = 0, raw = 1, zero_elim = 2, mans_rans = 3 };
inline constexpr std::uint8_t kMethodCount = 4;

// Element width (1, 4 or 8 bytes) selects the MANS dtype (u8, u32, u64).
struct Encoded {
    Method method = Method::zero;
    std::vector<std::uint8_t> bytes;
};

// Codes src[0..n) with the smallest method; `try_rans` allows the MANS coder.
void encode_best(const std::uint8_t* src, std::size_t n, unsigned width, bool try_rans, Encoded* out);

// Decodes a payload of exactly `size` bytes to exactly n bytes; corrupt_block
// on any inconsistency.
Errc decode_payload(Method method, const std::uint8_t* payload, std::size_t size, std::uint8_t* dst,
                    std::size_t n, unsigned width);

}  // namespace mans::detail::prism
