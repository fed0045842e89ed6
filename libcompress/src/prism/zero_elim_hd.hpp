// zero_elim_hd.hpp - zero elimination with repetition-eliminated bitmaps
// (RZE), as MANS_HD code: the CPU's PRISM lossless stage runs it
// (zero_elim.cpp) and a GPU kernel can run the same functions.
//
// Byte layout. Bitmaps are LSB-first: bit j of a bitmap is bit (j % 8) of its
// byte j / 8. The chunk length n is not stored; it comes from the caller.
//
//   B0 = nonzero bitmap of the chunk: bits0 = n bits, bit j = (src[j] != 0).
//   V  = the nonzero bytes of the chunk, in order (popcount(B0) bytes).
//   For a bitmap Bk of bitsk bits, mk = ceil(bitsk / 8) bytes, all padding
//   bits (bitsk .. 8*mk-1) zero. While mk > 8, repetition elimination gives
//     B(k+1) = "changed" bitmap of bits(k+1) = mk bits:
//              bit i = (Bk[i] != Bk[i-1]), with Bk[-1] = 0;
//     Kk     = the bytes Bk[i] whose bit i of B(k+1) is set, in order
//              (popcount(B(k+1)) bytes).
//   The first bitmap BL with mL <= 8 bytes ends the chain (L = 0 when
//   ceil(n / 8) <= 8).
//
//   payload = V || K0 || K1 || ... || K(L-1) || BL        (no header, no lengths)
//
// The decoder derives every mk from n alone, takes BL from the last mL bytes,
// then walks backwards: K(k) is the popcount(B(k+1)) bytes just before what
// was consumed so far, and rebuilds Bk; finally V must be exactly the
// popcount(B0) bytes left at the front. The encoding is canonical: a payload is
// accepted if and only if it is the encoding of its decoded chunk, i.e. the
// decoder rejects (corrupt_block) a length that does not add up exactly, a set
// padding bit, a kept byte equal to its predecessor, and a zero byte in V.
//
// Size: all-zero chunks take mL <= 8 bytes (4 bytes for 16 KiB); the worst
// case is n + m0 + m1 + ... + mL < n + n/7 + 24 bytes.
//
// Every step is a stream compaction (a prefix sum over a bitmap), so a GPU
// kernel can produce or consume exactly these bytes.
#pragma once

#include <cstddef>
#include <cstdint>

#include "core/byte_io.hpp"
#include "core/hd.hpp"
#include "mans/mans.hpp"

