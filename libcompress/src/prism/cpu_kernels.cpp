// cpu_kernels.cpp - the portable forms of PRISM's CPU kernels: the MANS_HD
// definitions themselves.
#include "prism/cpu_kernels.hpp"

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

}  // namespace

const PrismCpuKernels kPortablePrismKernels{"portable",
                                            truncation_stats_one_thread,
                                            kPortableMask<float>,
                                            kPortableMask<double>,
                                            deposit_plane_portable,
                                            {quantize_portable<float>, quantize_portable<double>}};

}  // namespace mans::detail::prism
