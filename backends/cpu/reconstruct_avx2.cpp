// reconstruct_avx2.cpp - reconstruct_hybrid_serial (mapping/block_decode.hpp)
// for elements of 8, 16 and 32 bits, a register of a lane's elements at a
// time (eight in 32-bit lanes; 32-bit elements, with fields of up to 31
// bits, four in 64-bit lanes: Lanes32 and Lanes64 below):
//   1. the interleaved tokens are copied lane by lane (8 x 8 byte
//      transposes), so that a lane's next eight (or four) tokens are one
//      load;
//   2. each token's meaning is computed, not looked up (hybrid_untoken:
//      base and raw-bit count from the split; AVX2's gathers are slow on
//      many x86 cores), the raw-bit positions are a prefix sum of the
//      counts, and the raw fields are cut from a 16- or 32-byte window of
//      the bit stream by byte shuffles and variable shifts;
//   3. the predictor: the center plus the difference, a prefix sum of the
//      differences (previous element), or the center with repeat tokens
//      copying the element before them (a segmented copy in doubling
//      steps).
// The only chain between chunks is the bit position and the previous
// element. A lane's last elements (fewer than a register holds) take the
// serial loop's steps, and so does the rest of a corrupt section once the
// position has passed its end. Elements (those of a rejected section too)
// and verdict are reconstruct_hybrid_serial's: tests/test_hd_algo.cpp
// compares them on valid and corrupt sections for every split and
// predictor, u8, u16, i16, u32 and i32.
#include "reconstruct_avx2.hpp"

#include <immintrin.h>

#include <cstdint>
#include <cstring>
#include <type_traits>

#include "core/byte_io.hpp"

// AVX2 for the functions defined below only (rans_avx2.cpp says why not
// -mavx2 for the file); the header code above stays portable.
#if defined(__clang__)
#pragma clang attribute push(__attribute__((target("avx2"))), apply_to = function)
#else
#pragma GCC push_options
#pragma GCC target("avx2")
#endif

namespace mans::cpu {

using detail::HybridReconstructArgs;
using detail::LaneLayout;
using detail::Predictor;

namespace {

inline void store_half(std::uint8_t* p, __m128i v) { _mm_storel_epi64(reinterpret_cast<__m128i*>(p), v); }
inline void store_high_half(std::uint8_t* p, __m128i v) { store_half(p, _mm_unpackhi_epi64(v, v)); }

// out[j * seg + t] = tokens[t * lanes + j]: whole 8 x 8 tiles of the full
// steps by byte unpacks, the rest one token at a time.
void tokens_by_lane(const std::uint8_t* tokens, const LaneLayout& lay, std::uint8_t* out) {
    const unsigned lanes = lay.lanes;
    const std::size_t seg = lay.seg, full = lay.full_steps();
    std::size_t done = 0;  // steps copied for every lane
    if (lanes >= 8) {
        for (; done + 8 <= full; done += 8)
            for (unsigned j = 0; j < lanes; j += 8) {
                const std::uint8_t* in = tokens + done * lanes + j;
                __m128i r[8];
                for (unsigned k = 0; k < 8; ++k)
                    r[k] = _mm_loadl_epi64(reinterpret_cast<const __m128i*>(in + k * lanes));
                const __m128i a0 = _mm_unpacklo_epi8(r[0], r[1]), a1 = _mm_unpacklo_epi8(r[2], r[3]);
                const __m128i a2 = _mm_unpacklo_epi8(r[4], r[5]), a3 = _mm_unpacklo_epi8(r[6], r[7]);
                const __m128i b0 = _mm_unpacklo_epi16(a0, a1), b1 = _mm_unpackhi_epi16(a0, a1);  // steps 0-3
                const __m128i b2 = _mm_unpacklo_epi16(a2, a3), b3 = _mm_unpackhi_epi16(a2, a3);  // steps 4-7
                const __m128i c[4] = {_mm_unpacklo_epi32(b0, b2), _mm_unpackhi_epi32(b0, b2),
                                      _mm_unpacklo_epi32(b1, b3), _mm_unpackhi_epi32(b1, b3)};
                for (unsigned k = 0; k < 4; ++k) {  // c[k]: lanes j + 2k and j + 2k + 1
                    store_half(out + (j + 2 * k) * seg + done, c[k]);
                    store_high_half(out + (j + 2 * k + 1) * seg + done, c[k]);
                }
            }
    }
    for (unsigned j = 0; j < lanes; ++j) {
        const std::size_t len = lay.lane_len(j);
        for (std::size_t t = done; t < len; ++t) out[j * seg + t] = tokens[t * lanes + j];
    }
}

// The chunk loop works on one register of elements, in lanes of one
// width: eight elements in 32-bit lanes for elements of 8 and 16 bits, four
// in 64-bit lanes for 32-bit elements (their raw fields of up to 31 bits
// could not all end in a 16-byte window, eight at a time). Lanes32 and
// Lanes64 are that width's operations, so that one loop serves both.
struct Lanes32 {
    static constexpr unsigned kCount = 8;         // elements per register
    static constexpr unsigned kWindowBytes = 16;  // bytes of bit stream a chunk reads

