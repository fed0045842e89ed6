// cpu_kernels.cpp - the portable forms of PRISM's CPU kernels: the MANS_HD
// definitions themselves.
#include "prism/cpu_kernels.hpp"

#include "core/byte_io.hpp"  // store_le
#include "core/team.hpp"  // SoloTeam
#include "prism/geometry.hpp"  // UnalignedValues
#include "prism/plane_split_hd.hpp"
#include "prism/point_math.hpp"

namespace mans::detail::prism {
namespace {

template <typename T>
ValueRange finite_range_portable(const std::uint8_t* src, std::uint64_t first, std::uint64_t last) {
    return finite_range(UnalignedValues<T>{src}, first, last);
}

template <typename T>
FillEvidence fill_evidence_portable(const std::uint8_t* src, std::uint64_t first, std::uint64_t last, double cand) {
    return fill_evidence(UnalignedValues<T>{src}, first, last, cand);
}

template <typename T>
MaskPartial mask_range_portable(const std::uint8_t* src, std::uint64_t n, const T* fills, unsigned nfill,
                                std::uint64_t byte_first, std::uint64_t byte_last, std::uint8_t* mask) {
    return mask_range<T>(UnalignedValues<T>{src}, n, fills, nfill, byte_first, byte_last, mask);
}

template <typename T>
constexpr MaskKernels<T> kPortableMask{finite_range_portable<T>, fill_evidence_portable<T>, mask_range_portable<T>};

void deposit_plane_portable(const std::uint64_t* plane, std::uint64_t len, std::uint32_t digit, std::uint32_t* words) {
    deposit_plane(SoloTeam{}, plane, plane_word_count(len), digit, words);
}

// An 8 x 8 bit matrix, row i in byte i, transposed (Hacker's Delight 7-3):
// bit j of byte i goes to bit i of byte j.
std::uint64_t transpose8x8(std::uint64_t x) {
    std::uint64_t t = (x ^ (x >> 7)) & 0x00AA00AA00AA00AAull;
    x ^= t ^ (t << 7);
    t = (x ^ (x >> 14)) & 0x0000CCCC0000CCCCull;
    x ^= t ^ (t << 14);
    t = (x ^ (x >> 28)) & 0x00000000F0F0F0F0ull;
    x ^= t ^ (t << 28);
    return x;
}

// code_rows by 8 x 8 bit blocks transposed in registers.
void words_to_rows(const std::uint32_t* words, unsigned n, std::uint64_t* rows) {
    for (unsigned s = 0; s < 32; ++s) rows[s] = 0;
    for (unsigned k = 0; 8 * k < n; ++k) {  // codes 8k .. 8k+7
        std::uint64_t bytes[4] = {};  // bytes[y]: byte y of each code, code i in byte i
        for (unsigned i = 0; i < 8 && 8 * k + i < n; ++i) {
            const std::uint64_t w = words[8 * k + i];
            for (unsigned y = 0; y < 4; ++y) bytes[y] |= ((w >> (8 * y)) & 0xff) << (8 * i);
        }
        for (unsigned y = 0; y < 4; ++y) {
            if (!bytes[y]) continue;
            const std::uint64_t t = transpose8x8(bytes[y]);  // byte r: bit r of byte y of each code
            for (unsigned r = 0; r < 8; ++r) rows[8 * y + r] |= ((t >> (8 * r)) & 0xff) << (8 * k);
        }
    }
}

template <typename T>
void quantize_portable(const double* x, const double* pred, std::uint64_t m, double step, double eb, double abs_bound,
                       std::int32_t* code, std::uint8_t* outlier, double* work) {
    for (std::uint64_t i = 0; i < m; ++i) {
        const EncodedPoint p = encode_point<T>(x[i], false, pred[i], step, eb, abs_bound);
        code[i] = p.code;
        outlier[i] = p.outlier;
        work[i] = p.work;
    }
}

template <typename T>
void to_elements_portable(const double* w, std::uint64_t n, std::uint8_t* out) {
    for (std::uint64_t i = 0; i < n; ++i) store_le<T>(out + i * sizeof(T), to_element<T>(w[i]));
}

}  // namespace

const PrismCpuKernels kPortablePrismKernels{"portable",
                                            truncation_stats_one_thread,
                                            kPortableMask<float>,
                                            kPortableMask<double>,
                                            deposit_plane_portable,
                                            {quantize_portable<float>, quantize_portable<double>},
                                            words_to_rows,
                                            {to_elements_portable<float>, to_elements_portable<double>}};

}  // namespace mans::detail::prism
