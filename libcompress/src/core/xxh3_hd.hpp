// xxh3_hd.hpp - XXH3-64 (seed 0, default secret) as MANS_HD code, written
// from the xxHash specification (doc/xxhash_spec.md, v0.2.0, "XXH3
// algorithm description"), so that a GPU can compute and check the
// content checksums of docs/FORMAT.md itself.
//
// The CPU keeps libxxhash (SIMD, faster); tests/test_xxh3_hd.cpp checks
// that this gives the same value for every length up to 4 KiB and for
// large and unaligned inputs.
#pragma once

#include <cstddef>
#include <cstdint>

#include "core/hd.hpp"
#include "core/team.hpp"

namespace mans::detail::xxh3 {

inline constexpr std::uint64_t kPrime32_1 = 0x9E3779B1u;
inline constexpr std::uint64_t kPrime32_2 = 0x85EBCA77u;
inline constexpr std::uint64_t kPrime32_3 = 0xC2B2AE3Du;
inline constexpr std::uint64_t kPrime64_1 = 0x9E3779B185EBCA87ull;
inline constexpr std::uint64_t kPrime64_2 = 0xC2B2AE3D27D4EB4Full;
inline constexpr std::uint64_t kPrime64_3 = 0x165667B19E3779F9ull;
inline constexpr std::uint64_t kPrime64_4 = 0x85EBCA77C2B2AE63ull;
inline constexpr std::uint64_t kPrime64_5 = 0x27D4EB2F165667C5ull;
inline constexpr std::uint64_t kPrimeMx1 = 0x165667919E3779F9ull;
inline constexpr std::uint64_t kPrimeMx2 = 0x9FB21C651E98DF25ull;

inline constexpr std::size_t kSecretBytes = 192;
inline constexpr std::size_t kStripeBytes = 64;
inline constexpr std::size_t kStripesPerBlock = (kSecretBytes - kStripeBytes) / 8;  // 16
inline constexpr std::size_t kBlockBytes = kStripeBytes * kStripesPerBlock;         // 1024

// The specification's default secret. Listed once; a GPU reads its own
// copy in constant memory (a host array cannot be read from device code).
#define MANS_XXH3_DEFAULT_SECRET                                                                 \
    {0xb8, 0xfe, 0x6c, 0x39, 0x23, 0xa4, 0x4b, 0xbe, 0x7c, 0x01, 0x81, 0x2c, 0xf7, 0x21, 0xad, 0x1c, \
     0xde, 0xd4, 0x6d, 0xe9, 0x83, 0x90, 0x97, 0xdb, 0x72, 0x40, 0xa4, 0xa4, 0xb7, 0xb3, 0x67, 0x1f, \
     0xcb, 0x79, 0xe6, 0x4e, 0xcc, 0xc0, 0xe5, 0x78, 0x82, 0x5a, 0xd0, 0x7d, 0xcc, 0xff, 0x72, 0x21, \
     0xb8, 0x08, 0x46, 0x74, 0xf7, 0x43, 0x24, 0x8e, 0xe0, 0x35, 0x90, 0xe6, 0x81, 0x3a, 0x26, 0x4c, \
     0x3c, 0x28, 0x52, 0xbb, 0x91, 0xc3, 0x00, 0xcb, 0x88, 0xd0, 0x65, 0x8b, 0x1b, 0x53, 0x2e, 0xa3, \
     0x71, 0x64, 0x48, 0x97, 0xa2, 0x0d, 0xf9, 0x4e, 0x38, 0x19, 0xef, 0x46, 0xa9, 0xde, 0xac, 0xd8, \
     0xa8, 0xfa, 0x76, 0x3f, 0xe3, 0x9c, 0x34, 0x3f, 0xf9, 0xdc, 0xbb, 0xc7, 0xc7, 0x0b, 0x4f, 0x1d, \
     0x8a, 0x51, 0xe0, 0x4b, 0xcd, 0xb4, 0x59, 0x31, 0xc8, 0x9f, 0x7e, 0xc9, 0xd9, 0x78, 0x73, 0x64, \
     0xea, 0xc5, 0xac, 0x83, 0x34, 0xd3, 0xeb, 0xc3, 0xc5, 0x81, 0xa0, 0xff, 0xfa, 0x13, 0x63, 0xeb, \
     0x17, 0x0d, 0xdd, 0x51, 0xb7, 0xf0, 0xda, 0x49, 0xd3, 0x16, 0x55, 0x26, 0x29, 0xd4, 0x68, 0x9e, \
     0x2b, 0x16, 0xbe, 0x58, 0x7d, 0x47, 0xa1, 0xfc, 0x8f, 0xf8, 0xb8, 0xd1, 0x7a, 0xd0, 0x31, 0xce, \
     0x45, 0xcb, 0x3a, 0x8f, 0x95, 0x16, 0x04, 0x28, 0xaf, 0xd7, 0xfb, 0xca, 0xbb, 0x4b, 0x40, 0x7e}

inline constexpr std::uint8_t kHostSecret[kSecretBytes] = MANS_XXH3_DEFAULT_SECRET;
#if defined(__CUDACC__) || defined(__HIPCC__)
static __constant__ const std::uint8_t kDeviceSecret[kSecretBytes] = MANS_XXH3_DEFAULT_SECRET;
#endif
#undef MANS_XXH3_DEFAULT_SECRET

MANS_HD const std::uint8_t* default_secret() {
#if defined(__CUDA_ARCH__) || defined(__HIP_DEVICE_COMPILE__)
    return kDeviceSecret;
#else
    return kHostSecret;
#endif
}

// Little-endian reads (the supported hosts and GPUs are little-endian;
// byte_io.hpp says the same), unaligned.
MANS_HD std::uint64_t read64(const std::uint8_t* p) {
    std::uint64_t v;
    hd_memcpy(&v, p, 8);
    return v;
}
MANS_HD std::uint32_t read32(const std::uint8_t* p) {
    std::uint32_t v;
    hd_memcpy(&v, p, 4);
    return v;
}

MANS_HD std::uint64_t rotl64(std::uint64_t x, unsigned r) { return (x << r) | (x >> (64 - r)); }
MANS_HD std::uint64_t bswap64(std::uint64_t x) {
    x = ((x & 0x00FF00FF00FF00FFull) << 8) | ((x >> 8) & 0x00FF00FF00FF00FFull);
    x = ((x & 0x0000FFFF0000FFFFull) << 16) | ((x >> 16) & 0x0000FFFF0000FFFFull);
    return (x << 32) | (x >> 32);
}

// The low and high halves of the 128-bit product, xor-ed.
MANS_HD std::uint64_t mul128_fold64(std::uint64_t a, std::uint64_t b) {
#if defined(__CUDA_ARCH__) || defined(__HIP_DEVICE_COMPILE__)
    return (a * b) ^ __umul64hi(a, b);
#else
    // Schoolbook on 32-bit halves: portable, and only tests run it on a CPU.
    const std::uint64_t a_lo = a & 0xFFFFFFFFu, a_hi = a >> 32, b_lo = b & 0xFFFFFFFFu, b_hi = b >> 32;
    const std::uint64_t lo_lo = a_lo * b_lo, hi_lo = a_hi * b_lo, lo_hi = a_lo * b_hi, hi_hi = a_hi * b_hi;
    const std::uint64_t cross = (lo_lo >> 32) + (hi_lo & 0xFFFFFFFFu) + lo_hi;
    const std::uint64_t high = (hi_lo >> 32) + (cross >> 32) + hi_hi;
    const std::uint64_t low = (cross << 32) | (lo_lo & 0xFFFFFFFFu);
    return low ^ high;
#endif
}

MANS_HD std::uint64_t avalanche(std::uint64_t x) {
    x ^= x >> 37;
    x *= kPrimeMx1;
    return x ^ (x >> 32);
}
MANS_HD std::uint64_t avalanche_xxh64(std::uint64_t x) {
    x ^= x >> 33;
    x *= kPrime64_2;
    x ^= x >> 29;
    x *= kPrime64_3;
    return x ^ (x >> 32);
}

// 16 bytes of data mixed with 16 bytes of the secret (seed 0).
MANS_HD std::uint64_t mix16(const std::uint8_t* data, const std::uint8_t* secret) {
    return mul128_fold64(read64(data) ^ read64(secret), read64(data + 8) ^ read64(secret + 8));
}

MANS_HD std::uint64_t hash_0to16(const std::uint8_t* p, std::size_t n, const std::uint8_t* secret) {
    if (n > 8) {
        const std::uint64_t low = (read64(secret + 24) ^ read64(secret + 32)) ^ read64(p);
        const std::uint64_t high = (read64(secret + 40) ^ read64(secret + 48)) ^ read64(p + n - 8);
        return avalanche(n + bswap64(low) + high + mul128_fold64(low, high));
    }
    if (n >= 4) {
        const std::uint64_t combined = read32(p + n - 4) | (static_cast<std::uint64_t>(read32(p)) << 32);
        std::uint64_t v = (read64(secret + 8) ^ read64(secret + 16)) ^ combined;
        v ^= rotl64(v, 49) ^ rotl64(v, 24);
        v *= kPrimeMx2;
        v ^= (v >> 35) + n;
        v *= kPrimeMx2;
        return v ^ (v >> 28);
    }
    if (n > 0) {
        const std::uint32_t combined = static_cast<std::uint32_t>(p[n - 1]) | (static_cast<std::uint32_t>(n) << 8) |
                                       (static_cast<std::uint32_t>(p[0]) << 16) |
                                       (static_cast<std::uint32_t>(p[n >> 1]) << 24);
        const std::uint64_t v = static_cast<std::uint64_t>(read32(secret) ^ read32(secret + 4)) ^ combined;
        return avalanche_xxh64(v);
    }
    return avalanche_xxh64(read64(secret + 56) ^ read64(secret + 64));
}

MANS_HD std::uint64_t hash_17to128(const std::uint8_t* p, std::size_t n, const std::uint8_t* secret) {
    std::uint64_t acc = n * kPrime64_1;
    const std::size_t rounds = ((n - 1) >> 5) + 1;
    for (std::size_t r = rounds; r-- > 0;) {
        acc += mix16(p + 16 * r, secret + 32 * r);
        acc += mix16(p + n - 16 * r - 16, secret + 32 * r + 16);
    }
    return avalanche(acc);
}

MANS_HD std::uint64_t hash_129to240(const std::uint8_t* p, std::size_t n, const std::uint8_t* secret) {
    std::uint64_t acc = n * kPrime64_1;
    const std::size_t chunks = n >> 4;
    for (std::size_t i = 0; i < 8; ++i) acc += mix16(p + 16 * i, secret + 16 * i);
    acc = avalanche(acc);
    for (std::size_t i = 8; i < chunks; ++i) acc += mix16(p + 16 * i, secret + 16 * (i - 8) + 3);
    acc += mix16(p + n - 16, secret + 119);
    return avalanche(acc);
}

// Accumulators first, first + step, ... (of 0..7) of the hash of a large
// input (n > 240), before the merge, into acc[i], in one pass over the
// input. The eight are independent: a 64-byte stripe adds its word i ^ 1
// and the product of the halves of (word i ^ secret word i) to accumulator
// i, and the scramble after a block works on each alone; so a team can
// share them out (xxh3_64_team) and one thread computes all eight.
MANS_HD_CALL void large_accumulators(const std::uint8_t* p, std::size_t n, const std::uint8_t* secret,
                                     unsigned first, unsigned step, std::uint64_t* acc) {
    constexpr std::uint64_t kInit[8] = {kPrime32_3, kPrime64_1, kPrime64_2, kPrime64_3,
                                        kPrime64_4, kPrime32_2, kPrime64_5, kPrime32_1};
    for (unsigned i = first; i < 8; i += step) acc[i] = kInit[i];
    const auto stripe = [&](const std::uint8_t* data, const std::uint8_t* key) {
        for (unsigned i = first; i < 8; i += step) {
            const std::uint64_t v = read64(data + 8 * i) ^ read64(key + 8 * i);
            acc[i] += read64(data + 8 * (i ^ 1u)) + (v & 0xFFFFFFFFu) * (v >> 32);
        }
    };
    // Full blocks, each but the last followed by a scramble; the last block
    // (1..kBlockBytes bytes, even when full) is handled below.
    const std::size_t blocks = (n - 1) / kBlockBytes;
    for (std::size_t b = 0; b < blocks; ++b) {
        const std::uint8_t* block = p + b * kBlockBytes;
        for (std::size_t s = 0; s < kStripesPerBlock; ++s) stripe(block + s * kStripeBytes, secret + 8 * s);
        for (unsigned i = first; i < 8; i += step) {
            acc[i] ^= acc[i] >> 47;
            acc[i] ^= read64(secret + kSecretBytes - kStripeBytes + 8 * i);
            acc[i] *= kPrime32_1;
        }
    }
    const std::uint8_t* last = p + blocks * kBlockBytes;
    const std::size_t full_stripes = (n - blocks * kBlockBytes - 1) / kStripeBytes;
    for (std::size_t s = 0; s < full_stripes; ++s) stripe(last + s * kStripeBytes, secret + 8 * s);
    stripe(p + n - kStripeBytes, secret + kSecretBytes - 71);
}

// The hash of a large input from its eight accumulators.
MANS_HD std::uint64_t merge_accumulators(const std::uint64_t* acc, std::size_t n, const std::uint8_t* secret) {
    std::uint64_t result = n * kPrime64_1;
    for (unsigned i = 0; i < 4; ++i)
        result += mul128_fold64(acc[2 * i] ^ read64(secret + 11 + 16 * i), acc[2 * i + 1] ^ read64(secret + 19 + 16 * i));
    return avalanche(result);
}

MANS_HD_CALL std::uint64_t hash_large(const std::uint8_t* p, std::size_t n, const std::uint8_t* secret) {
    std::uint64_t acc[8];
    large_accumulators(p, n, secret, 0, 1, acc);
    return merge_accumulators(acc, n, secret);
}

}  // namespace mans::detail::xxh3

