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
// 12 minutes and a 243 KiB stack frame per thread. The CPU build inlines
// as it likes.
#define MANS_HD_CALL __host__ __device__ __noinline__
#else
#define MANS_HD inline
#define MANS_HD_CALL inline
#endif

#include <cstddef>

namespace mans::detail {

// memcpy/memset for MANS_HD code: std::memcpy is a host function to the GPU
// compilers, the builtins compile everywhere (on the host: a memcpy call).
MANS_HD void hd_memcpy(void* dst, const void* src, std::size_t n) { __builtin_memcpy(dst, src, n); }
MANS_HD void hd_memset(void* dst, int v, std::size_t n) { __builtin_memset(dst, v, n); }

}  // namespace mans::detail
