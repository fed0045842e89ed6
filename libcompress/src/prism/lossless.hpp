// lossless.hpp - the zero-aware lossless stage of PRISM segments.
//
// Every bitplane chunk and every part of the base segment is coded with the
// smallest of: nothing (all zero), raw, zero elimination (sparse planes) and
// a MANS stream (rANS; dense, skewed planes and integer side data).
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "core/hd.hpp"
#include "mans/mans.hpp"

namespace mans::detail::prism {

enum class Method : std::uint8_t { zero = 0, raw = 1, zero_elim = 2, mans_rans = 3 };
inline constexpr std::uint8_t kMethodCount = 4;

// Element width (1, 4 or 8 bytes) selects the MANS dtype (u8, u32, u64).
struct Encoded {
    Method method = Method::zero;
    std::vector<std::uint8_t> bytes;
    bool rans_tried = false;  // whether the MANS coder ran (the tests compare the GPU form's decision)
};

// The method encode_best picks for n bytes from the candidates' sizes:
// zero when every byte is zero, else the smallest of raw (n), zero
// elimination and, when it was tried (rans_bytes > 0), the MANS stream; a
// tie keeps the earlier of raw, zero_elim, mans_rans. MANS_HD, so that a
// GPU that computed the same candidates picks the same.
MANS_HD Method pick_method(std::size_t n, bool all_zero, std::size_t zero_elim_bytes, std::size_t rans_bytes) {
    if (all_zero) return Method::zero;
    Method m = Method::raw;
    std::size_t best = n;
    if (zero_elim_bytes < best) m = Method::zero_elim, best = zero_elim_bytes;
    if (rans_bytes > 0 && rans_bytes < best) m = Method::mans_rans;
    return m;
}

// Codes src[0..n) with the smallest method; `try_rans` allows the MANS coder.
void encode_best(const std::uint8_t* src, std::size_t n, unsigned width, bool try_rans, Encoded* out);

// Decodes a payload of exactly `size` bytes to exactly n bytes; corrupt_block
// on any inconsistency.
Errc decode_payload(Method method, const std::uint8_t* payload, std::size_t size, std::uint8_t* dst,
                    std::size_t n, unsigned width);

}  // namespace mans::detail::prism
