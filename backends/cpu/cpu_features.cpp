// cpu_features.cpp - see cpu_features.hpp.
#include "cpu_features.hpp"

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#endif

namespace mans::cpu {

namespace {
CpuFeatures probe() {
    CpuFeatures f;
#if defined(__x86_64__) || defined(__i386__)
    unsigned a = 0, b = 0, c = 0, d = 0;
    if (!__get_cpuid(1, &a, &b, &c, &d)) return f;
    const bool osxsave = (c >> 27) & 1, avx = (c >> 28) & 1;
    if (!osxsave || !avx) return f;
    // The OS must save the YMM registers (XCR0 bits 1 and 2).
    unsigned xcr0_lo = 0, xcr0_hi = 0;
    __asm__("xgetbv" : "=a"(xcr0_lo), "=d"(xcr0_hi) : "c"(0));
    if ((xcr0_lo & 6) != 6) return f;
    if (!__get_cpuid_count(7, 0, &a, &b, &c, &d)) return f;
    f.avx2 = (b >> 5) & 1;
#endif
    return f;
}
}  // namespace

const CpuFeatures& cpu_features() {
    static const CpuFeatures features = probe();  // thread-safe one-time init
    return features;
}

}  // namespace mans::cpu
