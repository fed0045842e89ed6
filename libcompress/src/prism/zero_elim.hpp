// zero_elim.hpp - zero-aware lossless coding of one bitplane chunk (PRISM).
// docs/FORMAT.md section 4.6 is normative.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "mans/mans.hpp"

namespace mans::detail::prism {

// Appends the zero-eliminated form of src[0..n) to *out: at most
// n + n/7 + 24 bytes, 4 bytes for an all-zero 16 KiB chunk. n is not stored;
// the decoder must be given the same n.
void zero_elim_encode(const std::uint8_t* src, std::size_t n, std::vector<std::uint8_t>* out);

// Decodes a payload of exactly `size` bytes into dst[0..n). Returns
// Errc::corrupt_block when the payload is inconsistent with n (any length,
// bitmap or count that does not add up, or bytes left over). Only payloads
// that the encoder can produce are accepted. Never reads outside payload or
// writes outside dst, allocates nothing (the bitmaps are rebuilt inside dst)
// and leaves dst unspecified on failure. Trailing zero bytes that stay within
// the last bitmap byte are not detectable: n = 15 and n = 16 zeros share a
// payload, so a wrong n is caught only when the lengths or padding bits
// do not add up.
Errc zero_elim_decode(const std::uint8_t* payload, std::size_t size, std::uint8_t* dst, std::size_t n);

}  // namespace mans::detail::prism