    static __m256i set1(std::int64_t v) { return _mm256_set1_epi32(static_cast<int>(v)); }
    static __m256i load_tokens(const std::uint8_t* p) {
        return _mm256_cvtepu8_epi32(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(p)));
    }
    static __m256i add(__m256i a, __m256i b) { return _mm256_add_epi32(a, b); }
    static __m256i sub(__m256i a, __m256i b) { return _mm256_sub_epi32(a, b); }
    static __m256i cmpgt(__m256i a, __m256i b) { return _mm256_cmpgt_epi32(a, b); }
    static __m256i cmpeq(__m256i a, __m256i b) { return _mm256_cmpeq_epi32(a, b); }
    static __m256i srl(__m256i a, __m128i n) { return _mm256_srl_epi32(a, n); }
    template <int kN>
    static __m256i srli(__m256i a) { return _mm256_srli_epi32(a, kN); }
    static __m256i sllv(__m256i a, __m256i n) { return _mm256_sllv_epi32(a, n); }
    static __m256i srlv(__m256i a, __m256i n) { return _mm256_srlv_epi32(a, n); }
    static std::uint64_t last(__m256i v) {
        return static_cast<std::uint32_t>(_mm256_cvtsi256_si32(_mm256_permutevar8x32_epi32(v, _mm256_set1_epi32(7))));
    }
    // Inclusive prefix sum.
    static __m256i prefix_sum(__m256i v) {
        v = _mm256_add_epi32(v, _mm256_slli_si256(v, 4));
        v = _mm256_add_epi32(v, _mm256_slli_si256(v, 8));
        const __m256i low_total = _mm256_shuffle_epi32(v, 0xFF);  // element 3 of each half
        return _mm256_add_epi32(v, _mm256_permute2x128_si256(low_total, low_total, 0x08));  // to the high half
    }
    // v shifted up by kD elements, the first kD taken from `fill`.
    template <int kD>
    static __m256i shift_up(__m256i v, __m256i fill) {
        const __m256i idx = _mm256_setr_epi32(0 - kD, 1 - kD, 2 - kD, 3 - kD, 4 - kD, 5 - kD, 6 - kD, 7 - kD);
        return _mm256_blend_epi32(_mm256_permutevar8x32_epi32(v, _mm256_max_epi32(idx, _mm256_setzero_si256())),
                                  fill, (1 << kD) - 1);
    }
    // The 4 bytes from each element's first byte of the window on: its
    // fields end by bit 7 + 8 * 15 < 128, so a word that wraps past the 16
    // bytes to their start has only bits above its field there, masked off.
    static __m256i window_words(const std::uint8_t* w, __m256i first_byte) {
        const __m256i spread = _mm256_setr_epi8(0, 0, 0, 0, 4, 4, 4, 4, 8, 8, 8, 8, 12, 12, 12, 12,  //
                                                0, 0, 0, 0, 4, 4, 4, 4, 8, 8, 8, 8, 12, 12, 12, 12);
        const __m256i idx = _mm256_add_epi32(_mm256_shuffle_epi8(first_byte, spread), _mm256_set1_epi32(0x03020100));
        const __m256i win = _mm256_broadcastsi128_si256(_mm_loadu_si128(reinterpret_cast<const __m128i*>(w)));
        return _mm256_shuffle_epi8(win, idx);
    }
};

struct Lanes64 {
    static constexpr unsigned kCount = 4;
    static constexpr unsigned kWindowBytes = 32;

