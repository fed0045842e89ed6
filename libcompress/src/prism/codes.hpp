// codes.hpp - quantization codes, their bit representations and truncation.
//
// Codes are bounded by kMaxCode = 2^29 (larger residuals take the outlier
// path), so every representation fits 31 digit planes and every subset of
// digits has a value that fits an int32.
#pragma once

#include <cstdint>

#include "core/hd.hpp"

namespace mans::detail::prism {

inline constexpr std::int32_t kMaxCode = 1 << 29;
inline constexpr unsigned kMaxPlanes = 31;

enum class Coding : std::uint8_t { negabinary = 1, sign_magnitude = 2 };

inline constexpr std::uint32_t kNegaMask = 0xAAAAAAAAu;

// Base -2 digits of q (|q| <= kMaxCode): digit i has weight (-2)^i.
MANS_HD std::uint32_t to_negabinary(std::int32_t q) {
    return (static_cast<std::uint32_t>(q) + kNegaMask) ^ kNegaMask;
}
// Value of any set of digits (not only a prefix): sum of digit_i * (-2)^i.
MANS_HD std::int32_t from_negabinary(std::uint32_t digits) {
    return static_cast<std::int32_t>((digits ^ kNegaMask) - kNegaMask);
}

MANS_HD unsigned bit_length(std::uint32_t v) { return bit_length64(v); }

// Representation word of a code: negabinary digits, or sign-magnitude with
// the sign in bit 31 and the magnitude below.
MANS_HD std::uint32_t encode_code(std::int32_t q, Coding c) {
    if (c == Coding::negabinary) return to_negabinary(q);
    const std::uint32_t mag = static_cast<std::uint32_t>(q < 0 ? -q : q);
    return (q < 0 ? 0x80000000u : 0u) | mag;
}

// Digits (bit planes) a level needs, from the OR of its words' magnitude
// parts: negabinary -> bit length; sign-magnitude -> 1 sign plane + bit
// length of the magnitudes (0 planes when every code is 0).
MANS_HD unsigned planes_for(std::uint32_t or_of_words, Coding c) {
    if (c == Coding::negabinary) return bit_length(or_of_words);
    const unsigned mag = bit_length(or_of_words & 0x7fffffffu);
    return mag ? mag + 1 : 0;
}

// Sets plane b (0 = most significant of `planes`) of a word to `bit`
// (on a zeroed bit).
MANS_HD std::uint32_t with_plane_bit(std::uint32_t word, unsigned b, unsigned planes, Coding c, std::uint32_t bit) {
    if (c == Coding::sign_magnitude && b == 0) return word | bit << 31;
    return word | bit << (planes - 1 - b);
}

// Code value of a word, or of the part of a word that is present
// (any subset of its planes; the sign plane must be present for magnitudes
// of sign-magnitude words, which the reader guarantees: it reads planes in order).
MANS_HD std::int32_t decode_word(std::uint32_t word, Coding c) {
    if (c == Coding::negabinary) return from_negabinary(word);
    const std::int32_t mag = static_cast<std::int32_t>(word & 0x7fffffffu);
    return (word >> 31) ? -mag : mag;
}

// The code error q - q' when only the first `kept` of `planes` planes of
// q's word w are read.
MANS_HD std::int32_t truncation_error(std::uint32_t w, std::int32_t q, unsigned kept, unsigned planes,
                                             Coding c) {
    if (c == Coding::negabinary) {
        const unsigned low = planes - kept;  // digits dropped
        const std::uint32_t low_mask = low >= 32 ? 0xffffffffu : ((1u << low) - 1u);
        return from_negabinary(w & low_mask);
    }
    if (kept == 0) return q;
    const unsigned low = planes - kept;  // magnitude digits dropped
    const std::uint32_t low_mask = (1u << low) - 1u;
    const std::int32_t dropped = static_cast<std::int32_t>(w & low_mask);
    return q < 0 ? -dropped : dropped;
}

}  // namespace mans::detail::prism
