// warp_team.hpp - the lanes of one warp as a team (core/team.hpp): the
// GPU form of the teams that the CPU tests play with loops and threads.
// Used by the module's kernels (gpu_module.cu) and by the build check of
// the shared PRISM code (tests/gpu/hd_compile_check.cu).
#pragma once

#include <cstdint>

#include "gpu_runtime.hpp"  // first: the runtime's headers define __host__ etc.

#include "core/team.hpp"

namespace mans::detail {

inline constexpr unsigned kWarp = MANS_GPU_WARP_SIZE;
#if defined(__CUDA_ARCH__) || defined(__HIP_DEVICE_COMPILE__)
#define MANS_GPU_DEVICE_PASS 1
#endif

// MANS_GPU_ENCODE: the encoder kernels. The build turns them off in the
// HIP module unless MANS_HIP_COMPRESS is ON: Debian's hipcc (clang 15)
// takes too long to compile the gfx9 encoder for CI (backends/gpu/README.md).
#ifndef MANS_GPU_ENCODE
#define MANS_GPU_ENCODE 1
#endif

// The lanes of one warp as a team (core/team.hpp): the team that codes a
// MANS block, or a PRISM plane chunk. Its members are host+device because
// the coders are; only the device pass runs them. add / add64 / or_word /
// fence_atomics exist with MANS_GPU_ENCODE only (the encoders use them).
struct WarpTeam {
    unsigned lane;
    std::uint64_t* area;  // kTeamSharedWords words of this warp's shared memory

    __host__ __device__ unsigned size() const { return kWarp; }
    template <typename F>
    __host__ __device__ void for_ranks(F&& fn) const {
#ifdef MANS_GPU_DEVICE_PASS
        mans_gpu_syncwarp();
        fn(lane);
        mans_gpu_syncwarp();
#else
        for (unsigned r = 0; r < kWarp; ++r) fn(r);
#endif
    }
    __host__ __device__ bool leads() const { return lane == 0; }
    __host__ __device__ std::uint64_t* shared() const { return area; }
#if MANS_GPU_ENCODE  // histograms and shared raw-bit words: the encoder's only
    __host__ __device__ void add(std::uint32_t* p, std::uint32_t v) const {
#ifdef MANS_GPU_DEVICE_PASS
        atomicAdd(reinterpret_cast<unsigned*>(p), static_cast<unsigned>(v));
#else
        *p += v;
#endif
    }
    __host__ __device__ void add64(std::uint64_t* p, std::uint64_t v) const {
#ifdef MANS_GPU_DEVICE_PASS
        atomicAdd(reinterpret_cast<unsigned long long*>(p), static_cast<unsigned long long>(v));
#else
        *p += v;
#endif
    }
    __host__ __device__ void or_word(std::uint32_t* p, std::uint32_t v) const {
#ifdef MANS_GPU_DEVICE_PASS
        atomicOr(reinterpret_cast<unsigned*>(p), static_cast<unsigned>(v));
#else
        *p |= v;
#endif
    }
    // Device scope: the atomics were performed in L2, and the plain loads
    // that follow must not hit lines an earlier load left in L1.
    __host__ __device__ void fence_atomics() const {
#ifdef MANS_GPU_DEVICE_PASS
        __threadfence();
#endif
    }
#endif
};

}  // namespace mans::detail
