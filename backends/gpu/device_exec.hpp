// device_exec.hpp - prism/device_encoder.hpp's executor on a GPU: device
// memory from the runtime, synchronous copies, a launch of one thread per
// item (threads) or one warp per item (teams, with the warp's TeamScratch
// in shared memory), on the default stream. The first runtime error is
// kept and ends every later launch; status() reports it.
//
// The module's prism_compress (gpu_module.cu) runs device_compress with
// it, handing it the module's chunk encoder for the rANS candidates (and
// its chunk decoder for device_reconstruct's rANS streams);
// tests/gpu/hd_compile_check.cu instantiates both without them (nvcc with
// --extended-lambda, hipcc), when rans_candidates and rans_decode answer
// backend_unavailable.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "warp_team.hpp"  // first: it includes the runtime's headers

#include "prism/device_decoder.hpp"
#include "prism/device_encoder.hpp"

namespace mans::gpu {

inline constexpr unsigned kExecThreads = 256;  // threads per block of a thread launch
inline constexpr unsigned kExecWarps = 4;      // warps per block of a team launch
inline constexpr std::uint64_t kExecMaxBlocks = 65535;  // grid-stride beyond

// A warp's transpose of a chunk's words into planes: one ballot per plane
// and 32 (or 64) codes (transpose_planes_by_ballot, the loop form's planes;
// the loop form's accumulators cost a 256-byte stack frame per lane).
// Host + device because the executor's lambdas are; the host side is never
// run (it plays the loop form).
struct BallotTranspose {
    __host__ __device__ void operator()(const mans::detail::WarpTeam& team, const std::uint32_t* words,
                                        std::uint64_t len, unsigned planes, mans::detail::prism::Coding c,
                                        std::uint64_t* bits) const {
#if defined(__CUDA_ARCH__) || defined(__HIP_DEVICE_COMPILE__)
        mans::detail::prism::transpose_planes_by_ballot(
            team, [](bool v) { return static_cast<std::uint64_t>(mans_gpu_ballot(v)); }, words, len, planes, c, bits);
#else
        mans::detail::prism::transpose_planes(team, words, len, planes, c, bits);
#endif
    }
};

template <typename F>
__global__ void exec_threads(std::uint64_t n, F fn) {
    const std::uint64_t step = static_cast<std::uint64_t>(gridDim.x) * blockDim.x;
    for (std::uint64_t i = static_cast<std::uint64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += step) fn(i);
}

template <typename F>
__global__ void exec_teams(std::uint64_t n, F fn) {
    __shared__ mans::detail::prism::TeamScratch scratch[kExecWarps];
    const unsigned warp = threadIdx.x / mans::detail::kWarp;
    const mans::detail::WarpTeam team{threadIdx.x % mans::detail::kWarp, scratch[warp].area};
    const std::uint64_t step = static_cast<std::uint64_t>(gridDim.x) * kExecWarps;
    // The item depends on the warp only: its lanes stay together.
    for (std::uint64_t i = static_cast<std::uint64_t>(blockIdx.x) * kExecWarps + warp; i < n; i += step)
        fn(team, &scratch[warp], i);
}

class DeviceExec {
public:
    using Team = mans::detail::WarpTeam;
    using Transpose = BallotTranspose;

    // encode, decode: the module's chunk_encode and chunk_decode
    // (mans_backend_chunks_fn), or null.
    explicit DeviceExec(mans_backend_chunks_fn encode = nullptr, mans_backend_chunks_fn decode = nullptr)
        : encode_(encode), decode_(decode) {}
    DeviceExec(const DeviceExec&) = delete;
    DeviceExec& operator=(const DeviceExec&) = delete;
    ~DeviceExec() {
        for (void* p : blocks_) (void)free(p);  // nothing to do about a failed free
    }

