// cpu_features.hpp - run-time ISA detection, probed once.
#pragma once

namespace mans::cpu {

struct CpuFeatures {
    bool avx2 = false;  // AVX2 usable (CPU flag and OS-enabled YMM state)
    bool bmi2 = false;    // BMI2 instructions (PEXT, PDEP, ...)
    bool popcnt = false;  // the POPCNT instruction
    // BMI2 with PEXT / PDEP in hardware: not AMD (or Hygon) before Zen 3,
    // where they are microcoded and slower than byte tables.
    bool fast_bmi2 = false;
};

const CpuFeatures& cpu_features();

}  // namespace mans::cpu