    static __m256i set1(std::int64_t v) { return _mm256_set1_epi64x(v); }
    static __m256i load_tokens(const std::uint8_t* p) {
        std::uint32_t four;
        std::memcpy(&four, p, 4);
        return _mm256_cvtepu8_epi64(_mm_cvtsi32_si128(static_cast<int>(four)));
    }
    static __m256i add(__m256i a, __m256i b) { return _mm256_add_epi64(a, b); }
    static __m256i sub(__m256i a, __m256i b) { return _mm256_sub_epi64(a, b); }
    static __m256i cmpgt(__m256i a, __m256i b) { return _mm256_cmpgt_epi64(a, b); }
    static __m256i cmpeq(__m256i a, __m256i b) { return _mm256_cmpeq_epi64(a, b); }
    static __m256i srl(__m256i a, __m128i n) { return _mm256_srl_epi64(a, n); }
    template <int kN>
    static __m256i srli(__m256i a) { return _mm256_srli_epi64(a, kN); }
    static __m256i sllv(__m256i a, __m256i n) { return _mm256_sllv_epi64(a, n); }
    static __m256i srlv(__m256i a, __m256i n) { return _mm256_srlv_epi64(a, n); }
    static std::uint64_t last(__m256i v) { return static_cast<std::uint64_t>(_mm256_extract_epi64(v, 3)); }
    static __m256i prefix_sum(__m256i v) {
        v = _mm256_add_epi64(v, _mm256_slli_si256(v, 8));
        const __m256i low_total = _mm256_permute4x64_epi64(v, 0x55);  // element 1 everywhere
        return _mm256_add_epi64(v, _mm256_blend_epi32(_mm256_setzero_si256(), low_total, 0xF0));
    }
    template <int kD>
    static __m256i shift_up(__m256i v, __m256i fill) {
        static_assert(kD == 1 || kD == 2, "four elements");
        const __m256i moved = kD == 1 ? _mm256_permute4x64_epi64(v, 0x90)   // v0 v0 v1 v2
                                      : _mm256_permute4x64_epi64(v, 0x40);  // v0 v0 v0 v1
        return _mm256_blend_epi32(moved, fill, kD == 1 ? 0x03 : 0x0F);
    }
    // The 8 bytes from each element's first byte on: fields of up to 31
    // bits end by bit 7 + 4 * 31 < 136, so a word starts by byte 12 of the
    // 32-byte window; indices 16-31 read its upper half (a shuffle index
    // with its top bit set selects zero).
    static __m256i window_words(const std::uint8_t* w, __m256i first_byte) {
        const __m256i spread = _mm256_setr_epi8(0, 0, 0, 0, 0, 0, 0, 0, 8, 8, 8, 8, 8, 8, 8, 8,  //
                                                0, 0, 0, 0, 0, 0, 0, 0, 8, 8, 8, 8, 8, 8, 8, 8);
        const __m256i idx =
            _mm256_add_epi64(_mm256_shuffle_epi8(first_byte, spread), _mm256_set1_epi64x(0x0706050403020100));
        const __m256i lo = _mm256_broadcastsi128_si256(_mm_loadu_si128(reinterpret_cast<const __m128i*>(w)));
        const __m256i hi = _mm256_broadcastsi128_si256(_mm_loadu_si128(reinterpret_cast<const __m128i*>(w + 16)));
        return _mm256_or_si256(_mm256_shuffle_epi8(lo, _mm256_adds_epu8(idx, _mm256_set1_epi8(0x70))),
                               _mm256_shuffle_epi8(hi, _mm256_sub_epi8(idx, _mm256_set1_epi8(16))));
    }
};

// A repeat token copies the element before it. In doubling steps an
// element still marked takes the value kD places back, and stays marked
// while that one is; those marked at the end follow only repeats in this
// chunk: they take the previous chunk's last element.
template <typename L, int kD = 1>
inline __m256i copy_repeats(__m256i u, __m256i repeat, __m256i prev) {
    if constexpr (kD < static_cast<int>(L::kCount)) {
        u = _mm256_blendv_epi8(u, L::template shift_up<kD>(u, prev), repeat);
        repeat = _mm256_and_si256(repeat, L::template shift_up<kD>(repeat, _mm256_setzero_si256()));
        return copy_repeats<L, 2 * kD>(u, repeat, prev);
    } else {
        return _mm256_blendv_epi8(u, prev, repeat);
    }
}

// The low bits of each lane's element, in order, as elements of type U.
template <typename U>
inline void store_elements(std::uint8_t* dst, __m256i u) {
    if constexpr (sizeof(U) == 4) {  // Lanes64: the low dword of each
        const __m256i low_dwords = _mm256_permutevar8x32_epi32(u, _mm256_setr_epi32(0, 2, 4, 6, 0, 2, 4, 6));
        _mm_storeu_si128(reinterpret_cast<__m128i*>(dst), _mm256_castsi256_si128(low_dwords));
    } else if constexpr (sizeof(U) == 2) {
        const __m256i words =
            _mm256_shuffle_epi8(u, _mm256_setr_epi8(0, 1, 4, 5, 8, 9, 12, 13, -1, -1, -1, -1, -1, -1, -1, -1,  //
                                                    0, 1, 4, 5, 8, 9, 12, 13, -1, -1, -1, -1, -1, -1, -1, -1));
        _mm_storeu_si128(reinterpret_cast<__m128i*>(dst), _mm256_castsi256_si128(_mm256_permute4x64_epi64(words, 0x08)));
    } else {
        const __m256i bytes =
            _mm256_shuffle_epi8(u, _mm256_setr_epi8(0, 4, 8, 12, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1,  //
                                                    0, 4, 8, 12, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1));
        const __m128i packed = _mm_unpacklo_epi32(_mm256_castsi256_si128(bytes), _mm256_extracti128_si256(bytes, 1));
        _mm_storel_epi64(reinterpret_cast<__m128i*>(dst), packed);
    }
}

template <typename U, Predictor kPred>
bool reconstruct(const HybridReconstructArgs& a) {
    constexpr unsigned B = 8 * sizeof(U);
    static_assert(B <= 16 || B == 32, "8-, 16- and 32-bit elements");
    using L = std::conditional_t<B == 32, Lanes64, Lanes32>;
    const LaneLayout& lay = a.lay;
    const unsigned s = a.split.s, m = a.split.m;
    const unsigned count = detail::hybrid_token_count(a.split, B);  // the repeat token, if any
    tokens_by_lane(a.tokens, lay, a.lane_tokens);

    // The serial loop's steps, for the tails.
    std::uint32_t base[256];
    std::uint8_t nraw[256];
    std::uint32_t all_ok = 1, tok_ok[256];
    for (unsigned t = 0; t < 256; ++t) {
        const detail::HybridTokenInfo ti = detail::hybrid_token_info<U, kPred>(t, a.split);
        base[t] = static_cast<std::uint32_t>(ti.base);
        nraw[t] = static_cast<std::uint8_t>(ti.nraw);
        tok_ok[t] = ti.ok;
    }
    const std::uint32_t raw_center = static_cast<std::uint32_t>(a.center ^ a.flip);
    const std::uint8_t* bits = a.bits;
    const std::uint32_t len = a.len;

    const __m256i zero = _mm256_setzero_si256(), one = L::set1(1), seven = L::set1(7);
    const __m256i direct_max = L::set1((1u << s) - 1), direct_end = L::set1(1u << s);
    const __m256i vcount = L::set1(count);
    const __m128i mshift = _mm_cvtsi32_si128(static_cast<int>(m));
    const __m256i mant_mask = L::set1((1u << m) - 1), lead = L::set1(1u << m);
    const __m256i s_minus_m = L::set1(static_cast<std::int64_t>(s) - m);
    const __m256i vcenter = L::set1(raw_center);
    __m256i ok_all = _mm256_set1_epi32(-1);

    // The section's last 32 bytes (or fewer) and zeros: the windows that
    // would reach past its end read this copy, so that short sections (a u8
    // block has few raw bits, often none) take the vector loop too. The
    // serial loop reads zeros past the end as well.
    alignas(16) std::uint8_t tail[64] = {};
    const std::uint32_t tail_start = len >= 32 ? len - 32 : 0;
    if (len > tail_start) std::memcpy(tail, bits + tail_start, len - tail_start);
    const auto window = [&](std::uint64_t at) {  // at <= len: at most tail + 32
        return at + L::kWindowBytes <= len ? bits + at : tail + (at - tail_start);
    };

    std::uint64_t pos = 0;  // bits read so far
    for (unsigned j = 0; j < lay.lanes; ++j) {
        const std::size_t lane_len = lay.lane_len(j);
        const std::uint8_t* src = a.lane_tokens + static_cast<std::size_t>(j) * lay.seg;
        std::uint8_t* dst = a.y + static_cast<std::size_t>(j) * lay.seg * sizeof(U);
        std::uint32_t prev = raw_center;  // a lane's first element refers to the center
        std::size_t t = 0;
        // A register of elements at a time while the position is in the section.
        for (; t + L::kCount <= lane_len && (pos >> 3) <= len; t += L::kCount) {
            const __m256i tok = L::load_tokens(src + t);
            // hybrid_untoken: tokens below 2^s are the value; above, the
            // exponent e = s + (rel >> m), nraw = e - m, base = (2^m | mant) << nraw.
            __m256i valid = L::cmpgt(vcount, tok);
            __m256i big = L::cmpgt(tok, direct_max);
            __m256i repeat = zero;
            if constexpr (kPred == Predictor::center_repeat) {
                repeat = L::cmpeq(tok, vcount);
                valid = _mm256_or_si256(valid, repeat);
                big = _mm256_andnot_si256(repeat, big);
            }
            ok_all = _mm256_and_si256(ok_all, valid);
            const __m256i rel = L::sub(tok, direct_end);
            // Invalid tokens read no bits (the verdict fails anyway): the
            // position stays where windows can be checked.
            const __m256i nr = _mm256_and_si256(_mm256_and_si256(big, valid), L::add(L::srl(rel, mshift), s_minus_m));
            const __m256i big_base = L::sllv(_mm256_or_si256(lead, _mm256_and_si256(rel, mant_mask)), nr);
            // An invalid token's value is 0, as in the serial loop (its
            // base is 0): the elements written before the verdict are its.
            const __m256i vbase = _mm256_and_si256(_mm256_blendv_epi8(tok, big_base, big), valid);

            // Each field's bit position is a prefix sum of the counts.
            const __m256i ends = L::prefix_sum(nr);
            const __m256i starts = L::add(L::sub(ends, nr), L::set1(pos & 7));
            const __m256i word = L::window_words(window(pos >> 3), L::template srli<3>(starts));
            const __m256i raw = _mm256_and_si256(L::srlv(word, _mm256_and_si256(starts, seven)),
                                                 L::sub(L::sllv(one, nr), one));
            const __m256i v = _mm256_or_si256(vbase, raw);
            // Unzigzag; of a 64-bit lane only the low 32 bits are kept
            // (sums mod 2^32).
            const __m256i diff = _mm256_xor_si256(L::template srli<1>(v), L::sub(zero, _mm256_and_si256(v, one)));
            const __m256i vprev = L::set1(prev);
            __m256i u;
            if constexpr (kPred == Predictor::lane_previous) {
                u = L::add(vprev, L::prefix_sum(diff));
            } else if constexpr (kPred == Predictor::center_repeat) {
                u = copy_repeats<L>(L::add(vcenter, diff), repeat, vprev);
            } else {
                u = L::add(vcenter, diff);
            }
            prev = static_cast<std::uint32_t>(L::last(u));
            pos += L::last(ends);
            store_elements<U>(dst + t * sizeof(U), u);
        }
        for (; t < lane_len; ++t) {  // reconstruct_hybrid_serial's step
            const unsigned tk = src[t];
            all_ok &= tok_ok[tk];
            const unsigned nr = nraw[tk];
            const std::uint64_t byte = pos >> 3;
            std::uint64_t word = 0;
            if (byte + 8 <= len) {
                word = detail::load_le<std::uint64_t>(bits + byte);
            } else {
                for (std::uint64_t k = byte; k < len; ++k) word |= std::uint64_t{bits[k]} << (8 * (k - byte));
            }
            const std::uint32_t v = base[tk] | (static_cast<std::uint32_t>(word >> (pos & 7)) & ((1u << nr) - 1u));
            pos += nr;
            const std::uint32_t diff = (v >> 1) ^ (0u - (v & 1u));
            std::uint32_t u = (kPred == Predictor::lane_previous ? prev : raw_center) + diff;
            if (kPred == Predictor::center_repeat) u = tk == count ? prev : u;
            prev = u;
            detail::store_le<U>(dst + t * sizeof(U), static_cast<U>(u));
        }
    }
    const bool vector_ok = _mm256_movemask_epi8(ok_all) == -1;
    const std::uint64_t end_bits = 8 * static_cast<std::uint64_t>(len);
    return all_ok != 0 && vector_ok && pos <= end_bits && (pos + 7) / 8 == len;
}

template <typename U>
bool reconstruct_with(const HybridReconstructArgs& a) {
    return detail::with_predictor(a.pred, [&](auto p) { return reconstruct<U, decltype(p)::value>(a); });
}

}  // namespace

bool reconstruct_hybrid_avx2(const HybridReconstructArgs& a) {
    switch (a.esize) {
        case 1: return reconstruct_with<std::uint8_t>(a);
        case 2: return reconstruct_with<std::uint16_t>(a);
        default: return reconstruct_with<std::uint32_t>(a);
    }
}

}  // namespace mans::cpu

#if defined(__clang__)
#pragma clang attribute pop
#else
#pragma GCC pop_options
#endif
