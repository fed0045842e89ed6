// chunk_batch.hpp - whole MANS streams in device memory, many at once: the
// steps of the device-memory API (mans/mans_device.h) as MANS_HD code.
// The GPU modules run them as kernels (one thread per chunk or per block,
// backends/gpu/gpu_module.cu); the host stand-in module of the tests runs
// the same functions in loops (tests/backend_fixture), so the CPU tests
// check what a device computes.
//
// Compression, for a batch of `chunks` inputs (mans_backend_chunk_batch):
//   1. encode_chunk_block  for every (chunk, block): the block's payload
//      into its slot in temp, and its content checksum;
//   2. finish_chunk_encode for every chunk: the frame prefix (header,
//      index, header checksum) into the output, and each payload's offset;
//   3. place_chunk_block   for every (chunk, block): the payload copied
//      behind the prefix.
// Decompression:
//   1. parse_chunk         for every chunk: the frame checked as the CPU
//      checks it (frame_hd.hpp), offsets and checksums into temp, and its
//      block count (0 when it failed);
//   1b-1e. the real blocks listed in chunk order, by an exclusive scan of
//      the block counts in tiles of kListTileChunks chunks (so that no
//      thread walks every chunk): sum_list_tile for every tile,
//      scan_list_tiles (one thread, one add per tile), first_chunk_block
//      for every chunk, list_chunk_block for every (chunk, block);
//   2. decode_chunk_block  for every listed block: decoded into the output
//      and its checksum verified;
//   3. finish_chunk_decode for every chunk: the lowest failing block's
//      status, as the CPU reports it.
// Steps 1 of compression and 2 of decompression run on a fixed number of
// teams (wave_blocks, the scratch slices the temp holds), each coding
// blocks item, item + wave_blocks, ... with its own slice
// (encode_chunk_blocks_strided, decode_chunk_blocks_strided): one launch
// whatever the batch, and the host never needs to know how many blocks the
// streams to decode have.
// The streams are the CPU's bytes (one shape-less stream per chunk, as
// mans_compress writes without dims), and each result the CPU's status.
#pragma once

#include <cstddef>
#include <cstdint>

#include "backend_module.hpp"
#include "core/frame_hd.hpp"
#include "core/scan_hd.hpp"
#include "core/hd.hpp"
#include "core/xxh3_hd.hpp"
#include "mans/mans.h"
#include "mapping/block_batch.hpp"