namespace mans::detail::prism {

namespace zero_elim_detail {


// Bitmap chain for n: bits[0] = n, bytes[k] = ceil(bits[k] / 8),
// bits[k+1] = bytes[k], until bytes[k] <= 8. Even n = 2^64-1 needs only 21.
inline constexpr std::size_t kMaxLevels = 24;

struct Levels {
    std::size_t count = 0;  // number of bitmaps, L + 1
    std::size_t bits[kMaxLevels] = {};
    std::size_t bytes[kMaxLevels] = {};
    std::size_t total = 0;  // sum of bytes[]; never more than n
};

MANS_HD std::size_t ceil8(std::size_t x) { return x / 8 + (x % 8 != 0); }

MANS_HD Levels plan_levels(std::size_t n) {
    Levels lv;
    std::size_t bits = n;
    for (;;) {
        lv.bits[lv.count] = bits;
        lv.bytes[lv.count] = ceil8(bits);
        lv.total += lv.bytes[lv.count];
        if (lv.bytes[lv.count++] <= 8) return lv;
        bits = lv.bytes[lv.count - 1];
    }
}

// Bits 0..k-1 set (k <= 8).
MANS_HD unsigned low_bits(std::size_t k) { return (1u << k) - 1; }

// Loads up to 8 bytes little-endian, zero-filling the rest.
MANS_HD std::uint64_t load_group(const std::uint8_t* p, std::size_t count) {
    if (count >= 8) return load_le<std::uint64_t>(p);
    std::uint64_t w = 0;
    hd_memcpy(&w, p, count);
    return w;
}

// Bit t of the result = (byte t of w != 0).
MANS_HD unsigned nonzero_mask(std::uint64_t w) {
    constexpr std::uint64_t low7 = 0x7f7f7f7f7f7f7f7fULL;
    const std::uint64_t high = (((w & low7) + low7) | w) & ~low7;  // bit 7 of each byte
    return static_cast<unsigned>(((high >> 7) * 0x0102040810204080ULL) >> 56);
}

MANS_HD bool has_zero_byte(std::uint64_t w) { return nonzero_mask(w) != 0xff; }

MANS_HD std::size_t popcount(const std::uint8_t* p, std::size_t size) {
    std::size_t ones = 0;
    for (std::size_t i = 0; i < size; i += 8) ones += popcount64_hd(load_group(p + i, size - i));
    return ones;
}

// Appends group[t] for every set bit t of mask (no bit at or above count);
// returns the new end.
MANS_HD std::uint8_t* emit_selected(const std::uint8_t* group, unsigned mask, std::uint8_t* out) {
    if (mask == 0xff) {  // then count == 8
        hd_memcpy(out, group, 8);
        return out + 8;
    }
    for (; mask; mask &= mask - 1) *out++ = group[ctz32(mask)];
    return out;
}

// Stores the low `count` bytes of w (count <= 8).
MANS_HD void store_group(std::uint8_t* p, std::uint64_t w, std::size_t count) {
    if (count == 8) {
        store_le(p, w);
    } else {
        hd_memcpy(p, &w, count);
    }
}

inline constexpr std::uint64_t kOnes = 0x0101010101010101ULL;

// Level 0: writes the nonzero bitmap of src[0..n) to map and the nonzero
// bytes to out; returns the end of the bytes written to out.
MANS_HD std::uint8_t* split_nonzero(const std::uint8_t* src, std::size_t n, std::uint8_t* map, std::uint8_t* out) {
    for (std::size_t g = 0; g * 8 < n; ++g) {
        const std::uint8_t* group = src + g * 8;
        const std::size_t count = n - g * 8 < 8 ? n - g * 8 : 8;
        const std::uint64_t w = load_group(group, count);
        const unsigned mask = w ? nonzero_mask(w) : 0;
        map[g] = static_cast<std::uint8_t>(mask);
        out = emit_selected(group, mask, out);
    }
    return out;
}

// Repetition elimination of map[0..m): writes the changed bitmap to changed
// and the changed bytes to out; returns the end of the bytes written to out.
MANS_HD std::uint8_t* split_repeats(const std::uint8_t* map, std::size_t m, std::uint8_t* changed, std::uint8_t* out) {
    for (std::size_t g = 0; g * 8 < m; ++g) {
        const std::uint8_t* group = map + g * 8;
        const std::size_t count = m - g * 8 < 8 ? m - g * 8 : 8;
        const std::uint64_t w = load_group(group, count);
        const std::uint64_t prev = (w << 8) | (g ? group[-1] : 0u);  // byte t = map[8g + t - 1]
        const unsigned mask = nonzero_mask(w ^ prev) & low_bits(count);
        changed[g] = static_cast<std::uint8_t>(mask);
        out = emit_selected(group, mask, out);
    }
    return out;
}

// Inverse of split_repeats: rebuilds map[0..m) from the changed bitmap (its
// padding bits already checked zero) and kept[] (exactly as many bytes as
// changed has set bits). False when a kept byte repeats its predecessor.
// Each group starts as 8 copies of the previous byte; a set bit t overwrites
// bytes t..7 with the next kept byte.
MANS_HD bool join_repeats(const std::uint8_t* changed, const std::uint8_t* kept, std::uint8_t* map, std::size_t m) {
    std::uint64_t prev = 0;  // the last byte, as an integer
    bool repeats = false;
    for (std::size_t g = 0; g * 8 < m; ++g) {
        const std::size_t count = m - g * 8 < 8 ? m - g * 8 : 8;
        std::uint64_t w = prev * kOnes;
        for (unsigned c = changed[g]; c; c &= c - 1) {
            const std::uint64_t v = *kept++;
            repeats |= v == prev;
            const unsigned shift = 8 * static_cast<unsigned>(ctz32(c));
            w = (w & ~(~0ULL << shift)) | (v * kOnes) << shift;
            prev = v;
        }
        store_group(map + g * 8, w, count);
    }
    return !repeats;
}

// Inverse of split_nonzero: dst[0..n) from the nonzero bitmap (padding bits
// already checked zero) and values[] (exactly popcount(map) bytes). False
// when a value is zero. map may lie inside dst at dst + n - ceil(n/8): group g
// reads map[g] before writing dst[8g .. 8g+8), which ends at or before
// map + g + 1 for every group but the last, so no unread map byte is
// overwritten.
MANS_HD bool join_nonzero(const std::uint8_t* map, const std::uint8_t* values, std::uint8_t* dst, std::size_t n) {
    bool zero = false;
    for (std::size_t g = 0; g * 8 < n; ++g) {
        const std::size_t count = n - g * 8 < 8 ? n - g * 8 : 8;
        const unsigned mask = map[g];
        std::uint64_t w = 0;
        if (mask == 0xff) {  // then count == 8
            w = load_le<std::uint64_t>(values);
            zero |= has_zero_byte(w);
            values += 8;
        } else {
            for (unsigned c = mask; c; c &= c - 1) {
                const std::uint64_t v = *values++;
                zero |= v == 0;
                w |= v << (8 * static_cast<unsigned>(ctz32(c)));
            }
        }
        store_group(dst + g * 8, w, count);
    }
    return !zero;
}

// True when a bitmap of `bits` bits in `bytes` bytes has no padding bit set.
MANS_HD bool padding_clear(const std::uint8_t* map, std::size_t bits, std::size_t bytes) {
    return bits % 8 == 0 || (map[bytes - 1] >> (bits % 8)) == 0;
}

}  // namespace zero_elim_detail

// Bytes of the bitmaps B0..BL of a chunk of n bytes (the encoder's work
// space); the payload takes at most n + this many bytes.
// (plan_levels(n).total, summed without keeping the chain: no stack array
// in a GPU thread that only sizes buffers.)
MANS_HD std::size_t zero_elim_map_bytes(std::size_t n) {
    std::size_t total = 0;
    for (std::size_t bits = n;;) {
        const std::size_t bytes = zero_elim_detail::ceil8(bits);
        total += bytes;
        if (bytes <= 8) return total;
        bits = bytes;
    }
}

// Writes the zero-eliminated form of src[0..n) to out (at least n +
// zero_elim_map_bytes(n) bytes), using maps (zero_elim_map_bytes(n) bytes)
// as work space; returns the payload size.
MANS_HD std::size_t zero_elim_encode_into(const std::uint8_t* src, std::size_t n, std::uint8_t* maps,
                                          std::uint8_t* out) {
    using namespace zero_elim_detail;
    const Levels lv = plan_levels(n);
    std::uint8_t* map = maps;
    std::uint8_t* w = split_nonzero(src, n, map, out);
    for (std::size_t k = 0; k + 1 < lv.count; ++k) {
        std::uint8_t* next = map + lv.bytes[k];
        w = split_repeats(map, lv.bytes[k], next, w);
        map = next;
    }
    const std::size_t top = lv.bytes[lv.count - 1];
    if (top) hd_memcpy(w, map, top);
    return static_cast<std::size_t>(w - out) + top;
}

// Decodes a payload of exactly `size` bytes into dst[0..n). Returns
// Errc::corrupt_block when the payload is inconsistent with n (any length,
// bitmap or count that does not add up, or bytes left over). Only payloads
// that the encoder can produce are accepted. Never reads outside payload or
// writes outside dst, allocates nothing (the bitmaps are rebuilt inside dst)
// and leaves dst unspecified on failure. Trailing zero bytes that stay within
// the last bitmap byte are not detectable: n = 15 and n = 16 zeros share a
// payload, so a wrong n is caught only when the lengths or padding bits
// do not add up.
MANS_HD Errc zero_elim_decode(const std::uint8_t* payload, std::size_t size, std::uint8_t* dst, std::size_t n) {
    if (n == 0) return size == 0 ? Errc::ok : Errc::corrupt_block;
    // The bitmaps are rebuilt inside dst, BL lowest and B0 at the very end
    // (lv.total <= n), so decoding needs no memory of its own.
    const zero_elim_detail::Levels lv = zero_elim_detail::plan_levels(n);
    std::size_t at = n - lv.total;  // where BL goes
    const std::size_t L = lv.count - 1;
    std::size_t rest = size;        // payload[0 .. rest) is not consumed yet
    if (rest < lv.bytes[L]) return Errc::corrupt_block;
    rest -= lv.bytes[L];
    hd_memcpy(dst + at, payload + rest, lv.bytes[L]);
    if (!zero_elim_detail::padding_clear(dst + at, lv.bits[L], lv.bytes[L])) return Errc::corrupt_block;
    for (std::size_t k = L; k-- > 0;) {
        const std::uint8_t* changed = dst + at;
        const std::size_t kept = zero_elim_detail::popcount(changed, lv.bytes[k + 1]);
        if (kept > rest) return Errc::corrupt_block;
        rest -= kept;
        at += lv.bytes[k + 1];
        std::uint8_t* map = dst + at;
        if (!zero_elim_detail::join_repeats(changed, payload + rest, map, lv.bytes[k])) return Errc::corrupt_block;
        if (!zero_elim_detail::padding_clear(map, lv.bits[k], lv.bytes[k])) return Errc::corrupt_block;
    }
    // Now B0 sits at dst + n - m0 and V must be exactly payload[0 .. rest).
    if (zero_elim_detail::popcount(dst + at, lv.bytes[0]) != rest) return Errc::corrupt_block;
    if (!zero_elim_detail::join_nonzero(dst + at, payload, dst, n)) return Errc::corrupt_block;
    return Errc::ok;
}

}  // namespace mans::detail::prism
