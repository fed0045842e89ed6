// prism_avx2.cpp - PRISM's CPU kernels with AVX2 (prism/cpu_kernels.hpp):
// the same results as the portable forms, eight codes at a time.
//
// truncation_stats: for each number d of dropped digits, the largest
// |error| and the exact sum of squared errors over a chunk. An error's
// magnitude a is at most 2^31 (AVX2's abs of INT32_MIN is 2^31 unsigned,
// as the portable form's cast), so a square is at most 2^62 and two are
// at most 2^63. Each 64-bit lane adds two squares to an accumulator kept
// below 2^63 (its top bit moves into a count of 2^63s after every add),
// so nothing overflows and the lanes' sums are exact; the exact total is
// then the same SquareSum as the portable form's, whatever the order.
//
// The mask passes (mask_hd.hpp) over eight points at a time: not finite is
// an all-ones exponent, a fill value is a match of the bits, and the range
// of the values kept is a vector minimum and maximum with the others
// replaced by infinities. Minimum and maximum choose between -0 and +0
// differently from the portable loop, which keeps the first of equal
// values: so when a range's minimum or maximum is zero, the first zero of
// the range (in point order) gives its sign.
#include "prism_avx2.hpp"

#ifdef MANS_HAVE_AVX2_KERNELS
#include <immintrin.h>

#include <cfloat>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>

#include "prism/geometry.hpp"  // UnalignedValues
#include "prism/plane_split_hd.hpp"  // plane_word_count

// AVX2 for the functions defined below only (rans_avx2.cpp says why not
// -mavx2 for the file); the header code above stays portable.
#if defined(__clang__)
#pragma clang attribute push(__attribute__((target("avx2"))), apply_to = function)
#else
#pragma GCC push_options
#pragma GCC target("avx2")
#endif