namespace mans::detail {

// The frame's checksum (low 32 bits of XXH3-64) in MANS_HD code.
struct HdChecksum32 {
    MANS_HD std::uint32_t operator()(const void* p, std::size_t n) const {
        return static_cast<std::uint32_t>(xxh3_64_hd(p, n));
    }
};

// Blocks in flight when the caller asks for the temp size: the modules
// code as many blocks at once as the temp they are given allows.
// Decoding: 1,536, a warp each; their slices for 128 KiB blocks of any
// type (0.92 MB each since ABI 10, 2.1 MB before) take 1.4 GB, less than
// 1,024 took before. The decode kernel's 130 registers per lane (ptxas
// sm_90, ABI 9) let an SM hold 3 groups of 4 of its warps: 1,584 on an
// H200's 132 SMs, where 1,024 warps left a third of them idle, and the
// module launches no more than that (cap_at_resident_warps), so more
// slices would go unused. Encoding: 2,048; their slices of 128 KiB of u16
// (1.9 MiB each, ABI 7) take 3.9 GiB, less than 1,024 slices took before
// ABI 7 (4.4 MiB each).
inline constexpr std::uint64_t kChunkWaveBlocks = 1536;
inline constexpr std::uint64_t kChunkEncodeWaveBlocks = 2048;

MANS_HD std::uint64_t ceil_div_u64(std::uint64_t a, std::uint64_t b) { return b ? a / b + (a % b != 0) : 0; }

// Hands out 16-byte aligned byte offsets of a temp, one part of count
// entries of `size` bytes after another; notes when a size overflows.
struct TempCursor {
    std::size_t at = 0;
    bool overflow = false;
    MANS_HD std::size_t take(std::uint64_t count, std::uint64_t size) {
        const std::size_t here = at;
        constexpr std::uint64_t kLimit = ~std::uint64_t{0} >> 2;  // far beyond any memory
        if (size && count > kLimit / size) {
            overflow = true;
            return here;
        }
        const std::uint64_t bytes = count * size;
        if (bytes > kLimit - at) overflow = true;
        else at += align16(static_cast<std::size_t>(bytes));
        return here;
    }
};

// Blocks in flight that temp_bytes allow past a layout's fixed part (whose
// total is fixed_total) with slices of `slice` bytes, at most total_blocks;
// 0 when not even one fits.
MANS_HD std::uint64_t wave_for_temp(std::uint64_t temp_bytes, std::size_t fixed_total, std::uint64_t slice,
                                    std::uint64_t total_blocks) {
    if (fixed_total == 0 || slice == 0 || temp_bytes < fixed_total) return 0;
    const std::uint64_t wave = (temp_bytes - fixed_total) / slice;
    return wave < total_blocks ? wave : total_blocks;
}

// ---------------------------------------------------------------- encode

// Where the parts of an encode batch's temp are (byte offsets, 16-aligned).
// per_chunk: blocks per chunk at most (each chunk owns that many entries);
// slice_elems: the elements a block can have, min(block_elems, elements of
// max_in_bytes), which a scratch slice (slice bytes) is sized for. Sizing
// it for whole blocks when every chunk is smaller (PRISM's lossless stage:
// streams of at most 16 KiB in 128 KiB blocks) cost about 6 times the
// temp, and so 6 times fewer blocks in flight for a temp budget.
struct ChunkEncodeLayout {
    std::uint64_t per_chunk, total_blocks, slot_bytes, slice_elems, slice, wave_blocks;
    std::size_t slots, payload_bytes, checksums, block_status, offsets, scratch, total;
};

// The layout for `wave_blocks` blocks in flight (0: the part that does not
// depend on it). Zero sizes when the arguments overflow (total = 0).
MANS_HD ChunkEncodeLayout chunk_encode_layout(unsigned esize, std::uint64_t block_elems, std::uint64_t chunks,
                                              std::uint64_t max_in_bytes, std::uint64_t wave_blocks) {
    ChunkEncodeLayout l{};
    if (esize == 0 || block_elems == 0) return l;
    l.per_chunk = ceil_div_u64(max_in_bytes / esize, block_elems);
    if (l.per_chunk && chunks > (~0ull >> 20) / l.per_chunk) return l;  // absurd batch: overflow
    l.total_blocks = l.per_chunk * chunks;
    // A payload is at most 1 + its block's raw bytes, which are at most
    // a block's and at most max_in_bytes.
    const std::uint64_t block_raw = block_elems * esize;
    l.slot_bytes = align16(1 + (max_in_bytes < block_raw ? max_in_bytes : block_raw));
    const std::uint64_t max_elems = max_in_bytes / esize;
    l.slice_elems = max_elems < block_elems ? max_elems : block_elems;
    l.slice = encode_slice_layout(static_cast<std::size_t>(l.slice_elems), esize).total;
    l.wave_blocks = wave_blocks < l.total_blocks ? wave_blocks : l.total_blocks;
    TempCursor t;
    l.slots = t.take(l.total_blocks, l.slot_bytes);
    l.payload_bytes = t.take(l.total_blocks, 8);
    l.checksums = t.take(l.total_blocks, 4);
    l.block_status = t.take(l.total_blocks, 4);
    l.offsets = t.take(l.total_blocks, 8);
    l.scratch = t.take(l.wave_blocks, l.slice);
    if (t.overflow) return ChunkEncodeLayout{};
    l.total = t.at;
    return l;
}

// Blocks in flight that temp_bytes of temp allow (0: too little temp for
// even one, when there are blocks at all).
MANS_HD std::uint64_t chunk_encode_wave(unsigned esize, const mans_backend_chunk_batch& a) {
    const ChunkEncodeLayout fixed = chunk_encode_layout(esize, a.block_elems, a.chunks, a.max_in_bytes, 0);
    return wave_for_temp(a.temp_bytes, fixed.total, fixed.slice, fixed.total_blocks);
}

// Checks chunk c's input in the CPU's order (null pointers, then the
// size), then against the batch's max_in_bytes; *n gets its element count.
MANS_HD std::int32_t chunk_input_status(const mans_backend_chunk_batch& a, unsigned esize, std::uint64_t c,
                                        std::uint64_t* n) {
    const std::uint64_t bytes = a.in_bytes[c];
    *n = bytes / esize;
    if ((bytes && !a.in_ptrs[c]) || (!a.out_ptrs[c] && a.out_capacity)) return MANS_ERR_INVALID_ARGUMENT;
    if (bytes % esize) return MANS_ERR_SIZE_NOT_MULTIPLE;
    if (bytes > a.max_in_bytes) return MANS_ERR_INVALID_ARGUMENT;
    return MANS_OK;
}

// The frame header of a chunk of n elements: shape-less, as mans_compress
// writes it without dims. Its block_count/block_first/block_len give the
// chunk's blocks.
MANS_HD FrameHeader chunk_frame_header(const mans_backend_chunk_batch& a, std::uint64_t n) {
    FrameHeader h;
    h.dtype = static_cast<DType>(a.dtype);
    h.count = n;
    h.block_elems = static_cast<std::uint32_t>(a.block_elems);
    return h;
}

// offsets[] entry of a block slot past its chunk's end (place_chunk_block
// skips it without reading in_bytes, which out_bytes may have replaced).
inline constexpr std::uint64_t kNoBlock = ~std::uint64_t{0};

// Step 1 for global block g (chunk g / per_chunk), with `scratch` (l.slice
// bytes). Blocks past their chunk's end and blocks of invalid chunks do
// nothing (finish_chunk_encode reports the chunk). Every member of `team`
// calls it alike (a warp on a GPU); the leader writes the status and the
// content checksum.
template <typename U, typename Team = SoloTeam, typename Lanes = ReferenceEncodeLanes>
MANS_HD void encode_chunk_block(const mans_backend_chunk_batch& a, const ChunkEncodeLayout& l, std::uint64_t g,
                                std::uint8_t* scratch, const Team& team = Team{}, const Lanes& lanes = Lanes{}) {
    constexpr unsigned esize = sizeof(U);
    const std::uint64_t c = g / l.per_chunk, b = g % l.per_chunk;
    std::uint64_t n = 0;
    if (chunk_input_status(a, esize, c, &n) != MANS_OK) return;
    const FrameHeader h = chunk_frame_header(a, n);
    if (b >= h.block_count()) return;
    const std::uint64_t len = h.block_len(b);
    const std::uint8_t* src = static_cast<const std::uint8_t*>(a.in_ptrs[c]) + h.block_first(b) * esize;
    std::uint64_t* sizes = reinterpret_cast<std::uint64_t*>(a.temp + l.payload_bytes);
    mans_backend_encode_batch one{};
    one.dtype = a.dtype;
    one.blocks = 1;
    one.block_elems = a.block_elems;
    one.last_elems = len;
    one.src = src;
    one.slots = a.temp + l.slots + g * l.slot_bytes;
    one.slot_bytes = l.slot_bytes;
    one.payload_bytes = sizes + g;
    // The slice holds blocks of up to l.slice_elems (a layout that says
    // less would have the encoder write past its slice).
    const std::int32_t status =
        len <= l.slice_elems ? encode_batch_block_as<U>(one, 0, scratch, team, lanes) : MANS_ERR_INTERNAL;
    // The content checksum (of the input) by the team: eight of its members
    // take an XXH3 accumulator each.
    const auto sum = static_cast<std::uint32_t>(xxh3_64_team(team, src, static_cast<std::size_t>(len * esize)));
    if (!team.leads()) return;
    reinterpret_cast<std::int32_t*>(a.temp + l.block_status)[g] = status;
    reinterpret_cast<std::uint32_t*>(a.temp + l.checksums)[g] = sum;
}

// Step 1 for team `item` of wave_blocks: blocks item, item + wave_blocks,
// ..., each with the team's scratch slice.
template <typename U, typename Team = SoloTeam, typename Lanes = ReferenceEncodeLanes>
MANS_HD void encode_chunk_blocks_strided(const mans_backend_chunk_batch& a, const ChunkEncodeLayout& l,
                                         std::uint64_t item, const Team& team = Team{},
                                         const Lanes& lanes = Lanes{}) {
    std::uint8_t* scratch = a.temp + l.scratch + item * l.slice;
    for (std::uint64_t g = item; g < l.total_blocks; g += l.wave_blocks)
        encode_chunk_block<U>(a, l, g, scratch, team, lanes);
}

// encode_chunk_blocks_strided for the batch's dtype (the host stand-in
// calls this; the kernels are one per element type).
template <typename Team = SoloTeam>
MANS_HD void encode_chunk_blocks_strided_any(const mans_backend_chunk_batch& a, const ChunkEncodeLayout& l,
                                             std::uint64_t item, const Team& team = Team{}) {
    switch (elem_bytes(static_cast<DType>(a.dtype))) {
        case 1: return encode_chunk_blocks_strided<std::uint8_t>(a, l, item, team);
        case 2: return encode_chunk_blocks_strided<std::uint16_t>(a, l, item, team);
        case 4: return encode_chunk_blocks_strided<std::uint32_t>(a, l, item, team);
        case 8: return encode_chunk_blocks_strided<std::uint64_t>(a, l, item, team);
    }
}

// Step 2 for chunk c: its status, size and frame prefix.
MANS_HD void finish_chunk_encode(const mans_backend_chunk_batch& a, const ChunkEncodeLayout& l, std::uint64_t c) {
    std::uint64_t n = 0;
    // Reads in_bytes[c] before out_bytes[c] is written.
    std::int32_t st = chunk_input_status(a, elem_bytes(static_cast<DType>(a.dtype)), c, &n);
    a.out_bytes[c] = 0;
    if (st != MANS_OK) {
        a.statuses[c] = st;
        return;
    }
    const FrameHeader h = chunk_frame_header(a, n);
    const std::uint64_t nblocks = h.block_count(), g0 = c * l.per_chunk;
    const std::int32_t* block_status = reinterpret_cast<const std::int32_t*>(a.temp + l.block_status) + g0;
    const std::uint64_t* sizes = reinterpret_cast<const std::uint64_t*>(a.temp + l.payload_bytes) + g0;
    const std::uint32_t* sums = reinterpret_cast<const std::uint32_t*>(a.temp + l.checksums) + g0;
    std::uint64_t* offsets = reinterpret_cast<std::uint64_t*>(a.temp + l.offsets) + g0;
    std::uint64_t total = h.prefix_bytes();
    for (std::uint64_t b = 0; b < nblocks; ++b) {
        if (block_status[b] != MANS_OK) {  // the lowest failing block, as on the CPU
            a.statuses[c] = block_status[b];
            return;
        }
        offsets[b] = total;
        total += sizes[b];
    }
    for (std::uint64_t b = nblocks; b < l.per_chunk; ++b) offsets[b] = kNoBlock;
    a.out_bytes[c] = total;
    if (total > a.out_capacity) st = MANS_ERR_DST_TOO_SMALL;  // (a null output has capacity 0)
    if (st == MANS_OK) {
        const auto entry = [&](std::uint64_t b) {
            return IndexEntry{static_cast<std::uint32_t>(sizes[b]), sums[b]};
        };
        write_frame_prefix_with(h, entry, HdChecksum32{}, static_cast<std::uint8_t*>(a.out_ptrs[c]));
    }
    a.statuses[c] = st;
}

// Step 3 for global block g: its payload behind the prefix, when its chunk
// succeeded.
MANS_HD void place_chunk_block(const mans_backend_chunk_batch& a, const ChunkEncodeLayout& l, std::uint64_t g) {
    const std::uint64_t c = g / l.per_chunk;
    if (a.statuses[c] != MANS_OK) return;
    const std::uint64_t offset = reinterpret_cast<const std::uint64_t*>(a.temp + l.offsets)[g];
    if (offset == kNoBlock) return;
    const std::uint64_t size = reinterpret_cast<const std::uint64_t*>(a.temp + l.payload_bytes)[g];
    hd_memcpy(static_cast<std::uint8_t*>(a.out_ptrs[c]) + offset, a.temp + l.slots + g * l.slot_bytes,
              static_cast<std::size_t>(size));
}

// ---------------------------------------------------------------- decode

// Temp of a decode batch. per_chunk: the blocks a chunk may have. Streams
// this library writes have blocks of at least kMinBlockBytes and a raw size
// within out_capacity; a stream with more blocks (or larger ones than
// max_block_bytes) is refused with MANS_ERR_INVALID_ARGUMENT.
// The blocks are decoded by compact index (steps 1b-1e list the real
// ones), so the scratch need only cover the blocks in flight.
struct ChunkDecodeLayout {
    std::uint64_t per_chunk, total_blocks, slice, max_n, wave_blocks, list_tiles;
    std::size_t headers, offsets, payload_bytes, checksums, block_status, block_slots, chunk_blocks, chunk_first,
        tile_bases, real_blocks, scratch, total;
};

// Chunks per tile of the scan that lists the blocks to decode.
inline constexpr std::uint64_t kListTileChunks = 64;

MANS_HD ChunkDecodeLayout chunk_decode_layout(std::uint64_t chunks, std::uint64_t out_capacity,
                                              std::uint64_t max_block_bytes, std::uint64_t wave_blocks) {
    ChunkDecodeLayout l{};
    if (max_block_bytes == 0 || max_block_bytes > kMaxBlockBytes) return l;
    l.per_chunk = ceil_div_u64(out_capacity, kMinBlockBytes);
    if (l.per_chunk == 0) l.per_chunk = 1;  // a stream of 0 elements still has a header
    if (chunks > (~0ull >> 20) / l.per_chunk) return l;
    l.total_blocks = l.per_chunk * chunks;
    l.max_n = max_block_bytes;  // elements of the smallest type: the most a block can have
    l.slice = block_scratch_bytes(static_cast<std::size_t>(l.max_n), 1);  // any type
    l.wave_blocks = wave_blocks < l.total_blocks ? wave_blocks : l.total_blocks;
    TempCursor t;
    l.headers = t.take(chunks, sizeof(FrameHeader));
    l.offsets = t.take(l.total_blocks, 8);
    l.payload_bytes = t.take(l.total_blocks, 4);
    l.checksums = t.take(l.total_blocks, 4);
    l.block_status = t.take(l.total_blocks, 4);
    l.block_slots = t.take(l.total_blocks, 8);
    l.list_tiles = ceil_div_u64(chunks, kListTileChunks);
    l.chunk_blocks = t.take(chunks, 8);
    l.chunk_first = t.take(chunks, 8);
    l.tile_bases = t.take(l.list_tiles, 8);
    l.real_blocks = t.take(1, 8);
    l.scratch = t.take(l.wave_blocks, l.slice);
    if (t.overflow) return ChunkDecodeLayout{};
    l.total = t.at;
    return l;
}

// Blocks in flight the temp query asks room for: the blocks of chunks
// of out_capacity raw bytes in blocks of max_block_bytes, at most
// kChunkWaveBlocks (streams with smaller blocks run in more waves).
MANS_HD std::uint64_t chunk_decode_default_wave(std::uint64_t chunks, std::uint64_t out_capacity,
                                                std::uint64_t max_block_bytes) {
    const std::uint64_t per = ceil_div_u64(out_capacity, max_block_bytes);
    const std::uint64_t expect = (per ? per : 1) * chunks;
    return expect < kChunkWaveBlocks ? expect : kChunkWaveBlocks;
}

MANS_HD std::uint64_t chunk_decode_wave(const mans_backend_chunk_batch& a) {
    const ChunkDecodeLayout fixed = chunk_decode_layout(a.chunks, a.out_capacity, a.max_block_bytes, 0);
    return wave_for_temp(a.temp_bytes, fixed.total, fixed.slice, fixed.total_blocks);
}

// Step 1 for chunk c: the frame, checked as parse_frame checks it, then
// what this batch can take (capacity, block size, block count).
MANS_HD void parse_chunk(const mans_backend_chunk_batch& a, const ChunkDecodeLayout& l, std::uint64_t c) {
    const std::uint8_t* src = static_cast<const std::uint8_t*>(a.in_ptrs[c]);
    const std::size_t size = static_cast<std::size_t>(a.in_bytes[c]);  // read before out_bytes[c] is written
    a.out_bytes[c] = 0;
    FrameHeader& h = reinterpret_cast<FrameHeader*>(a.temp + l.headers)[c];
    h = FrameHeader{};
    // The CPU's first check (mans_decompress), then the frame's.
    Errc e = (!src && size) || (!a.out_ptrs[c] && a.out_capacity) ? Errc::invalid_argument
                                                                  : parse_frame_header_with(src, size, HdChecksum32{}, &h);
    const std::uint64_t g0 = c * l.per_chunk;
    if (e == Errc::ok) {
        std::uint64_t* offsets = reinterpret_cast<std::uint64_t*>(a.temp + l.offsets) + g0;
        std::uint32_t* sizes = reinterpret_cast<std::uint32_t*>(a.temp + l.payload_bytes) + g0;
        std::uint32_t* sums = reinterpret_cast<std::uint32_t*>(a.temp + l.checksums) + g0;
        const std::uint64_t room = l.per_chunk;
        std::uint64_t total = 0;
        e = parse_frame_index(
            src, size, h,
            [&](std::uint64_t b, const IndexEntry& entry, std::uint64_t offset) {
                if (b >= room) return;  // refused below, after the CPU's own checks
                offsets[b] = offset;
                sizes[b] = entry.payload_bytes;
                sums[b] = entry.content_checksum;
            },
            &total);
    }
    // The CPU's next check, then what this batch's temp can take.
    const std::uint64_t raw = h.count * elem_bytes(h.dtype);
    if (e == Errc::ok && raw > a.out_capacity) e = Errc::dst_too_small;  // (a null output has capacity 0)
    const std::uint64_t largest = h.block_elems < h.count ? h.block_elems : h.count;  // elements of the largest block
    if (e == Errc::ok && (h.block_count() > l.per_chunk || largest * elem_bytes(h.dtype) > a.max_block_bytes))
        e = Errc::invalid_argument;
    if (e == Errc::dst_too_small) a.out_bytes[c] = raw;
    a.statuses[c] = static_cast<std::int32_t>(e);
    reinterpret_cast<std::uint64_t*>(a.temp + l.chunk_blocks)[c] = e == Errc::ok ? h.block_count() : 0;  // <= per_chunk
}

// Steps 1b-1e list the slots (c * per_chunk + b) of the blocks of the
// chunks that parsed, in chunk order, so that step 2 runs on real blocks
// only. Block counts of chunk c are chunk_blocks[c] (0 for a failed chunk).

// Step 1b for tile t: the blocks of its chunks.
MANS_HD void sum_list_tile(const mans_backend_chunk_batch& a, const ChunkDecodeLayout& l, std::uint64_t t) {
    const std::uint64_t* counts = reinterpret_cast<const std::uint64_t*>(a.temp + l.chunk_blocks);
    reinterpret_cast<std::uint64_t*>(a.temp + l.tile_bases)[t] =
        scan_tile_sum([&](std::uint64_t c) { return counts[c]; }, a.chunks, kListTileChunks, t);
}

// Step 1c, one thread: each tile's sum becomes the blocks before the tile;
// the total is the number of real blocks.
MANS_HD void scan_list_tiles(const mans_backend_chunk_batch& a, const ChunkDecodeLayout& l) {
    *reinterpret_cast<std::uint64_t*>(a.temp + l.real_blocks) =
        scan_tile_bases(reinterpret_cast<std::uint64_t*>(a.temp + l.tile_bases), l.list_tiles);
}

// Step 1d for chunk c: the list position of its first block.
MANS_HD void first_chunk_block(const mans_backend_chunk_batch& a, const ChunkDecodeLayout& l, std::uint64_t c) {
    const std::uint64_t* counts = reinterpret_cast<const std::uint64_t*>(a.temp + l.chunk_blocks);
    reinterpret_cast<std::uint64_t*>(a.temp + l.chunk_first)[c] =
        scan_item_offset([&](std::uint64_t k) { return counts[k]; }, kListTileChunks,
                         reinterpret_cast<const std::uint64_t*>(a.temp + l.tile_bases), c);
}

// Step 1e for slot g (chunk g / per_chunk, block g % per_chunk): listed
// when the chunk has that block.
MANS_HD void list_chunk_block(const mans_backend_chunk_batch& a, const ChunkDecodeLayout& l, std::uint64_t g) {
    const std::uint64_t c = g / l.per_chunk, b = g % l.per_chunk;
    if (b >= reinterpret_cast<const std::uint64_t*>(a.temp + l.chunk_blocks)[c]) return;
    const std::uint64_t first = reinterpret_cast<const std::uint64_t*>(a.temp + l.chunk_first)[c];
    if (first + b < l.total_blocks)  // always, after steps 1b-1d; a guard against a step that did not run
        reinterpret_cast<std::uint64_t*>(a.temp + l.block_slots)[first + b] = g;
}

// Real blocks listed by steps 1b-1e.
MANS_HD std::uint64_t chunk_real_blocks(const mans_backend_chunk_batch& a, const ChunkDecodeLayout& l) {
    return *reinterpret_cast<const std::uint64_t*>(a.temp + l.real_blocks);
}

// Step 2 for the k-th real block, with `scratch` (l.slice bytes), by every
// member of `team` alike (decode_batch_block); one member checks the
// checksum and writes the status.
template <typename Team = SoloTeam, typename Lanes = ReferenceLanes>
MANS_HD void decode_chunk_block(const mans_backend_chunk_batch& a, const ChunkDecodeLayout& l, std::uint64_t k,
                                std::uint8_t* scratch, const Team& team = Team{}, const Lanes& lanes = Lanes{}) {
    if (k >= chunk_real_blocks(a, l)) return;
    const std::uint64_t g = reinterpret_cast<const std::uint64_t*>(a.temp + l.block_slots)[k];
    const std::uint64_t c = g / l.per_chunk, b = g % l.per_chunk;
    const FrameHeader& h = reinterpret_cast<const FrameHeader*>(a.temp + l.headers)[c];
    const unsigned esize = elem_bytes(h.dtype);
    const std::uint64_t offset = reinterpret_cast<const std::uint64_t*>(a.temp + l.offsets)[g];
    const std::uint32_t size = reinterpret_cast<const std::uint32_t*>(a.temp + l.payload_bytes)[g];
    const std::size_t n = static_cast<std::size_t>(h.block_len(b));
    std::uint8_t* dst = static_cast<std::uint8_t*>(a.out_ptrs[c]) + h.block_first(b) * esize;
    const FixedBlockScratch sc = carve_block_scratch(scratch, static_cast<std::size_t>(l.max_n), 1);
    Errc e = decode_block_payload(h.dtype, static_cast<const std::uint8_t*>(a.in_ptrs[c]) + offset, size, n, dst,
                                  lanes, sc, team);
    // The decoder's last phase ended with a barrier: every member sees every
    // member's output. The checksum by the team, as on encoding (e is the
    // same in every member).
    if (e == Errc::ok && static_cast<std::uint32_t>(xxh3_64_team(team, dst, n * esize)) !=
                             reinterpret_cast<const std::uint32_t*>(a.temp + l.checksums)[g])
        e = Errc::content_checksum;
    if (!team.leads()) return;
    reinterpret_cast<std::int32_t*>(a.temp + l.block_status)[g] = static_cast<std::int32_t>(e);
}

// Step 2 for team `item` of wave_blocks: the listed blocks item,
// item + wave_blocks, ..., each with the team's scratch slice.
template <typename Team = SoloTeam, typename Lanes = ReferenceLanes>
MANS_HD void decode_chunk_blocks_strided(const mans_backend_chunk_batch& a, const ChunkDecodeLayout& l,
                                         std::uint64_t item, const Team& team = Team{},
                                         const Lanes& lanes = Lanes{}) {
    std::uint8_t* scratch = a.temp + l.scratch + item * l.slice;
    const std::uint64_t real = chunk_real_blocks(a, l);
    for (std::uint64_t k = item; k < real; k += l.wave_blocks) decode_chunk_block(a, l, k, scratch, team, lanes);
}

// Step 3 for chunk c: the lowest failing block's status, or the raw size.
MANS_HD void finish_chunk_decode(const mans_backend_chunk_batch& a, const ChunkDecodeLayout& l, std::uint64_t c) {
    if (a.statuses[c] != MANS_OK) return;
    const FrameHeader& h = reinterpret_cast<const FrameHeader*>(a.temp + l.headers)[c];
    const std::int32_t* block_status = reinterpret_cast<const std::int32_t*>(a.temp + l.block_status) + c * l.per_chunk;
    for (std::uint64_t b = 0; b < h.block_count(); ++b)
        if (block_status[b] != MANS_OK) {
            a.statuses[c] = block_status[b];
            return;
        }
    a.out_bytes[c] = static_cast<std::size_t>(h.count * elem_bytes(h.dtype));
}

}  // namespace mans::detail
