// prism_avx2.hpp - PRISM's CPU kernels (prism/cpu_kernels.hpp) with AVX2,
// built for it in their own translation unit and called only after
// run-time detection (cpu_backend.cpp). MANS_HAVE_AVX2_KERNELS: see
// libcompress/CMakeLists.txt.
#pragma once

#include "prism/cpu_kernels.hpp"

#ifdef MANS_HAVE_AVX2_KERNELS
namespace mans::cpu {

extern const detail::prism::PrismCpuKernels kAvx2PrismKernels;

}  // namespace mans::cpu
#endif
