// cpu_features.hpp - run-time ISA detection, probed once.
#pragma once

namespace mans::cpu {

struct CpuFeatures {
    bool avx2 = false;  // AVX2 usable (CPU flag and OS-enabled YMM state)
};

const CpuFeatures& cpu_features();

}  // namespace mans::cpu
