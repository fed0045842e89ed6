// stream_batch_hd.hpp - PRISM's lossless stage (encode_best, lossless.hpp)
// for many byte streams at once, as MANS_HD steps that a GPU runs as
// kernels and the CPU tests run in loops (tests/test_prism_streams_hd.cpp):
//
//   1. screen_stream    for every stream, by a team (a warp): the zero test,
//      the zero elimination (into the stream's work area) and the rANS gate
//      (rans_worth_trying, which encode_best runs too); a stream that
//      passes gets its byte count in rans_in[i], the others 0;
//   2. the device chunk encoder (mapping/chunk_batch.hpp) over the streams,
//      with in_bytes = rans_in and the stream dtype (rans_dtype): each
//      candidate becomes the MANS stream that mans_compress writes for it,
//      which is what encode_best tries (a stream of 0 bytes gets a bare
//      header, never used);
//   3. choose_stream    for every stream: the method (pick_method) from the
//      three sizes, and the payload and its size;
//   4. plane_segment_bytes / write_plane_segment (plane_split_hd.hpp) for
//      every plane, whose five streams are consecutive.
//
// The CPU's encode_best makes the same decisions with the same functions
// (rans_worth_trying, pick_method); its rANS candidate comes from
// mans::compress, whose bytes the device chunk encoder reproduces (tested
// by backend_device_api). So a batch's segments are the CPU's, byte for
// byte.
#pragma once

#include <cstddef>
#include <cstdint>

#include "backend_module.hpp"
#include "core/hd.hpp"
#include "core/team.hpp"
#include "entropy/cost_model.hpp"
#include "mans/mans.h"
#include "prism/lossless.hpp"
#include "prism/zero_elim_hd.hpp"

