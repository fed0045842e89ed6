// cpu_features.cpp - see cpu_features.hpp.
#include "cpu_features.hpp"

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>

#include <cstring>
#endif

namespace mans::cpu {

namespace {
CpuFeatures probe() {
    CpuFeatures f;
#if defined(__x86_64__) || defined(__i386__)
    unsigned a = 0, b = 0, c = 0, d = 0;
    if (!__get_cpuid(0, &a, &b, &c, &d)) return f;
    char vendor[13] = {};
    std::memcpy(vendor, &b, 4);
    std::memcpy(vendor + 4, &d, 4);
    std::memcpy(vendor + 8, &c, 4);
    if (!__get_cpuid(1, &a, &b, &c, &d)) return f;
    const unsigned base_family = (a >> 8) & 0xf;
    const unsigned family = base_family == 0xf ? base_family + ((a >> 20) & 0xff) : base_family;
    const bool osxsave = (c >> 27) & 1, avx = (c >> 28) & 1;
    f.popcnt = (c >> 23) & 1;
    unsigned b7 = 0;
    if (__get_cpuid_count(7, 0, &a, &b7, &c, &d)) {
        // BMI2 works on general registers: no OS state to check.
        f.bmi2 = (b7 >> 8) & 1;
        const bool amd_like = std::strcmp(vendor, "AuthenticAMD") == 0 || std::strcmp(vendor, "HygonGenuine") == 0;
        f.fast_bmi2 = f.bmi2 && !(amd_like && family < 0x19);
    }
    if (!osxsave || !avx) return f;
    // The OS must save the YMM registers (XCR0 bits 1 and 2).
    unsigned xcr0_lo = 0, xcr0_hi = 0;
    __asm__("xgetbv" : "=a"(xcr0_lo), "=d"(xcr0_hi) : "c"(0));
    if ((xcr0_lo & 6) != 6) return f;
    f.avx2 = (b7 >> 5) & 1;
#endif
    return f;
}
}  // namespace

const CpuFeatures& cpu_features() {
    static const CpuFeatures features = probe();  // thread-safe one-time init
    return features;
}

}  // namespace mans::cpu