namespace mans::cpu {
namespace {

namespace dp = detail::prism;
using detail::prism::UnalignedValues;

// |error| of each word's dropped digits (low_mask) for eight words.
template <dp::Coding kCoding>
inline __m256i error_magnitudes(__m256i w, __m256i low_mask) {
    const __m256i dropped = _mm256_and_si256(w, low_mask);
    if (kCoding == dp::Coding::sign_magnitude) return dropped;  // low_mask has no sign bit
    const __m256i nega = _mm256_set1_epi32(static_cast<int>(dp::kNegaMask));
    return _mm256_abs_epi32(_mm256_sub_epi32(_mm256_xor_si256(dropped, nega), nega));  // from_negabinary
}

template <dp::Coding kCoding>
void truncation_stats_lanes(const std::uint32_t* words, std::uint64_t n, unsigned planes, dp::TruncationPartial* out) {
    out[0] = dp::TruncationPartial{};
    const std::uint64_t vec_end = n & ~std::uint64_t{7};
    const __m256i below_2_63 = _mm256_set1_epi64x(INT64_MAX);
    for (unsigned d = 1; d <= planes; ++d) {
        // The digits a reader misses when it keeps planes - d of them; for
        // sign-magnitude never the sign, and d = planes drops |q| whole.
        std::uint32_t mask = d >= 32 ? 0xffffffffu : (1u << d) - 1u;
        if (kCoding == dp::Coding::sign_magnitude) mask &= 0x7fffffffu;
        const __m256i low_mask = _mm256_set1_epi32(static_cast<int>(mask));
        __m256i max_err = _mm256_setzero_si256(), sum = _mm256_setzero_si256(), tops = _mm256_setzero_si256();
        for (std::uint64_t j = 0; j < vec_end; j += 8) {
            const __m256i w = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(words + j));
            const __m256i a = error_magnitudes<kCoding>(w, low_mask);
            max_err = _mm256_max_epu32(max_err, a);
            const __m256i odd = _mm256_srli_epi64(a, 32);
            sum = _mm256_add_epi64(sum, _mm256_add_epi64(_mm256_mul_epu32(a, a), _mm256_mul_epu32(odd, odd)));
            tops = _mm256_add_epi64(tops, _mm256_srli_epi64(sum, 63));
            sum = _mm256_and_si256(sum, below_2_63);
        }
        alignas(32) std::uint32_t m[8];
        alignas(32) std::uint64_t s[4], t[4];
        _mm256_store_si256(reinterpret_cast<__m256i*>(m), max_err);
        _mm256_store_si256(reinterpret_cast<__m256i*>(s), sum);
        _mm256_store_si256(reinterpret_cast<__m256i*>(t), tops);
        std::uint32_t best = 0;
        for (std::uint32_t v : m) best = v > best ? v : best;
        dp::SquareSum total;
        std::uint64_t count_2_63 = 0;
        for (unsigned i = 0; i < 4; ++i) total.add(s[i]), count_2_63 += t[i];
        total.hi += count_2_63 >> 1;
        if (count_2_63 & 1) total.add(std::uint64_t{1} << 63);
        for (std::uint64_t j = vec_end; j < n; ++j) {
            std::uint32_t a = words[j] & mask;
            if (kCoding == dp::Coding::negabinary) {
                const std::int32_t e = dp::from_negabinary(a);
                a = static_cast<std::uint32_t>(e < 0 ? -static_cast<std::int64_t>(e) : e);
            }
            best = a > best ? a : best;
            total.add(static_cast<std::uint64_t>(a) * a);
        }
        out[d].max_err = best;
        out[d].sum_sq = total;
    }
}

void truncation_stats_avx2(const std::int32_t*, const std::uint32_t* words, std::uint64_t n, unsigned planes,
                           dp::Coding c, dp::TruncationPartial* out) {
    if (c == dp::Coding::negabinary) truncation_stats_lanes<dp::Coding::negabinary>(words, n, planes, out);
    else truncation_stats_lanes<dp::Coding::sign_magnitude>(words, n, planes, out);
}


// ---------------------------------------------------------------- mask passes

// The lanes of one AVX2 vector of T: eight floats or four doubles.
template <typename T>
struct Lanes;

template <>
struct Lanes<float> {
    using V = __m256;
    static constexpr unsigned kCount = 8;
    static V load(const std::uint8_t* p) { return _mm256_loadu_ps(reinterpret_cast<const float*>(p)); }
    static V splat(float v) { return _mm256_set1_ps(v); }
    static __m256i not_finite(V v) {
        const __m256i exponent = _mm256_set1_epi32(0x7f800000);
        return _mm256_cmpeq_epi32(_mm256_and_si256(_mm256_castps_si256(v), exponent), exponent);
    }
    static __m256i same_bits(V v, float f) {
        std::uint32_t u;
        std::memcpy(&u, &f, sizeof u);
        return _mm256_cmpeq_epi32(_mm256_castps_si256(v), _mm256_set1_epi32(static_cast<int>(u)));
    }
    static __m256i equal(V a, V b) { return _mm256_castps_si256(_mm256_cmp_ps(a, b, _CMP_EQ_OQ)); }
    static V where(__m256i m, V if_set, V otherwise) { return _mm256_blendv_ps(otherwise, if_set, _mm256_castsi256_ps(m)); }
    static V min(V a, V b) { return _mm256_min_ps(a, b); }
    static V max(V a, V b) { return _mm256_max_ps(a, b); }
    static V abs(V v) { return _mm256_and_ps(v, _mm256_castsi256_ps(_mm256_set1_epi32(0x7fffffff))); }
    static unsigned bits(__m256i m) { return static_cast<unsigned>(_mm256_movemask_ps(_mm256_castsi256_ps(m))); }
    static __m256i count(__m256i acc, __m256i m) { return _mm256_sub_epi32(acc, m); }  // m's lanes are 0 or -1
    static std::uint64_t total(__m256i acc) {
        alignas(32) std::uint32_t c[8];
        _mm256_store_si256(reinterpret_cast<__m256i*>(c), acc);
        std::uint64_t t = 0;
        for (std::uint32_t v : c) t += v;
        return t;
    }
    static void store(V v, float* out) { _mm256_storeu_ps(out, v); }
};

template <>
struct Lanes<double> {
    using V = __m256d;
    static constexpr unsigned kCount = 4;
    static V load(const std::uint8_t* p) { return _mm256_loadu_pd(reinterpret_cast<const double*>(p)); }
    static V splat(double v) { return _mm256_set1_pd(v); }
    static __m256i not_finite(V v) {
        const __m256i exponent = _mm256_set1_epi64x(0x7ff0000000000000);
        return _mm256_cmpeq_epi64(_mm256_and_si256(_mm256_castpd_si256(v), exponent), exponent);
    }
    static __m256i same_bits(V v, double f) {
        std::uint64_t u;
        std::memcpy(&u, &f, sizeof u);
        return _mm256_cmpeq_epi64(_mm256_castpd_si256(v), _mm256_set1_epi64x(static_cast<long long>(u)));
    }
    static __m256i equal(V a, V b) { return _mm256_castpd_si256(_mm256_cmp_pd(a, b, _CMP_EQ_OQ)); }
    static V where(__m256i m, V if_set, V otherwise) { return _mm256_blendv_pd(otherwise, if_set, _mm256_castsi256_pd(m)); }
    static V min(V a, V b) { return _mm256_min_pd(a, b); }
    static V max(V a, V b) { return _mm256_max_pd(a, b); }
    static V abs(V v) { return _mm256_and_pd(v, _mm256_castsi256_pd(_mm256_set1_epi64x(0x7fffffffffffffff))); }
    static unsigned bits(__m256i m) { return static_cast<unsigned>(_mm256_movemask_pd(_mm256_castsi256_pd(m))); }
    static __m256i count(__m256i acc, __m256i m) { return _mm256_sub_epi64(acc, m); }
    static std::uint64_t total(__m256i acc) {
        alignas(32) std::uint64_t c[4];
        _mm256_store_si256(reinterpret_cast<__m256i*>(c), acc);
        return c[0] + c[1] + c[2] + c[3];
    }
    static void store(V v, double* out) { _mm256_storeu_pd(out, v); }
};

// The smallest and the largest lane as a ValueRange (zeros of either sign).
template <typename T>
dp::ValueRange lane_range(typename Lanes<T>::V lo, typename Lanes<T>::V hi) {
    T l[Lanes<T>::kCount], h[Lanes<T>::kCount];
    Lanes<T>::store(lo, l);
    Lanes<T>::store(hi, h);
    dp::ValueRange r;
    for (unsigned i = 0; i < Lanes<T>::kCount; ++i) {
        r.lo = l[i] < r.lo ? l[i] : r.lo;
        r.hi = h[i] > r.hi ? h[i] : r.hi;
    }
    return r;
}

// A range whose minimum or maximum is zero takes that zero's sign from the
// first zero of [first, last) that kept(i) accepts, as the portable loop.
template <typename T, typename Kept>
void first_zero_signs(const std::uint8_t* src, std::uint64_t first, std::uint64_t last, Kept&& kept,
                      dp::ValueRange* r) {
    if (r->lo != 0.0 && r->hi != 0.0) return;
    const UnalignedValues<T> x{src};
    for (std::uint64_t i = first; i < last; ++i)
        if (x[i] == T(0) && kept(i)) {
            if (r->lo == 0.0) r->lo = static_cast<double>(x[i]);
            if (r->hi == 0.0) r->hi = static_cast<double>(x[i]);
            return;
        }
}

template <typename T>
dp::ValueRange finite_range_avx2(const std::uint8_t* src, std::uint64_t first, std::uint64_t last) {
    using L = Lanes<T>;
    const typename L::V inf = L::splat(static_cast<T>(HUGE_VAL)), minus_inf = L::splat(static_cast<T>(-HUGE_VAL));
    typename L::V lo = inf, hi = minus_inf;
    std::uint64_t i = first;
    for (; i + L::kCount <= last; i += L::kCount) {
        const typename L::V v = L::load(src + i * sizeof(T));
        const __m256i skip = L::not_finite(v);
        lo = L::min(lo, L::where(skip, inf, v));
        hi = L::max(hi, L::where(skip, minus_inf, v));
    }
    dp::ValueRange r = lane_range<T>(lo, hi);
    r.merge(dp::finite_range(UnalignedValues<T>{src}, i, last));
    first_zero_signs<T>(src, first, last, [](std::uint64_t) { return true; }, &r);
    return r;
}

template <typename T>
dp::FillEvidence fill_evidence_avx2(const std::uint8_t* src, std::uint64_t first, std::uint64_t last, double cand) {
    using L = Lanes<T>;
    // A candidate T cannot hold equals no value (the portable loop
    // compares the values as doubles, converted exactly). A finite double
    // beyond T's range is not converted at all (that would be undefined).
    const bool in_range = !(std::fabs(cand) > static_cast<double>(std::numeric_limits<T>::max())) ||
                          std::isinf(cand);
    const T c = in_range ? static_cast<T>(cand) : T(0);
    const bool representable = in_range && static_cast<double>(c) == cand;
    const typename L::V cv = L::splat(c), zero = L::splat(T(0));
    __m256i hits = _mm256_setzero_si256();
    typename L::V other = zero;
    std::uint64_t i = first;
    for (; i + L::kCount <= last; i += L::kCount) {
        const typename L::V v = L::load(src + i * sizeof(T));
        const __m256i hit = representable ? L::equal(v, cv) : _mm256_setzero_si256();
        hits = L::count(hits, hit);
        other = L::max(other, L::where(_mm256_or_si256(hit, L::not_finite(v)), zero, L::abs(v)));
    }
    dp::FillEvidence e;
    e.hits = L::total(hits);
    T o[L::kCount];
    L::store(other, o);
    for (T v : o) e.other = static_cast<double>(v) > e.other ? static_cast<double>(v) : e.other;
    e.merge(dp::fill_evidence(UnalignedValues<T>{src}, i, last, cand));
    return e;
}

template <typename T>
dp::MaskPartial mask_range_avx2(const std::uint8_t* src, std::uint64_t n, const T* fills, unsigned nfill,
                                std::uint64_t byte_first, std::uint64_t byte_last, std::uint8_t* mask) {
    using L = Lanes<T>;
    constexpr unsigned kVectors = 8 / L::kCount;  // per mask byte
    const typename L::V inf = L::splat(static_cast<T>(HUGE_VAL)), minus_inf = L::splat(static_cast<T>(-HUGE_VAL));
    typename L::V lo = inf, hi = minus_inf;
    __m256i masked = _mm256_setzero_si256();
    const std::uint64_t full_end = byte_last < n / 8 ? byte_last : (n / 8 > byte_first ? n / 8 : byte_first);
    for (std::uint64_t byte = byte_first; byte < full_end; ++byte) {
        unsigned bits = 0;
        for (unsigned k = 0; k < kVectors; ++k) {
            const typename L::V v = L::load(src + (byte * 8 + k * L::kCount) * sizeof(T));
            __m256i drop = L::not_finite(v);
            for (unsigned f = 0; f < nfill; ++f) drop = _mm256_or_si256(drop, L::same_bits(v, fills[f]));
            bits |= L::bits(drop) << (k * L::kCount);
            masked = L::count(masked, drop);
            lo = L::min(lo, L::where(drop, inf, v));
            hi = L::max(hi, L::where(drop, minus_inf, v));
        }
        mask[byte] = static_cast<std::uint8_t>(bits);
    }
    dp::MaskPartial p;
    p.masked = L::total(masked);
    p.kept = lane_range<T>(lo, hi);
    // The last byte of the field when n % 8 != 0, and bytes past it.
    if (full_end < byte_last)
        p.merge(dp::mask_range<T>(UnalignedValues<T>{src}, n, fills, nfill, full_end, byte_last, mask));
    const std::uint64_t last = byte_last * 8 < n ? byte_last * 8 : n;
    first_zero_signs<T>(src, byte_first * 8, last, [&](std::uint64_t i) { return !(mask[i / 8] >> (i % 8) & 1); },
                        &p.kept);
    return p;
}

template <typename T>
constexpr dp::MaskKernels<T> kAvx2Mask{finite_range_avx2<T>, fill_evidence_avx2<T>, mask_range_avx2<T>};

// Each byte of a plane word is the set codes of eight consecutive words:
// one compare against the lanes' bits selects the digit for each, one OR
// writes the eight words. A byte with no set code, the common case in a
// sparse plane, costs one test. Codes of the last, partial group (len % 8
// of them) go one at a time, so that no word at or past len is touched.
void deposit_plane_avx2(const std::uint64_t* plane, std::uint64_t len, std::uint32_t digit, std::uint32_t* words) {
    const __m256i lane_bit = _mm256_setr_epi32(1, 2, 4, 8, 16, 32, 64, 128);
    const __m256i digits = _mm256_set1_epi32(static_cast<int>(digit));
    const std::uint64_t full_groups = len / 8;
    const std::uint64_t nw = dp::plane_word_count(len);
    for (std::uint64_t w = 0; w < nw; ++w) {
        std::uint64_t p = plane[w];
        for (std::uint64_t g = 8 * w; p; ++g, p >>= 8) {
            const unsigned byte = static_cast<unsigned>(p & 0xff);
            if (!byte) continue;
            std::uint32_t* at = words + 8 * g;
            if (g >= full_groups) {
                for (unsigned v = byte; v; v &= v - 1) at[__builtin_ctz(v)] |= digit;
                continue;
            }
            const __m256i set =
                _mm256_cmpeq_epi32(_mm256_and_si256(_mm256_set1_epi32(static_cast<int>(byte)), lane_bit), lane_bit);
            auto* vec = reinterpret_cast<__m256i*>(at);
            _mm256_storeu_si256(vec, _mm256_or_si256(_mm256_loadu_si256(vec), _mm256_and_si256(set, digits)));
        }
    }
}

// code_rows for 64 codes: each code's bytes grouped by significance (a
// byte shuffle in each 128-bit half, then a dword permute: qword y of
// q[k] is byte y of codes 8k .. 8k+7), a 4 x 4 qword transpose so that one
// vector holds byte y of 32 consecutive codes, then the top bit of each
// byte by movemask, eight times, doubling the bytes in between. A group
// of fewer than 64 codes goes through a zeroed copy, so no word at or
// past n is read and its rows' bits n..63 are 0.
void code_rows_avx2(const std::uint32_t* words, unsigned n, std::uint64_t* rows) {
    alignas(32) std::uint32_t padded[64];
    if (n < 64) {
        std::memset(padded, 0, sizeof padded);
        if (n) std::memcpy(padded, words, n * sizeof *words);
        words = padded;
    }
    const __m256i by_byte = _mm256_setr_epi8(0, 4, 8, 12, 1, 5, 9, 13, 2, 6, 10, 14, 3, 7, 11, 15,  //
                                             0, 4, 8, 12, 1, 5, 9, 13, 2, 6, 10, 14, 3, 7, 11, 15);
    const __m256i pair_halves = _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7);
    __m256i q[8];
    for (unsigned k = 0; k < 8; ++k) {
        const __m256i v = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(words + 8 * k));
        q[k] = _mm256_permutevar8x32_epi32(_mm256_shuffle_epi8(v, by_byte), pair_halves);
    }
    std::uint32_t half_rows[2][32];  // [h][s]: bit s of codes 32h .. 32h + 31
    for (unsigned h = 0; h < 2; ++h) {
        const __m256i* v = q + 4 * h;
        const __m256i t0 = _mm256_unpacklo_epi64(v[0], v[1]), t1 = _mm256_unpackhi_epi64(v[0], v[1]);
        const __m256i t2 = _mm256_unpacklo_epi64(v[2], v[3]), t3 = _mm256_unpackhi_epi64(v[2], v[3]);
        const __m256i bytes[4] = {_mm256_permute2x128_si256(t0, t2, 0x20), _mm256_permute2x128_si256(t1, t3, 0x20),
                                  _mm256_permute2x128_si256(t0, t2, 0x31), _mm256_permute2x128_si256(t1, t3, 0x31)};
        for (unsigned y = 0; y < 4; ++y) {
            __m256i u = bytes[y];  // byte j: byte y of code 32h + j
            for (int r = 7; r >= 0; --r) {
                half_rows[h][8 * y + static_cast<unsigned>(r)] = static_cast<std::uint32_t>(_mm256_movemask_epi8(u));
                u = _mm256_add_epi8(u, u);
            }
        }
    }
    for (unsigned s = 0; s < 32; ++s) rows[s] = half_rows[0][s] | std::uint64_t{half_rows[1][s]} << 32;
}