namespace mans::detail::prism {

// Streams shorter than this never try rANS (a MANS stream's header alone
// is about that size).
inline constexpr std::size_t kRansMinBytes = 64;

// The MANS dtype of a rANS candidate of elements of `width` bytes (1, 4, 8).
MANS_HD int rans_dtype(unsigned width) {
    return width == 8 ? MANS_DTYPE_U64 : width == 4 ? MANS_DTYPE_U32 : MANS_DTYPE_U8;
}

// The chunk encoder's settings that make its candidates encode_best's:
// mans::compress's default block size (block_elems), and an out_capacity
// of at least mans::compress_bound of the largest stream; a smaller one
// would refuse candidates that the CPU codes (and may pick).
// (lossless.cpp checks that kRansBlockBytes is that default).
inline constexpr std::uint64_t kRansBlockBytes = 131072;
MANS_HD std::uint64_t rans_block_elems(unsigned width) { return kRansBlockBytes / width; }

// Bytes counted on top of a candidate's order-0 entropy by the rANS gate
// below: a MANS stream has 36 fixed bytes (header, block index, header
// checksum) and a coded block's payload its own (mode, mapping fields,
// frequency tables, 4-byte final states), which the entropy leaves out.
// Measured on PRISM's plane streams of the real fields (../shared/data,
// seven fields at rel 1e-2 ... 1e-6, negabinary planes, 2026-12-08): the
// MANS coder lost to raw or zero elimination on 6,177 of the 8,098 streams
// it was tried on; with 32 bytes counted it is not tried on 3,597 of them,
// all streams it lost, so those 35 archives stay the same (with
// sign-magnitude planes 2 of 35 grew, by 0.07 % and 0.01 %). An encoder
// decision, not a format rule: GPUs take it from this function too.
inline constexpr std::uint64_t kRansGateBytes = 32;

// Whether encode_best codes a rANS candidate of p[0..n) when the best so
// far (raw or zero elimination) is `best` bytes: rANS allowed, whole
// elements, at least kRansMinBytes, and the bytes' order-0 entropy (a cheap
// estimate of what rANS reaches) plus kRansGateBytes below 97 % of `best`,
// so that near-random planes and short streams skip the MANS coder. Integer 16.16 costs
// (entropy/cost_model.hpp) rather than a double log2, so that a GPU decides
// as the CPU does. hist: 256 words the team shares (the counts are added
// with Team::add, split over the ranks). Inputs of 4 GiB or more always try
// (their counts would not fit).
template <typename Team>
MANS_HD bool rans_worth_trying(const Team& team, const std::uint8_t* p, std::size_t n, unsigned width, bool try_rans,
                               std::size_t best, std::uint32_t* hist) {
    if (!try_rans || n % width != 0 || n < kRansMinBytes) return false;
    if (static_cast<std::uint64_t>(n) >> 32) return true;
    team.for_ranks([&](unsigned r) {
        for (unsigned s = r; s < 256; s += team.size()) hist[s] = 0;
    });
    team.for_ranks([&](unsigned r) {
        const RankSpan span = rank_span(r, team.size(), n);
        for (std::uint64_t i = span.begin; i < span.end; ++i) team.add(&hist[p[i]], 1);
    });
    team.fence_atomics();
    return team_single(team, [&]() -> std::uint64_t {
               return (entropy_cost_fix16(hist, 256) + kRansGateBytes * 8 * kFixOne) * 100 <
                      std::uint64_t{97} * 8 * kFixOne * best;
           }) != 0;
}

// Work bytes a stream of up to n bytes needs: the zero elimination's
// bitmaps, then its output (at most n + bitmaps). zero_elim_map_bytes grows
// with n, so the largest stream's need covers every stream.
MANS_HD std::size_t stream_work_bytes(std::size_t n) {
    return (2 * zero_elim_map_bytes(n) + n + 15) & ~std::size_t{15};
}

// A batch of streams to code (device pointers on a GPU). Arrays have
// `count` entries; screen_stream writes all_zero, rze_bytes and rans_in,
// choose_stream method, payload and size.
struct StreamBatch {
    std::uint64_t count;
    unsigned width;       // element bytes of a rANS candidate: 1, 4 or 8
    bool try_rans;        // encode_best's try_rans
    const std::uint8_t* const* src;
    const std::size_t* bytes;
    std::uint8_t* work;   // count slices of work_stride bytes
    std::size_t work_stride;  // >= stream_work_bytes(largest stream)
    std::uint8_t* all_zero;
    std::size_t* rze_bytes;   // zero elimination's size (0 when all zero)
    std::size_t* rans_in;     // in_bytes of the chunk encoder: bytes[i] to try rANS, else 0
    Method* method;
    const std::uint8_t** payload;
    std::size_t* size;
};

// The zero elimination's output of stream i (behind its bitmaps).
MANS_HD std::uint8_t* zero_elim_output(const StreamBatch& b, std::uint64_t i) {
    return b.work + i * b.work_stride + zero_elim_map_bytes(b.bytes[i]);
}

// Step 1 for stream i; every member of `team` calls it alike, the leader
// writes. hist: 256 words the team shares.
template <typename Team>
MANS_HD void screen_stream(const Team& team, const StreamBatch& b, std::uint64_t i, std::uint32_t* hist) {
    const std::uint8_t* src = b.src[i];
    const std::size_t n = b.bytes[i];
    const bool zero = team_all(team, [&](unsigned r) {
        const RankSpan span = rank_span(r, team.size(), n);
        for (std::uint64_t j = span.begin; j < span.end; ++j)
            if (src[j]) return false;
        return true;
    });
    std::size_t rze = 0;
    bool rans = false;
    if (!zero) {
        // One member: the bitmap chain is sequential (zero_elim_hd.hpp).
        rze = static_cast<std::size_t>(team_single(team, [&]() -> std::uint64_t {
            std::uint8_t* maps = b.work + i * b.work_stride;
            return zero_elim_encode_into(src, n, maps, maps + zero_elim_map_bytes(n));
        }));
        // Zero elimination wins outright on sparse data; rANS is only worth
        // its time when that left most of the bytes.
        const std::size_t best = rze < n ? rze : n;
        rans = rans_worth_trying(team, src, n, b.width, b.try_rans, best, hist);
    }
    if (!team.leads()) return;
    b.all_zero[i] = zero ? 1 : 0;
    b.rze_bytes[i] = rze;
    b.rans_in[i] = rans ? n : 0;
}

// Step 3 for stream i, from the chunk encoder's results (out_ptrs,
// out_bytes and statuses of the batch that ran on rans_in): a candidate
// that the encoder refused counts as not tried, as encode_best's does.
MANS_HD void choose_stream(const StreamBatch& b, const mans_backend_chunk_batch& rans, std::uint64_t i) {
    const std::size_t n = b.bytes[i];
    const bool tried = b.rans_in[i] != 0 && rans.statuses[i] == MANS_OK;
    const std::size_t rans_bytes = tried ? rans.out_bytes[i] : 0;
    const Method m = pick_method(n, b.all_zero[i] != 0, b.rze_bytes[i], rans_bytes);
    b.method[i] = m;
    switch (m) {
        case Method::zero: b.payload[i] = b.src[i], b.size[i] = 0; break;
        case Method::raw: b.payload[i] = b.src[i], b.size[i] = n; break;
        case Method::zero_elim: b.payload[i] = zero_elim_output(b, i), b.size[i] = b.rze_bytes[i]; break;
        case Method::mans_rans:
            b.payload[i] = static_cast<const std::uint8_t*>(rans.out_ptrs[i]), b.size[i] = rans_bytes;
            break;
    }
}

}  // namespace mans::detail::prism
