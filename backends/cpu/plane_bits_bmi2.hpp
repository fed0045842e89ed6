// plane_bits_bmi2.hpp - PRISM's bitplane split and merge with the PEXT /
// PDEP instructions (BMI2) and the context bit counts with POPCNT, called
// only after run-time detection of both (cpu_backend.cpp). The same
// streams, planes and counts as the byte tables and the portable count.
//
// MANS_HAVE_BMI2_KERNELS: built (CMake's MANS_WITH_BMI2, and a compiler
// that targets x86-64 and knows GCC's target attribute; not for the other
// half of a universal or a -m32 build).
#pragma once

#include "prism/plane_coding.hpp"

#if defined(MANS_WITH_BMI2_KERNELS) && defined(__x86_64__) && defined(__GNUC__)
#define MANS_HAVE_BMI2_KERNELS 1

namespace mans::cpu {

extern const detail::prism::PlaneBitKernels kBmi2PlaneBits;

}  // namespace mans::cpu
#endif
