// token_map.hpp - per-element mappings from integers to byte tokens.
//
// Shared by the CPU and GPU backends (MANS_HD). All arithmetic is modulo
// 2^B on "biased" values: signed types have their sign bit flipped first, so
// that the natural unsigned order is the numeric order.
#pragma once

#include <cstdint>

#include "core/hd.hpp"

namespace mans::detail {

// bit_length64 and ctz32 are in core/hd.hpp.

MANS_HD std::uint64_t low_mask(unsigned bits) { return bits >= 64 ? ~0ull : ((1ull << bits) - 1); }

// Zigzag of a B-bit two's-complement difference: 0, -1, 1, -2, ... -> 0, 1, 2, 3, ...
MANS_HD std::uint64_t zigzag(std::uint64_t diff, unsigned B) {
    const std::uint64_t mask = low_mask(B);
    const std::uint64_t neg = (diff >> (B - 1)) & 1;
    return ((diff << 1) ^ (neg ? mask : 0)) & mask;
}
MANS_HD std::uint64_t unzigzag(std::uint64_t v, unsigned B) {
    return ((v >> 1) ^ ((v & 1) ? low_mask(B) : 0)) & low_mask(B);
}

// Hybrid token ("size bucket + mantissa"): values below 2^s are tokens
// themselves; a larger value with leading bit e codes (e, top m mantissa
// bits) in the token and sends the e - m lower bits raw.
struct HybridSplit {
    unsigned s;  // direct tokens: 0 .. 2^s - 1
    unsigned m;  // mantissa bits kept in the token
};

MANS_HD unsigned hybrid_token_count(HybridSplit p, unsigned B) {
    return (1u << p.s) + ((B - p.s) << p.m);
}

// `with_repeat`: one more token (the repeat token) must fit in a byte.
MANS_HD bool hybrid_split_valid(HybridSplit p, unsigned B, bool with_repeat = false) {
    return p.s <= 8 && p.s <= B && p.m <= 4 && p.m <= p.s &&
           hybrid_token_count(p, B) + (with_repeat ? 1u : 0u) <= 256;
}

MANS_HD unsigned hybrid_token(std::uint64_t v, HybridSplit p, unsigned* nraw) {
    // Branch-free (both cases computed, one selected): whether a value is
    // below 2^s is data-dependent and mispredicts badly.
    const bool big = v >= (1ull << p.s);
    unsigned e = bit_length64(v | 1) - 1;
    e = e < p.s ? p.s : e;
    const unsigned mant = static_cast<unsigned>(v >> (e - p.m)) & ((1u << p.m) - 1);
    const unsigned tok_big = (1u << p.s) + ((e - p.s) << p.m) + mant;
    *nraw = big ? e - p.m : 0;
    return big ? tok_big : static_cast<unsigned>(v);
}

// Inverse: the value is base | raw, with raw of nraw bits.
MANS_HD bool hybrid_untoken(unsigned tok, HybridSplit p, unsigned B, std::uint64_t* base,
                            unsigned* nraw) {
    if (tok < (1u << p.s)) {
        *base = tok;
        *nraw = 0;
        return true;
    }
    const unsigned rel = tok - (1u << p.s);
    const unsigned e = p.s + (rel >> p.m);
    if (e >= B) {
        *base = 0;
        *nraw = 0;
        return false;
    }
    const std::uint64_t mant = rel & ((1u << p.m) - 1);
    *nraw = e - p.m;
    *base = (1ull << e) | (mant << (e - p.m));
    return true;
}

// ADM as published (MANS, SC'25): distance d = |x - c| to the block center
// becomes a code byte (1 for d = 0; 2r or 2r+1 for x above/below c with
// r = d - 126(k-1) in 1..126) and a unary length k = ceil(d / 126).
inline constexpr unsigned kAdmStep = 126;
inline constexpr unsigned kAdmMaxK = 32;  // encoder limit; longer signals are corrupt

MANS_HD unsigned adm_code(std::uint64_t u, std::uint64_t c, unsigned* k) {
    if (u == c) {
        *k = 1;
        return 1;
    }
    const bool below = u < c;
    const std::uint64_t d = below ? c - u : u - c;
    *k = static_cast<unsigned>((d + kAdmStep - 1) / kAdmStep);
    const unsigned r = static_cast<unsigned>(d - static_cast<std::uint64_t>(kAdmStep) * (*k - 1));
    return 2 * r + (below ? 1 : 0);
}

// Returns false for a code/length pair the encoder never writes or a value
// outside [0, max].
MANS_HD bool adm_value(unsigned code, unsigned k, std::uint64_t c, std::uint64_t max,
                       std::uint64_t* u) {
    if (code == 1) {
        *u = c;
        return k == 1;
    }
    if (code < 2 || code > 253) return false;
    const std::uint64_t d = (code >> 1) + static_cast<std::uint64_t>(kAdmStep) * (k - 1);
    if (code & 1) {
        if (d > c) return false;
        *u = c - d;
    } else {
        if (d > max - c) return false;
        *u = c + d;
    }
    return true;
}

}  // namespace mans::detail
