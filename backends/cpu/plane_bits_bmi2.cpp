// plane_bits_bmi2.cpp - see plane_bits_bmi2.hpp.
//
// Not built with -mbmi2: the header templates instantiated here (and the
// inline functions they call) would then be emitted with BMI2 code under
// the same names as the portable copies elsewhere, and the linker may keep
// either, for every caller. Only the three entry points below (and the
// gather's two members) carry the target attribute, and `flatten` inlines
// split_plane_one_pass / merge_plane / count_context_bits (portable code) and the
// gather into them, so each (word, stream) costs one PEXT or PDEP (checked
// in the disassembly, GCC 12 and Clang 14). GCC 12 also turns
// popcount64_hd's portable bit count into one POPCNT there (checked in the
// disassembly; another compiler may keep the portable count: same result).
// tests/test_prism_planes_hd.cpp compares both kernel sets.
#include "plane_bits_bmi2.hpp"

#ifdef MANS_HAVE_BMI2_KERNELS
#include <immintrin.h>

#include "core/team.hpp"
#include "prism/plane_split_hd.hpp"

namespace mans::cpu {
namespace {

namespace dp = detail::prism;

struct Bmi2BitGather {
    __attribute__((target("bmi2,popcnt"))) std::uint64_t gather(std::uint64_t v, std::uint64_t mask) const {
        return _pext_u64(v, mask);
    }
    __attribute__((target("bmi2,popcnt"))) std::uint64_t scatter(std::uint64_t v, std::uint64_t mask) const {
        return _pdep_u64(v, mask);
    }
};

__attribute__((target("popcnt"), flatten)) void count_context_bits_popcnt(const std::uint64_t* sig,
                                                                         const std::uint64_t* fresh, std::uint64_t len,
                                                                         dp::PlaneSplitScratch* scratch,
                                                                         std::uint64_t* total) {
    dp::count_context_bits(detail::SoloTeam{}, sig, fresh, len, scratch, total);
}

__attribute__((target("bmi2,popcnt"), flatten)) void split_plane_bmi2(const std::uint64_t* plane, const std::uint64_t* sig,
                                                               const std::uint64_t* fresh, std::uint64_t len,
                                                               dp::PlaneSplitScratch* scratch, std::uint32_t* streams,
                                                               std::uint64_t* bits) {
    dp::split_plane_one_pass(plane, sig, fresh, len, scratch, streams, bits, Bmi2BitGather{});
}

__attribute__((target("bmi2,popcnt"), flatten)) void merge_plane_bmi2(const std::uint8_t* const* stream,
                                                               const std::uint64_t* sig, const std::uint64_t* fresh,
                                                               std::uint64_t len, const dp::PlaneSplitScratch& scratch,
                                                               std::uint64_t* plane) {
    dp::merge_plane(detail::SoloTeam{}, stream, sig, fresh, len, scratch, plane, Bmi2BitGather{});
}

}  // namespace

const detail::prism::PlaneBitKernels kBmi2PlaneBits{"bmi2", count_context_bits_popcnt, split_plane_bmi2,
                                                     merge_plane_bmi2};

}  // namespace mans::cpu
#endif  // MANS_HAVE_BMI2_KERNELS
