// cpu_backend.cpp - the always-present CPU backend: OpenMP over blocks and
// the best rANS kernels this CPU runs. Output never depends on either.
#include <cstdlib>
#include <exception>

#ifdef _OPENMP
#include <omp.h>
#endif

#include "backend.hpp"
#include "cpu_features.hpp"
#include "plane_bits_bmi2.hpp"  // MANS_HAVE_BMI2_KERNELS
#include "prism/cpu_kernels.hpp"
#include "prism/plane_coding.hpp"
#include "prism_avx2.hpp"
#include "rans_avx2.hpp"
#include "reconstruct_avx2.hpp"
#include "tokenize_avx2.hpp"

namespace mans::detail {

namespace {

const RansKernels kScalarKernels{"scalar", "cpu (scalar)", rans_encode_scalar, rans_decode_scalar, nullptr, nullptr};
#ifdef MANS_HAVE_AVX2_KERNELS
// The tokenizer also needs BMI2, which every AVX2 CPU we know of has; a
// (virtual) CPU without it gets the rANS kernels alone.
const RansKernels kAvx2Kernels{"avx2", "cpu (avx2)", cpu::rans_encode_avx2, cpu::rans_decode_avx2,
                               cpu::tokenize_hybrid_avx2, cpu::reconstruct_hybrid_avx2};
const RansKernels kAvx2OnlyKernels{"avx2", "cpu (avx2, no bmi2)", cpu::rans_encode_avx2, cpu::rans_decode_avx2,
                                   nullptr, cpu::reconstruct_hybrid_avx2};
#endif

const RansKernels& cpu_kernels(bool force_scalar) {
#ifdef MANS_HAVE_AVX2_KERNELS
    if (!force_scalar && cpu::cpu_features().avx2) return cpu::cpu_features().bmi2 ? kAvx2Kernels : kAvx2OnlyKernels;
#else
    (void)force_scalar;
#endif
    return kScalarKernels;
}

const prism::PlaneBitKernels& cpu_plane_bits() {
#ifdef MANS_HAVE_BMI2_KERNELS
    if (cpu::cpu_features().fast_bmi2 && cpu::cpu_features().popcnt) return cpu::kBmi2PlaneBits;
#endif
    return prism::kTablePlaneBits;
}

const prism::PrismCpuKernels& cpu_prism_kernels() {
#ifdef MANS_HAVE_AVX2_KERNELS
    if (cpu::cpu_features().avx2) return cpu::kAvx2PrismKernels;
#endif
    return prism::kPortablePrismKernels;
}

int cpu_max_workers(int threads) {
#ifdef _OPENMP
    return threads > 0 ? threads : omp_get_max_threads();
#else
    (void)threads;
    return 1;
#endif
}

void cpu_for_each_block(std::size_t count, int threads, const std::function<void(std::size_t, int)>& fn) {
    // Never more threads than blocks: each thread costs (and libgomp exits
    // the process when it cannot create one).
    int workers = cpu_max_workers(threads);
    if (static_cast<std::size_t>(workers) > count) workers = static_cast<int>(count);
    if (workers <= 1 || count <= 1) {
        for (std::size_t b = 0; b < count; ++b) fn(b, 0);
        return;
    }
#ifdef _OPENMP
    // Exceptions must not leave an OpenMP region: the first one is kept and
    // rethrown on the calling thread.
    std::exception_ptr first_error;
#pragma omp parallel num_threads(workers)
    {
        const int worker = omp_get_thread_num();
#pragma omp for schedule(dynamic, 1)
        for (long long b = 0; b < static_cast<long long>(count); ++b) {
            try {
                fn(static_cast<std::size_t>(b), worker);
            } catch (...) {
#pragma omp critical(mans_block_error)
                if (!first_error) first_error = std::current_exception();
            }
        }
    }
    if (first_error) std::rethrow_exception(first_error);
#endif
}

const Backend kCpuBackend{"cpu", cpu_kernels, cpu_for_each_block, cpu_max_workers, cpu_plane_bits,
                             cpu_prism_kernels};

}  // namespace

const Backend& cpu_backend() { return kCpuBackend; }

}  // namespace mans::detail
