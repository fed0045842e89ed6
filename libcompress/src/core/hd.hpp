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
#define MANS_HD __host__ __device__ __forceinline__
#else
#define MANS_HD inline
#endif