// to_element's clamp of four values to T's finite range with ordered
// compares (NaN passes through, as the scalar comparisons let it).
template <typename T>
inline __m256d clamp_to_element_range(__m256d v) {
    const __m256d hi = _mm256_set1_pd(sizeof(T) == 4 ? static_cast<double>(FLT_MAX) : DBL_MAX);
    const __m256d lo = _mm256_set1_pd(sizeof(T) == 4 ? -static_cast<double>(FLT_MAX) : -DBL_MAX);
    const __m256d c = _mm256_blendv_pd(v, hi, _mm256_cmp_pd(v, hi, _CMP_GT_OQ));
    return _mm256_blendv_pd(c, lo, _mm256_cmp_pd(v, lo, _CMP_LT_OQ));
}

// encode_point for four unmasked points at a time, the same operations in
// the same order (no FMA: this file is built for AVX2 alone): the quotient,
// floor by rounding toward -inf, the reconstruction, the element cast with
// to_element's clamp, and the three checks as ordered compares (false on
// NaN, as the scalar <=). The rest, and a step that is not positive, go
// through the portable form.
template <typename T>
void quantize_avx2(const double* x, const double* pred, std::uint64_t m, double step, double eb, double abs_bound,
                   std::int32_t* code, std::uint8_t* outlier, double* work) {
    std::uint64_t i = 0;
    if (step > 0) {
        const __m256d vstep = _mm256_set1_pd(step), half = _mm256_set1_pd(0.5);
        const __m256d veb = _mm256_set1_pd(eb), vabs_bound = _mm256_set1_pd(abs_bound);
        const __m256d max_code = _mm256_set1_pd(static_cast<double>(dp::kMaxCode));
        const __m256d no_sign = _mm256_castsi256_pd(_mm256_set1_epi64x(INT64_MAX));
        for (; i + 4 <= m; i += 4) {
            const __m256d xv = _mm256_loadu_pd(x + i), p = _mm256_loadu_pd(pred + i);
            const __m256d qd = _mm256_round_pd(_mm256_add_pd(_mm256_div_pd(_mm256_sub_pd(xv, p), vstep), half),
                                               _MM_FROUND_TO_NEG_INF | _MM_FROUND_NO_EXC);
            const __m256d recon = _mm256_add_pd(p, _mm256_mul_pd(vstep, qd));
            const __m256d clamped = clamp_to_element_range<T>(recon);
            const __m256d element = sizeof(T) == 4 ? _mm256_cvtps_pd(_mm256_cvtpd_ps(clamped)) : clamped;
            const __m256d ok = _mm256_and_pd(
                _mm256_and_pd(_mm256_cmp_pd(_mm256_and_pd(qd, no_sign), max_code, _CMP_LE_OQ),
                              _mm256_cmp_pd(_mm256_and_pd(_mm256_sub_pd(xv, recon), no_sign), veb, _CMP_LE_OQ)),
                _mm256_cmp_pd(_mm256_and_pd(_mm256_sub_pd(xv, element), no_sign), vabs_bound, _CMP_LE_OQ));
            _mm256_storeu_pd(work + i, _mm256_blendv_pd(xv, recon, ok));
            // |qd| <= 2^29 where ok: the conversion is exact; 0 elsewhere.
            _mm_storeu_si128(reinterpret_cast<__m128i*>(code + i), _mm256_cvttpd_epi32(_mm256_and_pd(qd, ok)));
            const int kept = _mm256_movemask_pd(ok);
            for (unsigned j = 0; j < 4; ++j) outlier[i + j] = static_cast<std::uint8_t>(!(kept >> j & 1));
        }
    }
    dp::kPortablePrismKernels.quantize.template of<T>()(x + i, pred + i, m - i, step, eb, abs_bound, code + i,
                                                        outlier + i, work + i);
}

