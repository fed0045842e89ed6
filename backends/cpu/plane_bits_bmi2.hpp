// plane_bits_bmi2.hpp - PRISM's bitplane split and merge with the PEXT /
// PDEP instructions (BMI2), called only after run-time detection
// (cpu_backend.cpp). The same streams and planes as the byte tables.
#pragma once

#include "prism/plane_coding.hpp"

namespace mans::cpu {

extern const detail::prism::PlaneBitKernels kBmi2PlaneBits;

}  // namespace mans::cpu
