// cpu_kernels.hpp - PRISM loops over whole chunks or fields that the CPU
// backend runs with SIMD instructions where the CPU has them (backend.hpp's
// prism_kernels; backends/cpu/prism_avx2.cpp), and their portable forms.
// Every kernel gives its portable form's results exactly, bit for bit
// (tests/test_prism_planes_hd.cpp and tests/test_prism_cpu_kernels.cpp compare
// them).
#pragma once

#include <cstdint>

#include "prism/codes.hpp"
#include "prism/mask_hd.hpp"
#include "prism/truncation_stats_hd.hpp"

namespace mans::detail::prism {

// mask_hd.hpp's three passes over the values of a field of T (float or
// double), point i at src + i * sizeof(T), little-endian. A range holds at
// most 2^32 points (the AVX2 forms count in 32-bit lanes for float; the
// encoder's ranges are kMaskRangePoints).
// The closed-loop quantization of m unmasked points (point_math.hpp's
// encode_point with masked false) given their values x[i] and predictions
// pred[i]: code[i], outlier[i] (1 or 0) and the work value work[i].
struct QuantizeKernels {
    void (*f32)(const double* x, const double* pred, std::uint64_t m, double step, double eb, double abs_bound,
                std::int32_t* code, std::uint8_t* outlier, double* work);
    void (*f64)(const double* x, const double* pred, std::uint64_t m, double step, double eb, double abs_bound,
                std::int32_t* code, std::uint8_t* outlier, double* work);

    template <typename T>
    auto of() const { return sizeof(T) == 4 ? f32 : f64; }
};

template <typename T>
struct MaskKernels {
    ValueRange (*finite_range)(const std::uint8_t* src, std::uint64_t first, std::uint64_t last);
    FillEvidence (*fill_evidence)(const std::uint8_t* src, std::uint64_t first, std::uint64_t last, double cand);
    MaskPartial (*mask_range)(const std::uint8_t* src, std::uint64_t n, const T* fills, unsigned nfill,
                              std::uint64_t byte_first, std::uint64_t byte_last, std::uint8_t* mask);
};

// The bit matrix of n <= 64 codes: rows[s] (s < 32) has bit j set when
// words[j] has bit s, for j < n; its bits n..63 are 0 and words[n..64) are
// not read. transpose_planes_one_thread (plane_coding.hpp) picks a
// chunk's planes out of these rows.
using CodeRows = void (*)(const std::uint32_t* words, unsigned n, std::uint64_t* rows);

// The reader's output: out[i] = to_element<T>(w[i]) (point_math.hpp), as
// little-endian bytes at out + i * sizeof(T), for i < n.
struct ElementKernels {
    void (*f32)(const double* w, std::uint64_t n, std::uint8_t* out);
    void (*f64)(const double* w, std::uint64_t n, std::uint8_t* out);

    template <typename T>
    auto of() const { return sizeof(T) == 4 ? f32 : f64; }
};

struct PrismCpuKernels {
    const char* name;
    // truncation_stats_one_thread: out[0..planes] for words[j] =
    // encode_code(codes[j], c), planes at least the chunk's plane count
    // (planes_for of the OR of its words).
    void (*truncation_stats)(const std::int32_t* codes, const std::uint32_t* words, std::uint64_t n,
                             unsigned planes, Coding c, TruncationPartial* out);
    MaskKernels<float> mask_f32;
    MaskKernels<double> mask_f64;
    // plane_split_hd.hpp's deposit_plane for a chunk of len codes:
    // words[j] |= digit for every code j set in plane[0..plane_word_count(len)).
    // The plane has no bit at or past len (merge_plane sets none); words
    // holds len words.
    void (*deposit_plane)(const std::uint64_t* plane, std::uint64_t len, std::uint32_t digit, std::uint32_t* words);
    QuantizeKernels quantize;
    CodeRows code_rows;
    ElementKernels to_elements;

    template <typename T>
    const MaskKernels<T>& mask() const {
        if constexpr (sizeof(T) == 4) return mask_f32;
        else return mask_f64;
    }
};

extern const PrismCpuKernels kPortablePrismKernels;

}  // namespace mans::detail::prism