// to_element for four values at a time: the clamp, then the conversion to
// float, which rounds and quiets a NaN as the scalar conversion does.
template <typename T>
void to_elements_avx2(const double* w, std::uint64_t n, std::uint8_t* out) {
    std::uint64_t i = 0;
    for (; i + 4 <= n; i += 4) {
        const __m256d c = clamp_to_element_range<T>(_mm256_loadu_pd(w + i));
        if constexpr (sizeof(T) == 4)
            _mm_storeu_ps(reinterpret_cast<float*>(out + i * 4), _mm256_cvtpd_ps(c));
        else
            _mm256_storeu_pd(reinterpret_cast<double*>(out + i * 8), c);
    }
    dp::kPortablePrismKernels.to_elements.template of<T>()(w + i, n - i, out + i * sizeof(T));
}

}  // namespace

const detail::prism::PrismCpuKernels kAvx2PrismKernels{"avx2",
                                                       truncation_stats_avx2,
                                                       kAvx2Mask<float>,
                                                       kAvx2Mask<double>,
                                                       deposit_plane_avx2,
                                                       {quantize_avx2<float>, quantize_avx2<double>},
                                                       code_rows_avx2,
                                                       {to_elements_avx2<float>, to_elements_avx2<double>}};

}  // namespace mans::cpu

#if defined(__clang__)
#pragma clang attribute pop
#else
#pragma GCC pop_options
#endif
#endif  // MANS_HAVE_AVX2_KERNELS
