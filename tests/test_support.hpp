// test_support.hpp - deterministic data generators and real-data lookup
// shared by the unit tests. Every generator takes an explicit seed and uses
// std::mt19937_64, so each test input is the same on every machine and run.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "mans/mans.hpp"

namespace mans_test {

using Bytes = std::vector<std::uint8_t>;

// True in AddressSanitizer builds (GCC defines __SANITIZE_ADDRESS__, clang
// answers __has_feature). The exhaustive damage sweeps then sample the long
// parts of an archive more sparsely: each try costs about 10x more there, and
// the Release build runs the full sweep.
#if defined(__SANITIZE_ADDRESS__)
inline constexpr bool kAddressSanitized = true;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
inline constexpr bool kAddressSanitized = true;
#else
inline constexpr bool kAddressSanitized = false;
#endif
#else
inline constexpr bool kAddressSanitized = false;
#endif

inline constexpr mans::DType kAllDTypes[] = {mans::DType::u8,  mans::DType::u16, mans::DType::u32,
                                             mans::DType::u64, mans::DType::i16, mans::DType::i32,
                                             mans::DType::i64};

enum class Dist {
    constant,        // one value repeated
    random_full,     // uniform over the whole type range
    skewed,          // Laplacian (two-sided geometric) around a type-dependent center
    small_range_2100,  // uniform in [base, base + 2100)
    small_range_4000,  // uniform in [base, base + 4000)
    quant_runs,      // quantisation codes: 32768 +- small Laplacian, long runs of exactly 32768
    random_walk,     // x += Laplacian step, wrapping modulo 2^B
    sorted_indices,  // ascending, small random gaps (wraps for narrow types)
    sparse_values,   // few distinct values far apart (center + 37 * Laplacian step) with runs of 0
};

inline constexpr Dist kAllDists[] = {Dist::constant,         Dist::random_full,      Dist::skewed,
                                     Dist::small_range_2100, Dist::small_range_4000, Dist::quant_runs,
                                     Dist::random_walk,      Dist::sorted_indices,   Dist::sparse_values};

const char* dist_name(Dist d);

// n elements of `dtype` following `d`, as little-endian bytes.
Bytes generate(mans::DType dtype, Dist d, std::size_t n, std::uint64_t seed);

// One block-sized chunk per distribution in turn (so that consecutive blocks
// pick different mappings): n elements, chunks of chunk_elems.
Bytes generate_mixed(mans::DType dtype, std::size_t n, std::size_t chunk_elems, std::uint64_t seed);

// Path of a real data file: MANS_SHARED_DATA_DIR/name, else
// MANS_DATASETS_CACHE_DIR/name, else "" (caller warns and substitutes).
std::string find_data_file(const std::string& name);

// All data files (not MANIFEST.md / SHA256SUMS) in MANS_SHARED_DATA_DIR,
// sorted by name; when that folder is absent or empty, the files of at most
// 8 MiB in MANS_DATASETS_CACHE_DIR; else empty.
std::vector<std::string> list_shared_data_files();

// Whole file (or its first max_bytes bytes). Empty on failure.
Bytes read_file(const std::string& path, std::size_t max_bytes = SIZE_MAX);
bool write_file(const std::string& path, const Bytes& data);

// First max_bytes of exafel_1024kB.u16 or, when it is not found (with a
// Catch2 WARN), an exafel-like synthetic substitute of the same size.
Bytes exafel_prefix(std::size_t max_bytes);

// Codes shaped like PRISM's residuals, from the real f32 field `name`: its
// first max_values values' first differences quantized with the bound
// rel x (value range), non-finite and fill (|x| > 1e30) values as code 0,
// clamped to PRISM's code range. Empty, with a Catch2 WARN, when the file
// is not found.
std::vector<std::int32_t> real_field_codes(const std::string& name, double rel, std::size_t max_values);

// Exafel-like u16 detector data from a fixed LCG (pedestal ~1500, rare hits).
Bytes exafel_like(std::size_t n, std::uint32_t seed);

std::uint64_t xxh3(const void* data, std::size_t size);
inline std::uint64_t xxh3(const Bytes& b) { return xxh3(b.data(), b.size()); }

// Compress with `cfg` into an exactly sized vector; the Errc is returned via *err.
Bytes compress(const Bytes& raw, const mans::CompressConfig& cfg, mans::Errc* err = nullptr);
// Decompress a whole stream; raw_cap = capacity of the destination.
Bytes decompress(const Bytes& stream, std::size_t raw_cap, const mans::DecompressConfig& cfg,
                 mans::Errc* err);

std::string hex64(std::uint64_t v);

}  // namespace mans_test
