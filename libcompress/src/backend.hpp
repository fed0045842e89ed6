// backend.hpp - what the core asks of an execution backend.
//
// The core never includes a backend: it calls through this interface, which
// the CPU backend (backends/cpu) implements and registers. A backend decides
// how blocks are scheduled and which kernels run; it never changes the bytes.
#pragma once

#include <cstddef>
#include <functional>

#include "entropy/rans.hpp"

namespace mans::detail {

namespace prism {
struct PlaneBitKernels;  // prism/plane_coding.hpp
struct PrismCpuKernels;  // prism/cpu_kernels.hpp
}

struct HybridTokenizeArgs;     // mapping/hybrid_tokens.hpp
struct HybridReconstructArgs;  // mapping/block_decode.hpp

// The CPU's SIMD kernels (or their portable forms), chosen at run time.
struct RansKernels {
    const char* name;
    const char* description;  // backend and kernels, e.g. "cpu (avx2)"
    void (*encode)(RansEncodeArgs&);
    bool (*decode)(const RansDecodeArgs&);
    // The hybrid-token mapping's tokens and raw bits of a block of elements
    // of up to 32 bits (tokenize_hybrid_serial's bytes; returns the raw-bit
    // bytes), or null: tokenize_hybrid_serial itself.
    std::size_t (*tokenize_hybrid)(const HybridTokenizeArgs&);
    // Its inverse for elements of up to 32 bits (reconstruct_hybrid_serial's
    // elements and verdict), or null: reconstruct_hybrid_serial itself.
    bool (*reconstruct_hybrid)(const HybridReconstructArgs&);
};

struct Backend {
    const char* name;
    // SIMD kernels when the CPU has them and force_scalar is false.
    const RansKernels& (*kernels)(bool force_scalar);
    // Runs fn(block, worker) for every block in [0, count) on up to `threads`
    // workers (0 = all); worker < max_workers(threads).
    void (*for_each_block)(std::size_t count, int threads,
                           const std::function<void(std::size_t, int)>& fn);
    int (*max_workers)(int threads);
    // PRISM's bitplane split and merge for one thread: PEXT / PDEP
    // instructions where the CPU has fast ones, else byte tables
    // (prism::kTablePlaneBits).
    const prism::PlaneBitKernels& (*plane_bits)();
    // PRISM's loops over whole chunks (prism/cpu_kernels.hpp): AVX2 where
    // the CPU has it, else the portable forms.
    const prism::PrismCpuKernels& (*prism_kernels)();
};

const Backend& cpu_backend();

}  // namespace mans::detail
