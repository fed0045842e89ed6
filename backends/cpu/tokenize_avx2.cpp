// tokenize_avx2.cpp - tokenize_hybrid_serial (mapping/hybrid_tokens.hpp)
// for elements of 8, 16 and 32 bits, in two passes over chunks of a lane:
//   1. eight elements at a time: the difference to the reference (the
//      center or the previous element), its zigzag value v, the token and
//      the raw-bit count, and v's raw bits; the token's exponent is that
//      of v | 2^s as a float (exact below 2^24; below 2^16 here), the
//      count of leading zeros AVX2 lacks;
//   2. in element order: the token into its interleaved slot and the raw
//      bits appended to the bit stream, the serial loop of
//      tokenize_hybrid_serial (with BMI2's shifts). For 8- and 16-bit
//      elements (raw fields of at most 15 bits) pass 1 does this itself
//      for its eight elements: the fields joined into two strings of at
//      most 60 bits by 64-bit shifts, two appends instead of eight.
// Pass 1 was most of the tokenizer's instructions; the bytes are the
// same (tests/test_hd_algo.cpp compares them for every split and
// predictor, u8, i8, u16, i16, u32 and i32).
#include "tokenize_avx2.hpp"

#include <immintrin.h>

#include <cstdint>

#include "core/byte_io.hpp"

// AVX2 and BMI2 for the functions defined below only (rans_avx2.cpp says
// why not -mavx2 for the file); the header code above stays portable.
#if defined(__clang__)
#pragma clang attribute push(__attribute__((target("avx2,bmi2"))), apply_to = function)
#else
#pragma GCC push_options
#pragma GCC target("avx2,bmi2")
#endif

namespace mans::cpu {

using detail::Elem;
using detail::load_le;
using detail::HybridTokenizeArgs;
using detail::Predictor;

namespace {

constexpr std::size_t kChunk = 512;  // elements of a lane per pass

template <typename U>
__m256i load8(const std::uint8_t* p) {
    if constexpr (sizeof(U) == 1)
        return _mm256_cvtepu8_epi32(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(p)));
    else if constexpr (sizeof(U) == 2)
        return _mm256_cvtepu16_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
    else
        return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p));
}

// floor(log2(x)) of each lane (x > 0) from a float's exponent.
template <unsigned B>
__m256i floor_log2(__m256i x) {
    const __m256i bias = _mm256_set1_epi32(127);
    if constexpr (B <= 16) {  // x < 2^17: exact as a float
        const __m256i f = _mm256_castps_si256(_mm256_cvtepi32_ps(x));
        return _mm256_sub_epi32(_mm256_srli_epi32(f, 23), bias);
    } else {  // the upper 16 bits when there are any (+16), else the lower
        const __m256i hi = _mm256_srli_epi32(x, 16);
        const __m256i has_hi = _mm256_xor_si256(_mm256_cmpeq_epi32(hi, _mm256_setzero_si256()), _mm256_set1_epi32(-1));
        const __m256i y = _mm256_blendv_epi8(x, hi, has_hi);
        const __m256i f = _mm256_castps_si256(_mm256_cvtepi32_ps(y));
        return _mm256_add_epi32(_mm256_sub_epi32(_mm256_srli_epi32(f, 23), bias),
                                _mm256_and_si256(has_hi, _mm256_set1_epi32(16)));
    }
}

// Eight raw fields of at most 15 bits (32-bit lanes, `nr` bits each) as
// two bit strings in element order: elements 0-3 in out[0], 4-7 in out[1],
// of out_bits[0] and out_bits[1] (at most 60) bits.
inline void join_fields(__m256i bits, __m256i nr, std::uint64_t out[2], unsigned out_bits[2]) {
    const __m256i low32 = _mm256_set1_epi64x(0xFFFFFFFF);
    // Pairs, in 64-bit lanes: even | odd << n_even.
    const __m256i n_even = _mm256_and_si256(nr, low32);
    const __m256i pairs =
        _mm256_or_si256(_mm256_and_si256(bits, low32), _mm256_sllv_epi64(_mm256_srli_epi64(bits, 32), n_even));
    const __m256i pair_bits = _mm256_add_epi64(n_even, _mm256_srli_epi64(nr, 32));
    // Fours, in the low 64-bit lane of each half: pair 0 | pair 1 << its bits.
    const __m256i fours = _mm256_or_si256(
        pairs, _mm256_sllv_epi64(_mm256_unpackhi_epi64(pairs, pairs), _mm256_unpacklo_epi64(pair_bits, pair_bits)));
    const __m256i four_bits = _mm256_add_epi64(pair_bits, _mm256_unpackhi_epi64(pair_bits, pair_bits));
    out[0] = static_cast<std::uint64_t>(_mm256_extract_epi64(fours, 0));
    out[1] = static_cast<std::uint64_t>(_mm256_extract_epi64(fours, 2));
    out_bits[0] = static_cast<unsigned>(_mm256_extract_epi64(four_bits, 0));
    out_bits[1] = static_cast<unsigned>(_mm256_extract_epi64(four_bits, 2));
}

