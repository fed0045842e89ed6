// block_batch.hpp - decodes one block of a module's block batch
// (mans_backend_block_batch, backend_module.hpp).
//
// The per-block body of the GPU decode kernel (one thread per block,
// backends/gpu) and of the host stand-in module the dispatch tests load
// (tests/backend_fixture): MANS_HD, so both run the same code, which is the
// CPU's block decoder (block_decode.hpp) with the reference lane loop.
#pragma once

#include <cstddef>
#include <cstdint>

#include "backend_module.hpp"
#include "core/hd.hpp"
#include "mans/mans.h"
#include "mapping/block_decode.hpp"

namespace mans::detail {

// The reference rANS lane loop as a functor (the GPU has no SIMD kernels).
struct ReferenceLanes {
    MANS_HD bool operator()(const RansDecodeArgs& a) const { return rans_decode_reference(a); }
};

// Elements of block b of a batch.
MANS_HD std::uint64_t batch_block_elems(const mans_backend_block_batch& batch, std::uint64_t b) {
    return b + 1 == batch.blocks ? batch.last_elems : batch.block_elems;
}

// Decodes block b into its place in batch.dst using `scratch`
// (block_scratch_bytes(batch.block_elems) bytes, 16-byte aligned) and
// returns its mans_status. The pointers are in the memory the caller runs
// in (device memory in a kernel).
MANS_HD std::int32_t decode_batch_block(const mans_backend_block_batch& batch, std::uint64_t b,
                                        std::uint8_t* scratch) {
    const DType dtype = static_cast<DType>(batch.dtype);
    const unsigned esize = elem_bytes(dtype);
    if (esize == 0 || b >= batch.blocks) return MANS_ERR_INTERNAL;
    const std::uint64_t begin = batch.offsets[b], end = batch.offsets[b + 1];
    if (begin > end || end > batch.payload_bytes) return MANS_ERR_INTERNAL;  // the core checked these
    const std::size_t n = static_cast<std::size_t>(batch_block_elems(batch, b));
    const FixedBlockScratch sc = carve_block_scratch(scratch, static_cast<std::size_t>(batch.block_elems));
    const Errc e = decode_block_payload(dtype, batch.payloads + begin, static_cast<std::size_t>(end - begin), n,
                                        batch.dst + b * batch.block_elems * esize, ReferenceLanes{}, sc);
    return static_cast<std::int32_t>(e);
}

}  // namespace mans::detail
