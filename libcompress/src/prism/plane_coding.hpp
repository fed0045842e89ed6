// plane_coding.hpp - one bitplane chunk, split by significance.
//
// Planes are always read most significant first, so when plane b of a code
// is decoded the reader already knows whether the code has a set bit in a
// higher plane. That splits plane b into two bit streams with very
// different statistics, coded separately:
//   "new"    - codes with no higher bit set: sparse significance bits;
//   "refine" - codes already significant: close to random.
// This gets the bitplanes close to the entropy of the codes themselves
// (plane b of a small code is nearly determined by its higher planes).
// docs/FORMAT.md section 4.5 is normative.
#pragma once

#include <cstdint>
#include <vector>

#include "mans/mans.hpp"
#include "prism/codes.hpp"

namespace mans::detail::prism {

// Appends the segment payload of plane b of words[0..len) to *out; returns
// false (appending nothing) when every bit of the plane is zero.
bool encode_plane_chunk(const std::uint32_t* words, std::uint64_t len, unsigned b, unsigned planes, Coding c,
                        std::vector<std::uint8_t>* out);

// Decodes a payload of exactly `size` bytes for plane b and sets the plane's
// bits in words[0..len), which must hold planes 0..b-1 already.
Errc decode_plane_chunk(const std::uint8_t* payload, std::size_t size, std::uint32_t* words, std::uint64_t len,
                        unsigned b, unsigned planes, Coding c);

}  // namespace mans::detail::prism
