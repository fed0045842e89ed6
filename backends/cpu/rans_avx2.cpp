// rans_avx2.cpp - AVX2 versions of the rANS lane loops.
//
// Eight lanes per register; a stream with 8, 16 or 32 lanes runs its "full"
// steps (every lane active) here and the ragged tail through the scalar
// reference, so the bytes are those of rans_scalar.cpp by construction.
// Word order: the decoder expands the next popcount(mask) words into the
// lanes that need them (ascending); the encoder compresses the emitted words
// of a group into ascending lane order just below the write cursor.
#include "rans_avx2.hpp"

#include <immintrin.h>

#include <array>
#include <cstdint>

// AVX2 for the functions defined below only, not with -mavx2 for the whole
// file: the headers' inline functions and templates would then be emitted
// here with AVX2 code under the names their portable copies have in other
// files, and the linker may keep either for every caller. Defined before
// this line, they stay portable (and are still inlined into the kernels).
// Clang ignores GCC's target pragma and has its own.
#if defined(__clang__)
#pragma clang attribute push(__attribute__((target("avx2"))), apply_to = function)
#else
#pragma GCC push_options
#pragma GCC target("avx2")
#endif

namespace mans::cpu {

using detail::EncSym;
using detail::kStateLow;
using detail::RansDecodeArgs;
using detail::RansEncodeArgs;

namespace {

struct PermTables {
    // expand[m][k]: index of the word for lane k when lanes `m` refill.
    alignas(32) std::array<std::array<std::uint32_t, 8>, 256> expand;
    // to_top[m]: moves the lanes of `m` (ascending) to the top slots.
    alignas(32) std::array<std::array<std::uint32_t, 8>, 256> to_top;
    PermTables() {
        for (unsigned m = 0; m < 256; ++m) {
            unsigned cnt = 0;
            for (unsigned k = 0; k < 8; ++k) {
                expand[m][k] = cnt;
                if (m >> k & 1) ++cnt;
            }
            unsigned r = 0;
            to_top[m].fill(0);
            for (unsigned k = 0; k < 8; ++k)
                if (m >> k & 1) to_top[m][8 - cnt + r++] = k;
        }
    }
};

const PermTables& perm_tables() {
    static const PermTables t;
    return t;
}

inline __m256i load_perm(const std::array<std::uint32_t, 8>& p) {
    return _mm256_load_si256(reinterpret_cast<const __m256i*>(p.data()));
}

// Low byte of each 32-bit lane, as 8 consecutive bytes.
inline std::uint64_t pack_low_bytes(__m256i v) {
    const __m256i shuf = _mm256_setr_epi8(0, 4, 8, 12, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1,
                                          0, 4, 8, 12, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1);
    const __m256i b = _mm256_shuffle_epi8(v, shuf);
    const std::uint32_t lo = static_cast<std::uint32_t>(_mm_cvtsi128_si32(_mm256_castsi256_si128(b)));
    const std::uint32_t hi = static_cast<std::uint32_t>(_mm_cvtsi128_si32(_mm256_extracti128_si256(b, 1)));
    return lo | (static_cast<std::uint64_t>(hi) << 32);
}

// Low 16 bits of each 32-bit lane, as 8 consecutive u16.
inline __m128i pack_low_words(__m256i v) {
    const __m256i shuf = _mm256_setr_epi8(0, 1, 4, 5, 8, 9, 12, 13, -1, -1, -1, -1, -1, -1, -1, -1,
                                          0, 1, 4, 5, 8, 9, 12, 13, -1, -1, -1, -1, -1, -1, -1, -1);
    const __m256i b = _mm256_permute4x64_epi64(_mm256_shuffle_epi8(v, shuf), 0x08);
    return _mm256_castsi256_si128(b);
}

// High 32 bits of the 32x32 products x * r, per lane.
inline __m256i mulhi_epu32(__m256i x, __m256i r) {
    const __m256i even = _mm256_srli_epi64(_mm256_mul_epu32(x, r), 32);
    const __m256i odd = _mm256_mul_epu32(_mm256_srli_epi64(x, 32), _mm256_srli_epi64(r, 32));
    return _mm256_blend_epi32(even, odd, 0xaa);
}

// Context index of 8 previous tokens (one per 32-bit lane): their bit length
// capped at 7 and at K-1 (token_class8). Byte shuffles instead of a table
// gather: gathers are slow on several x86 cores.
inline __m256i context_of(__m256i prev, __m256i max_ctx) {
    // Bit length of the low nibble, and 4 + that of the high one (capped
    // at 7) where it is not zero: byte lookups (the lanes' upper bytes are
    // zero and look up 0).
    const __m256i low_len = _mm256_setr_epi8(0, 1, 2, 2, 3, 3, 3, 3, 4, 4, 4, 4, 4, 4, 4, 4,  //
                                             0, 1, 2, 2, 3, 3, 3, 3, 4, 4, 4, 4, 4, 4, 4, 4);
    const __m256i high_len = _mm256_setr_epi8(0, 5, 6, 6, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7,  //
                                              0, 5, 6, 6, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7);
    const __m256i nibble = _mm256_set1_epi8(0x0f);
    const __m256i c = _mm256_max_epu8(_mm256_shuffle_epi8(low_len, _mm256_and_si256(prev, nibble)),
                                      _mm256_shuffle_epi8(high_len, _mm256_and_si256(_mm256_srli_epi32(prev, 4), nibble)));
    return _mm256_min_epi32(c, max_ctx);
}

// Eight table entries by scalar loads: AVX2's gather is microcoded and
// several times slower on many x86 cores (on this project's Ice Lake VM,
// 22 cycles a gather against 11 for eight loads, and decoding u16 ran 17 %
// faster without it; tests compare the kernels with the scalar ones).
inline __m256i lookup8(const int* table, __m256i idx) {
    alignas(32) std::uint32_t k[8];
    _mm256_store_si256(reinterpret_cast<__m256i*>(k), idx);
    return _mm256_setr_epi32(table[k[0]], table[k[1]], table[k[2]], table[k[3]], table[k[4]], table[k[5]],
                             table[k[6]], table[k[7]]);
}

// The encoder's entries (x_max, rcp, bias, cs: 16 bytes each) of eight
// symbols, one 16-byte load each and a 4 x 4 transpose in each half,
// instead of four gathers (lookup8 says why).
inline void load_entries(const int* table, __m256i idx, __m256i* x_max, __m256i* rcp, __m256i* bias,
                         __m256i* cs) {
    alignas(32) std::uint32_t k[8];
    _mm256_store_si256(reinterpret_cast<__m256i*>(k), idx);
    const auto entry = [&](unsigned i) { return _mm_loadu_si128(reinterpret_cast<const __m128i*>(table + k[i])); };
    // Lanes i and i + 4 in the two halves.
    const __m256i v0 = _mm256_inserti128_si256(_mm256_castsi128_si256(entry(0)), entry(4), 1);
    const __m256i v1 = _mm256_inserti128_si256(_mm256_castsi128_si256(entry(1)), entry(5), 1);
    const __m256i v2 = _mm256_inserti128_si256(_mm256_castsi128_si256(entry(2)), entry(6), 1);
    const __m256i v3 = _mm256_inserti128_si256(_mm256_castsi128_si256(entry(3)), entry(7), 1);
    const __m256i t0 = _mm256_unpacklo_epi32(v0, v1), t1 = _mm256_unpacklo_epi32(v2, v3);
    const __m256i t2 = _mm256_unpackhi_epi32(v0, v1), t3 = _mm256_unpackhi_epi32(v2, v3);
    *x_max = _mm256_unpacklo_epi64(t0, t1);
    *rcp = _mm256_unpackhi_epi64(t0, t1);
    *bias = _mm256_unpacklo_epi64(t2, t3);
    *cs = _mm256_unpackhi_epi64(t2, t3);
}

// The full steps of a stream of 8 * kGroups lanes; the lane states stay in
// registers (with a run-time group count the compiler kept them in memory,
// a store and a load in every step's dependency chain).
template <unsigned kGroups>
bool rans_decode_groups(const RansDecodeArgs& a) {
    constexpr unsigned lanes = 8 * kGroups;
    const PermTables& pt = perm_tables();
    const std::size_t full = a.layout.full_steps();

    __m256i x[kGroups];
    for (unsigned g = 0; g < kGroups; ++g)
        x[g] = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(a.states + 8 * g));
    const __m256i mask = _mm256_set1_epi32(static_cast<int>((1u << a.prob_bits) - 1));
    const __m256i low = _mm256_set1_epi32(static_cast<int>(kStateLow));
    const __m256i byte_mask = _mm256_set1_epi32(0xff);
    const __m256i freq_mask = _mm256_set1_epi32(0xfff);
    const __m256i one = _mm256_set1_epi32(1);
    const __m128i pbits = _mm_cvtsi32_si128(static_cast<int>(a.prob_bits));
    const int* table = reinterpret_cast<const int*>(a.table);
    const __m256i max_ctx = _mm256_set1_epi32(static_cast<int>(a.contexts) - 1);
    const bool contexts = a.contexts > 1;
    std::size_t rd = 0;

