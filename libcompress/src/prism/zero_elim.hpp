// zero_elim.hpp - zero-aware lossless coding of one bitplane chunk (PRISM).
// docs/FORMAT.md section 4.6 is normative.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "mans/mans.hpp"
#include "prism/zero_elim_hd.hpp"  // zero_elim_decode (MANS_HD), zero_elim_encode_into

namespace mans::detail::prism {

// Appends the zero-eliminated form of src[0..n) to *out: at most
// n + n/7 + 24 bytes, 4 bytes for an all-zero 16 KiB chunk. n is not stored;
// the decoder must be given the same n.
void zero_elim_encode(const std::uint8_t* src, std::size_t n, std::vector<std::uint8_t>* out);


// zero_elim_decode and the encoder's core: zero_elim_hd.hpp.

}  // namespace mans::detail::prism
