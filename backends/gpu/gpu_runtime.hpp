// gpu_runtime.hpp - one set of names for the CUDA and the HIP runtime.
//
// Kernels and module code are written once against these names and built by
// nvcc (CUDA) or hipcc (HIP). Only this file knows which runtime it is.
// Launches use <<<grid, block, shmem, stream>>>, which both compilers accept.
// Warp-level helpers hide the one real difference: a HIP wavefront on
// gfx90a/gfx908 has 64 lanes, a CUDA warp 32 (masks are 64-bit here).
#pragma once

#include <cstdint>

#if defined(__HIPCC__)
#include <hip/hip_runtime.h>
#define MANS_GPU_RUNTIME "HIP"
namespace mans::gpu {
using Error = hipError_t;
using Stream = hipStream_t;
using DeviceProp = hipDeviceProp_t;
using FuncAttributes = hipFuncAttributes;
inline constexpr Error kSuccess = hipSuccess;
inline constexpr Error kErrorMemoryAllocation = hipErrorOutOfMemory;
inline constexpr auto kHostToDevice = hipMemcpyHostToDevice;
inline constexpr auto kDeviceToHost = hipMemcpyDeviceToHost;
inline Error device_count(int* n) { return hipGetDeviceCount(n); }
inline Error device_props(DeviceProp* p, int dev) { return hipGetDeviceProperties(p, dev); }
inline Error set_device(int dev) { return hipSetDevice(dev); }
inline Error malloc(void** p, std::size_t bytes) { return hipMalloc(p, bytes); }
inline Error free(void* p) { return hipFree(p); }
inline Error memcpy(void* d, const void* s, std::size_t n, hipMemcpyKind k) { return hipMemcpy(d, s, n, k); }
inline Error memcpy_async(void* d, const void* s, std::size_t n, hipMemcpyKind k, Stream st) {
    return hipMemcpyAsync(d, s, n, k, st);
}
inline Error memset(void* d, int v, std::size_t n) { return hipMemset(d, v, n); }
inline Error stream_create(Stream* s) { return hipStreamCreateWithFlags(s, hipStreamNonBlocking); }
inline Error stream_destroy(Stream s) { return hipStreamDestroy(s); }
inline Error stream_sync(Stream s) { return hipStreamSynchronize(s); }
inline Error device_sync() { return hipDeviceSynchronize(); }
inline Error mem_info(std::size_t* free_bytes, std::size_t* total) { return hipMemGetInfo(free_bytes, total); }
inline Error get_device(int* dev) { return hipGetDevice(dev); }
// HIP sizes a kernel's scratch (stack) from its code; there is no limit to set.
inline Error raise_stack_limit(std::size_t) { return hipSuccess; }
inline Error last_error() { return hipGetLastError(); }
inline const char* error_string(Error e) { return hipGetErrorString(e); }
template <typename F>
inline Error func_attributes(FuncAttributes* a, F* f) { return hipFuncGetAttributes(a, reinterpret_cast<const void*>(f)); }
// Thread blocks of `threads` threads of kernel f that one compute unit holds at once.
template <typename F>
inline Error resident_groups(int* groups, F* f, int threads) {
    return hipOccupancyMaxActiveBlocksPerMultiprocessor(groups, reinterpret_cast<const void*>(f), threads, 0);
}
inline Error multiprocessors(int* n, int dev) { return hipDeviceGetAttribute(n, hipDeviceAttributeMultiprocessorCount, dev); }
// "gfx90a:sramecc+:xnack-" etc.
inline const char* arch_name(const DeviceProp& p) { return p.gcnArchName; }
}  // namespace mans::gpu
// Warp (wavefront) primitives: every active lane of the warp must call them.
#define MANS_GPU_WARP_SIZE 64
// A team is one wavefront (core/team.hpp): built for wave64 targets only.
#if defined(__HIP_DEVICE_COMPILE__) && defined(__AMDGCN_WAVEFRONT_SIZE)
static_assert(__AMDGCN_WAVEFRONT_SIZE == MANS_GPU_WARP_SIZE, "the HIP module assumes 64-lane wavefronts (gfx9)");
#endif
__device__ __forceinline__ std::uint64_t mans_gpu_ballot(bool p) { return __ballot(p); }
// Wavefronts execute in lockstep on gfx9; the fences order the lanes'
// memory accesses around the barrier, since lanes read what other lanes
// wrote (the team's shared words, core/team.hpp).
__device__ __forceinline__ void mans_gpu_syncwarp() {
    __builtin_amdgcn_fence(__ATOMIC_RELEASE, "wavefront");
    __builtin_amdgcn_wave_barrier();
    __builtin_amdgcn_fence(__ATOMIC_ACQUIRE, "wavefront");
}