    for (std::size_t t = 0; t < full; ++t) {
        std::uint8_t* row = a.out + t * lanes;
        __m256i e[kGroups];
#pragma GCC unroll 4
        for (unsigned g = 0; g < kGroups; ++g) {
            __m256i idx = _mm256_and_si256(x[g], mask);
            if (t && contexts) {
                const __m256i prev = _mm256_cvtepu8_epi32(
                    _mm_loadl_epi64(reinterpret_cast<const __m128i*>(row - lanes + 8 * g)));
                idx = _mm256_add_epi32(idx, _mm256_sll_epi32(context_of(prev, max_ctx), pbits));
            }
            e[g] = lookup8(table, idx);
        }
#pragma GCC unroll 4
        for (unsigned g = 0; g < kGroups; ++g) {
            const std::uint64_t syms = pack_low_bytes(_mm256_and_si256(e[g], byte_mask));
            __builtin_memcpy(row + 8 * g, &syms, 8);
            const __m256i freq = _mm256_add_epi32(_mm256_and_si256(_mm256_srli_epi32(e[g], 8), freq_mask), one);
            const __m256i bias = _mm256_srli_epi32(e[g], 20);
            __m256i xv = _mm256_add_epi32(_mm256_mullo_epi32(freq, _mm256_srl_epi32(x[g], pbits)), bias);
            // States stay below 2^31, so the signed compare is exact.
            const __m256i need = _mm256_cmpgt_epi32(low, xv);
            const unsigned m = static_cast<unsigned>(_mm256_movemask_ps(_mm256_castsi256_ps(need)));
            const __m256i words =
                _mm256_cvtepu16_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(a.words + rd)));
            const __m256i w = _mm256_permutevar8x32_epi32(words, load_perm(pt.expand[m]));
            x[g] = _mm256_blendv_epi8(xv, _mm256_or_si256(_mm256_slli_epi32(xv, 16), w), need);
            rd += static_cast<unsigned>(__builtin_popcount(m));
        }
        if (rd > a.nwords) return false;
    }
    std::uint32_t xs[detail::kMaxLanes];
    for (unsigned g = 0; g < kGroups; ++g) _mm256_storeu_si256(reinterpret_cast<__m256i*>(xs + 8 * g), x[g]);
    if (!detail::rans_decode_steps_scalar(a, full, a.layout.seg, xs, &rd)) return false;
    return detail::rans_decode_finished(a, xs, rd);
}

}  // namespace