template <typename U, Predictor kPred>
std::size_t tokenize(const HybridTokenizeArgs& a) {
    constexpr unsigned B = Elem<U>::B;
    const detail::HybridStep32<U, kPred> step(a.split, a.center, a.flip);  // a chunk's tail
    const detail::HybridTokens32& hyb = step.hyb;
    const std::uint32_t mask = static_cast<std::uint32_t>(Elem<U>::mask);
    const std::uint32_t raw_center = step.raw_center;

    const __m256i zero = _mm256_setzero_si256(), one = _mm256_set1_epi32(1), ones = _mm256_set1_epi32(-1);
    const __m256i v_mask = _mm256_set1_epi32(static_cast<int>(mask));
    const __m256i v_center = _mm256_set1_epi32(static_cast<int>(raw_center));
    const __m256i direct_end = _mm256_set1_epi32(static_cast<int>(hyb.direct_end));
    const __m256i k_off = _mm256_set1_epi32(static_cast<int>(hyb.k_off));
    const __m256i v_m = _mm256_set1_epi32(static_cast<int>(hyb.m));
    const __m128i m_count = _mm_cvtsi32_si128(static_cast<int>(hyb.m));
    const __m256i v_32 = _mm256_set1_epi32(32);
    const __m256i v_repeat = _mm256_set1_epi32(static_cast<int>(step.repeat_tok));
    const __m256i to_prev = _mm256_setr_epi32(7, 0, 1, 2, 3, 4, 5, 6), lane7 = _mm256_set1_epi32(7);

    alignas(32) std::uint32_t raw[kChunk];
    alignas(16) std::uint8_t tok[kChunk + 8], nraw[kChunk + 8];
    const unsigned lanes = a.lay.lanes;
    detail::HostBitPacker packer(a.bits);
    for (unsigned j = 0; j < lanes; ++j) {
        const std::size_t len = a.lay.lane_len(j);
        const std::uint8_t* src = a.x + static_cast<std::size_t>(j) * a.lay.seg * sizeof(U);
        std::uint8_t* tok_out = a.tokens + j;
        std::uint32_t prev = raw_center;  // a lane's first element refers to the center
        for (std::size_t c0 = 0; c0 < len; c0 += kChunk) {
            const std::size_t cn = len - c0 < kChunk ? len - c0 : kChunk;
            const std::uint8_t* s = src + c0 * sizeof(U);
            // Pass 1. carry's lanes hold the element before the vector.
            __m256i carry = _mm256_set1_epi32(static_cast<int>(prev));
            std::size_t t = 0;
            for (; t + 8 <= cn; t += 8) {
                const __m256i u = load8<U>(s + t * sizeof(U));
                const __m256i p = _mm256_blend_epi32(_mm256_permutevar8x32_epi32(u, to_prev), carry, 0x01);
                carry = _mm256_permutevar8x32_epi32(u, lane7);
                const __m256i d = _mm256_sub_epi32(u, kPred == Predictor::lane_previous ? p : v_center);
                const __m256i neg = _mm256_and_si256(_mm256_srli_epi32(d, B - 1), one);
                const __m256i v =
                    _mm256_and_si256(_mm256_xor_si256(_mm256_slli_epi32(d, 1), _mm256_sub_epi32(zero, neg)), v_mask);
                const __m256i e = floor_log2<B>(_mm256_or_si256(v, direct_end));  // bit_length(v | 2^s) - 1
                // v >= 2^s, unsigned (v may be 2^31 or more)
                const __m256i big = _mm256_cmpeq_epi32(_mm256_max_epu32(v, direct_end), v);
                const __m256i shift = _mm256_and_si256(_mm256_sub_epi32(e, v_m), big);
                __m256i tk = _mm256_add_epi32(_mm256_srlv_epi32(v, shift),
                                              _mm256_and_si256(_mm256_add_epi32(_mm256_sll_epi32(e, m_count), k_off), big));
                __m256i nr = shift;
                if constexpr (kPred == Predictor::center_repeat) {
                    const __m256i rep = _mm256_andnot_si256(_mm256_cmpeq_epi32(shift, zero), _mm256_cmpeq_epi32(u, p));
                    tk = _mm256_blendv_epi8(tk, v_repeat, rep);
                    nr = _mm256_andnot_si256(rep, nr);
                }
                // v's low nr bits (a count of 32 shifts everything out)
                const __m256i bits = _mm256_and_si256(v, _mm256_srlv_epi32(ones, _mm256_sub_epi32(v_32, nr)));
                // tokens (< 256) and counts (< 32) to bytes: tk0-3 nr0-3 | tk4-7 nr4-7
                const __m256i words = _mm256_permute4x64_epi64(_mm256_packus_epi32(tk, nr), 0xD8);
                const __m128i bytes =
                    _mm_packus_epi16(_mm256_castsi256_si128(words), _mm256_extracti128_si256(words, 1));
                if constexpr (B <= 16) {
                    // Fields of at most 15 bits: joined in pairs, then in
                    // fours (at most 60 bits), two appends per 8 elements;
                    // the tokens straight to their interleaved slots.
                    std::uint64_t toks = static_cast<std::uint64_t>(_mm_cvtsi128_si64(bytes));
                    for (unsigned k = 0; k < 8; ++k, toks >>= 8)
                        tok_out[(c0 + t + k) * lanes] = static_cast<std::uint8_t>(toks);
                    std::uint64_t joined[2];
                    unsigned joined_bits[2];
                    join_fields(bits, nr, joined, joined_bits);
                    packer.put_wide(joined[0], joined_bits[0]);
                    packer.put_wide(joined[1], joined_bits[1]);
                } else {
                    _mm256_store_si256(reinterpret_cast<__m256i*>(raw + t), bits);
                    _mm_storel_epi64(reinterpret_cast<__m128i*>(tok + t), bytes);
                    _mm_storel_epi64(reinterpret_cast<__m128i*>(nraw + t), _mm_srli_si128(bytes, 8));
                }
            }
            std::size_t emitted = 0;  // elements of this chunk already in the tokens and bits
            if constexpr (B <= 16) emitted = t;
            if (t) prev = static_cast<std::uint32_t>(load_le<U>(s + (t - 1) * sizeof(U)));
            for (; t < cn; ++t) {  // the chunk's last elements, one at a time
                const std::uint32_t u = static_cast<std::uint32_t>(load_le<U>(s + t * sizeof(U)));
                unsigned nr = 0;
                tok[t] = static_cast<std::uint8_t>(step(u, prev, &raw[t], &nr));
                nraw[t] = static_cast<std::uint8_t>(nr);
                prev = u;
            }
            // Pass 2: in element order, as tokenize_hybrid_serial.
            for (std::size_t k = emitted; k < cn; ++k) {
                tok_out[(c0 + k) * lanes] = tok[k];
                packer.put(raw[k], nraw[k]);
            }
        }
    }
    return static_cast<std::size_t>(packer.finish() - a.bits);
}

template <typename U>
std::size_t tokenize_as(const HybridTokenizeArgs& a) {
    switch (a.pred) {
        case Predictor::center: return tokenize<U, Predictor::center>(a);
        case Predictor::lane_previous: return tokenize<U, Predictor::lane_previous>(a);
        case Predictor::center_repeat: return tokenize<U, Predictor::center_repeat>(a);
    }
    return 0;
}

}  // namespace

std::size_t tokenize_hybrid_avx2(const HybridTokenizeArgs& a) {
    switch (a.esize) {
        case 1: return tokenize_as<std::uint8_t>(a);
        case 2: return tokenize_as<std::uint16_t>(a);
        default: return tokenize_as<std::uint32_t>(a);
    }
}

}  // namespace mans::cpu

#if defined(__clang__)
#pragma clang attribute pop
#else
#pragma GCC pop_options
#endif