#elif defined(__CUDACC__)
#include <cuda_runtime.h>
#define MANS_GPU_RUNTIME "CUDA"
namespace mans::gpu {
using Error = cudaError_t;
using Stream = cudaStream_t;
using DeviceProp = cudaDeviceProp;
using FuncAttributes = cudaFuncAttributes;
inline constexpr Error kSuccess = cudaSuccess;
inline constexpr Error kErrorMemoryAllocation = cudaErrorMemoryAllocation;
inline constexpr auto kHostToDevice = cudaMemcpyHostToDevice;
inline constexpr auto kDeviceToHost = cudaMemcpyDeviceToHost;
inline Error device_count(int* n) { return cudaGetDeviceCount(n); }
inline Error device_props(DeviceProp* p, int dev) { return cudaGetDeviceProperties(p, dev); }
inline Error set_device(int dev) { return cudaSetDevice(dev); }
inline Error malloc(void** p, std::size_t bytes) { return cudaMalloc(p, bytes); }
inline Error free(void* p) { return cudaFree(p); }
inline Error memcpy(void* d, const void* s, std::size_t n, cudaMemcpyKind k) { return cudaMemcpy(d, s, n, k); }
inline Error memcpy_async(void* d, const void* s, std::size_t n, cudaMemcpyKind k, Stream st) {
    return cudaMemcpyAsync(d, s, n, k, st);
}
inline Error memset(void* d, int v, std::size_t n) { return cudaMemset(d, v, n); }
inline Error stream_create(Stream* s) { return cudaStreamCreateWithFlags(s, cudaStreamNonBlocking); }
inline Error stream_destroy(Stream s) { return cudaStreamDestroy(s); }
inline Error stream_sync(Stream s) { return cudaStreamSynchronize(s); }
inline Error device_sync() { return cudaDeviceSynchronize(); }
inline Error mem_info(std::size_t* free_bytes, std::size_t* total) { return cudaMemGetInfo(free_bytes, total); }
inline Error get_device(int* dev) { return cudaGetDevice(dev); }
// Raises the per-thread stack limit to at least `bytes` and leaves it
// there, as the driver itself does for a kernel that needs more ("The
// driver automatically increases the per-thread stack size for each kernel
// launch as needed. This size isn't reset back to the original value after
// each launch", cuCtxSetLimit); setting it may wait for all queued work on
// the device, so it is never lowered again. Two threads may both read the
// old limit and the later set a lower value than the other's: harmless, as
// the launch that needs more raises it (the driver, above).
inline Error raise_stack_limit(std::size_t bytes) {
    std::size_t now = 0;
    Error e = cudaDeviceGetLimit(&now, cudaLimitStackSize);
    if (e == cudaSuccess && now < bytes) e = cudaDeviceSetLimit(cudaLimitStackSize, bytes);
    return e;
}
inline Error last_error() { return cudaGetLastError(); }
inline const char* error_string(Error e) { return cudaGetErrorString(e); }
template <typename F>
inline Error func_attributes(FuncAttributes* a, F* f) { return cudaFuncGetAttributes(a, f); }
// Thread blocks of `threads` threads of kernel f that one SM holds at once.
template <typename F>
inline Error resident_groups(int* groups, F* f, int threads) {
    return cudaOccupancyMaxActiveBlocksPerMultiprocessor(groups, f, threads, 0);
}
inline Error multiprocessors(int* n, int dev) { return cudaDeviceGetAttribute(n, cudaDevAttrMultiProcessorCount, dev); }
inline const char* arch_name(const DeviceProp&) { return nullptr; }  // use major/minor
}  // namespace mans::gpu
#define MANS_GPU_WARP_SIZE 32
__device__ __forceinline__ std::uint64_t mans_gpu_ballot(bool p) { return __ballot_sync(0xffffffffu, p); }
// Independent thread scheduling (sm_70+): reconverge before reusing shared state.
__device__ __forceinline__ void mans_gpu_syncwarp() { __syncwarp(); }

#else
#error "gpu_runtime.hpp is built by nvcc or hipcc only"
#endif