    template <typename U>
    U* alloc(std::uint64_t n) {
        void* p = nullptr;
        if (err_ == kSuccess) err_ = malloc(&p, static_cast<std::size_t>(n * sizeof(U)) + 1);
        if (p) blocks_.push_back(p);
        return static_cast<U*>(p);
    }
    std::size_t mark() const { return blocks_.size(); }
    // cudaFree / hipFree wait for the device, so the launches that used
    // the blocks are done.
    void release(std::size_t m) {
        while (blocks_.size() > m) {
            const Error e = free(blocks_.back());
            if (err_ == kSuccess) err_ = e;
            blocks_.pop_back();
        }
    }
    void to_host(void* dst, const void* src, std::size_t bytes) {
        if (err_ == kSuccess && bytes) err_ = memcpy(dst, src, bytes, kDeviceToHost);
    }
    void to_device(void* dst, const void* src, std::size_t bytes) {
        if (err_ == kSuccess && bytes) err_ = memcpy(dst, src, bytes, kHostToDevice);
    }
    template <typename F>
    void threads(std::uint64_t n, F fn) {
        if (err_ != kSuccess || n == 0) return;
        const std::uint64_t blocks = (n + kExecThreads - 1) / kExecThreads;
        exec_threads<<<static_cast<unsigned>(blocks < kExecMaxBlocks ? blocks : kExecMaxBlocks), kExecThreads>>>(n, fn);
        err_ = last_error();
    }
    template <typename F>
    void teams(std::uint64_t n, F fn) {
        if (err_ != kSuccess || n == 0) return;
        const std::uint64_t blocks = (n + kExecWarps - 1) / kExecWarps;
        exec_teams<<<static_cast<unsigned>(blocks < kExecMaxBlocks ? blocks : kExecMaxBlocks),
                     kExecWarps * mans::detail::kWarp>>>(n, fn);
        err_ = last_error();
    }
    // The candidates coded by the module's chunk encoder on the default
    // stream (so ordered with the launches around it).
    Errc rans_candidates(const mans::detail::prism::StreamBatch& b, mans_backend_chunk_batch* a) {
        if (!encode_) return Errc::backend_unavailable;
        // Blocks in flight: as many as kRansTempBudget of scratch slices
        // hold (slices sized for the largest stream: about 1 MiB for a
        // plane chunk's 16 KiB, where a whole 128 KiB block's took 6 MiB),
        // at most kRansWave, at least one.
        MANS_RETURN_IF_ERROR(
            mans::detail::prism::bind_rans_candidates(*this, b, {kRansTempBudget, kRansWave}, a));
        if (err_ != kSuccess) return status();
        if (a->chunks == 0) return Errc::ok;
        if (encode_(a, &coder_error_) < 0) {
            coder_failed_ = true;
            return Errc::backend_unavailable;
        }
        return Errc::ok;
    }
    // PRISM's rANS streams decoded by the module's chunk decoder on the
    // default stream (prism/device_decoder.hpp), with as many blocks in
    // flight as kRansTempBudget of scratch slices hold.
    Errc rans_decode(mans_backend_chunk_batch* a) {
        if (!decode_) return Errc::backend_unavailable;
        const std::uint64_t slice = mans::detail::block_scratch_bytes(static_cast<std::size_t>(a->max_block_bytes), 1);
        std::uint64_t wave = slice ? kRansTempBudget / slice : 1;
        wave = wave < 1 ? 1 : wave > mans::detail::kChunkWaveBlocks ? mans::detail::kChunkWaveBlocks : wave;
        MANS_RETURN_IF_ERROR(mans::detail::prism::bind_rans_decode(*this, a, wave));
        if (err_ != kSuccess) return status();
        if (decode_(a, &coder_error_) < 0) {
            coder_failed_ = true;
            return Errc::backend_unavailable;
        }
        return Errc::ok;
    }
    // What failed, for the module's error text ("" when nothing did).
    const char* error_text() const {
        if (coder_failed_) return coder_error_.text;
        return err_ == kSuccess ? "" : error_string(err_);
    }
    // ok, or the first runtime error: out_of_memory for a failed
    // allocation, backend_unavailable for any other.
    Errc status() const {
        if (coder_failed_) return Errc::backend_unavailable;
        if (err_ == kSuccess) return Errc::ok;
        return err_ == kErrorMemoryAllocation ? Errc::out_of_memory : Errc::backend_unavailable;
    }
    // Waits for the launches; the first error of any.
    Errc finish() {
        if (err_ == kSuccess) err_ = device_sync();
        return status();
    }

private:
    static constexpr std::uint64_t kRansWave = 2048;
    static constexpr std::uint64_t kRansTempBudget = std::uint64_t{1} << 30;
    mans_backend_chunks_fn encode_ = nullptr;
    mans_backend_chunks_fn decode_ = nullptr;
    mans_backend_probe_result coder_error_{};
    Error err_ = kSuccess;
    bool coder_failed_ = false;
    std::vector<void*> blocks_;
};

}  // namespace mans::gpu