bool rans_decode_avx2(const RansDecodeArgs& a) {
    switch (a.layout.lanes) {
        case 8: return rans_decode_groups<1>(a);
        case 16: return rans_decode_groups<2>(a);
        case 32: return rans_decode_groups<4>(a);
        default: return detail::rans_decode_scalar(a);
    }
}

void rans_encode_avx2(RansEncodeArgs& a) {
    const unsigned lanes = a.layout.lanes;
    if (lanes < 8) return detail::rans_encode_scalar(a);
    const unsigned groups = lanes / 8;
    const PermTables& pt = perm_tables();
    const std::size_t full = a.layout.full_steps();

    std::uint32_t xs[detail::kMaxLanes];
    for (unsigned j = 0; j < lanes; ++j) xs[j] = kStateLow;
    std::uint16_t* w = a.words_end;
    // The ragged tail (highest steps) first, as the scalar encoder would.
    detail::rans_encode_steps_scalar(a, full, a.layout.seg, xs, &w);

    const __m256i max_ctx = _mm256_set1_epi32(static_cast<int>(a.contexts) - 1);
    __m256i x[4];
    for (unsigned g = 0; g < groups; ++g) x[g] = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(xs + 8 * g));
    const int* table = reinterpret_cast<const int*>(a.table);
    const __m256i low16 = _mm256_set1_epi32(0xffff);

    for (std::size_t t = full; t-- > 0;) {
        const std::uint8_t* row = a.tokens + t * lanes;
        for (unsigned g = groups; g-- > 0;) {
            __m256i idx = _mm256_slli_epi32(
                _mm256_cvtepu8_epi32(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(row + 8 * g))), 2);
            if (t && a.contexts > 1) {
                const __m256i prev = _mm256_cvtepu8_epi32(
                    _mm_loadl_epi64(reinterpret_cast<const __m128i*>(row - lanes + 8 * g)));
                // Entry offset of the context's table: ctx * 256 entries * 4 ints.
                idx = _mm256_add_epi32(idx, _mm256_slli_epi32(context_of(prev, max_ctx), 10));
            }
            __m256i x_max, rcp, bias, cs;
            load_entries(table, idx, &x_max, &rcp, &bias, &cs);
            __m256i xv = x[g];
            // x >= x_max, unsigned (x_max may be 2^31).
            const __m256i out = _mm256_cmpeq_epi32(_mm256_max_epu32(xv, x_max), xv);
            const unsigned m = static_cast<unsigned>(_mm256_movemask_ps(_mm256_castsi256_ps(out)));
            const unsigned cnt = static_cast<unsigned>(__builtin_popcount(m));
            // Emitted words, ascending lane order, end exactly at w.
            const __m256i top = _mm256_permutevar8x32_epi32(xv, load_perm(pt.to_top[m]));
            _mm_storeu_si128(reinterpret_cast<__m128i*>(w - 8), pack_low_words(top));
            w -= cnt;
            xv = _mm256_blendv_epi8(xv, _mm256_srli_epi32(xv, 16), out);
            const __m256i q = _mm256_srlv_epi32(mulhi_epu32(xv, rcp), _mm256_srli_epi32(cs, 16));
            xv = _mm256_add_epi32(_mm256_add_epi32(xv, bias), _mm256_mullo_epi32(q, _mm256_and_si256(cs, low16)));
            x[g] = xv;
        }
    }
    for (unsigned g = 0; g < groups; ++g) _mm256_storeu_si256(reinterpret_cast<__m256i*>(a.states + 8 * g), x[g]);
    a.words_first = w;
    a.ok = true;
}

}  // namespace mans::cpu

#if defined(__clang__)
#pragma clang attribute pop
#else
#pragma GCC pop_options
#endif
