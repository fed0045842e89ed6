// hd.hpp - marks functions shared by the CPU and the GPU backends.
//
// Per-element and per-lane arithmetic (token mapping, rANS lane steps) is
// written once as MANS_HD inline functions so that the CPU tests exercise the
// exact code that the CUDA/HIP kernels run.
#pragma once

#if defined(__HIPCC__)
#include <hip/hip_runtime.h>  // __host__, __device__, __forceinline__ (nvcc predefines them)
#endif

#if defined(__CUDACC__) || defined(__HIPCC__)
#define MANS_HD __host__ __device__ inline
// The large shared functions (a mapping, a table, a whole stream) stay
// calls on a GPU: inlined into one kernel, the block encoder took nvcc over
// 12 minutes and a 243 KiB stack frame per thread. hipcc honours
// __noinline__ only with --hipcc-func-supp (backends/gpu/CMakeLists.txt).
// The CPU build inlines as it likes.
#define MANS_HD_CALL __host__ __device__ __noinline__
#else
#define MANS_HD inline
#define MANS_HD_CALL inline
#endif

#include <cstddef>
#include <cstdint>

namespace mans::detail {

// memcpy/memset for MANS_HD code: std::memcpy is a host function to the GPU
// compilers, the builtins compile everywhere (on the host: a memcpy call).
MANS_HD void hd_memcpy(void* dst, const void* src, std::size_t n) { __builtin_memcpy(dst, src, n); }
MANS_HD void hd_memset(void* dst, int v, std::size_t n) { __builtin_memset(dst, v, n); }

// Bit counts with the GPU's intrinsics in device code.
MANS_HD unsigned bit_length64(std::uint64_t v) {
#if defined(__CUDA_ARCH__) || defined(__HIP_DEVICE_COMPILE__)
    return v ? 64u - static_cast<unsigned>(__clzll(static_cast<long long>(v))) : 0u;
#else
    return v ? 64u - static_cast<unsigned>(__builtin_clzll(v)) : 0u;
#endif
}

// Trailing zeros of a non-zero 32-bit value.
MANS_HD unsigned ctz32(std::uint32_t v) {
#if defined(__CUDA_ARCH__) || defined(__HIP_DEVICE_COMPILE__)
    return static_cast<unsigned>(__ffs(static_cast<int>(v))) - 1u;
#else
    return static_cast<unsigned>(__builtin_ctz(v));
#endif
}

// Trailing zeros of a non-zero 64-bit value.
MANS_HD unsigned ctz64(std::uint64_t v) {
#if defined(__CUDA_ARCH__) || defined(__HIP_DEVICE_COMPILE__)
    return static_cast<unsigned>(__ffsll(static_cast<long long>(v))) - 1u;
#else
    return static_cast<unsigned>(__builtin_ctzll(v));
#endif
}

// Atomic adds and ORs for MANS_HD code whose threads meet on a word (sums
// of integers, bitmaps): the GPU's atomics on a device, relaxed atomics on
// the host.
MANS_HD void hd_atomic_add_u64(std::uint64_t* p, std::uint64_t v) {
#if defined(__CUDA_ARCH__) || defined(__HIP_DEVICE_COMPILE__)
    atomicAdd(reinterpret_cast<unsigned long long*>(p), static_cast<unsigned long long>(v));
#else
    __atomic_fetch_add(p, v, __ATOMIC_RELAXED);
#endif
}
MANS_HD void hd_atomic_or_u32(std::uint32_t* p, std::uint32_t v) {
#if defined(__CUDA_ARCH__) || defined(__HIP_DEVICE_COMPILE__)
    atomicOr(reinterpret_cast<unsigned*>(p), static_cast<unsigned>(v));
#else
    __atomic_fetch_or(p, v, __ATOMIC_RELAXED);
#endif
}

// Set bits of a 64-bit value.
MANS_HD unsigned popcount64_hd(std::uint64_t v) {
#if defined(__CUDA_ARCH__) || defined(__HIP_DEVICE_COMPILE__)
    return static_cast<unsigned>(__popcll(v));
#else
    // SWAR: the baseline x86-64 target has no popcnt instruction, and
    // __builtin_popcountll would be a library call.
    v -= (v >> 1) & 0x5555555555555555ULL;
    v = (v & 0x3333333333333333ULL) + ((v >> 2) & 0x3333333333333333ULL);
    v = (v + (v >> 4)) & 0x0f0f0f0f0f0f0f0fULL;
    return static_cast<unsigned>((v * 0x0101010101010101ULL) >> 56);
#endif
}

}  // namespace mans::detail