namespace mans::detail {

// XXH3_64bits(data, n) of libxxhash: seed 0, default secret.
MANS_HD std::uint64_t xxh3_64_hd(const void* data, std::size_t n) {
    const std::uint8_t* p = static_cast<const std::uint8_t*>(data);
    const std::uint8_t* secret = xxh3::default_secret();
    if (n <= 16) return xxh3::hash_0to16(p, n, secret);
    if (n <= 128) return xxh3::hash_17to128(p, n, secret);
    if (n <= 240) return xxh3::hash_129to240(p, n, secret);
    return xxh3::hash_large(p, n, secret);
}

// xxh3_64_hd(data, n) computed by a team (core/team.hpp), the same value
// in every member: for a large input rank r computes accumulators r,
// r + size, ... (eight in all), then every member merges them; a small
// input every member hashes alone (a few dozen operations, reads only).
// Every member calls it alike, after the bytes are final and visible.
template <typename Team>
MANS_HD std::uint64_t xxh3_64_team(const Team& team, const void* data, std::size_t n) {
    if (team.size() == 1 || n <= 240) return xxh3_64_hd(data, n);
    const std::uint8_t* p = static_cast<const std::uint8_t*>(data);
    const std::uint8_t* secret = xxh3::default_secret();
    std::uint64_t* acc = team_region(team, kTeamRankValues);  // 8 of its words
    team.for_ranks([&](unsigned r) {
        if (r >= 8) return;
        std::uint64_t mine[8];  // a rank's accumulators, then one write each
        xxh3::large_accumulators(p, n, secret, r, team.size(), mine);
        for (unsigned i = r; i < 8; i += team.size()) acc[i] = mine[i];
    });
    return xxh3::merge_accumulators(acc, n, secret);
}

}  // namespace mans::detail
