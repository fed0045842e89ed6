// block_batch.hpp - encodes or decodes one block of a module's batch
// (mans_backend_encode_batch / mans_backend_block_batch, backend_module.hpp).
//
// The per-block bodies of the GPU kernels (backends/gpu: one thread per
// block to encode, one warp per block to decode, as a team of core/team.hpp)
// and of the host stand-in module the dispatch tests load
// (tests/backend_fixture): MANS_HD, so both run the same code, which is the
// CPU's block encoder and decoder (block_encode.hpp, block_decode.hpp) with
// fixed scratch slices instead of vectors.
#pragma once

#include <cstddef>
#include <cstdint>

#include "backend_module.hpp"
#include "core/hd.hpp"
#include "mans/mans.h"
#include "mapping/block_decode.hpp"
#include "mapping/block_encode.hpp"

namespace mans::detail {

// The reference rANS lane loops as functors (the GPU has no SIMD kernels).
struct ReferenceLanes {
    MANS_HD bool operator()(const RansDecodeArgs& a) const { return rans_decode_reference(a); }
};
struct ReferenceEncodeLanes {
    MANS_HD void operator()(RansEncodeArgs& a) const { rans_encode_reference(a); }
};

// The encoder's rANS lane loop as every member of a warp runs it: member j
// runs lane j (rans_encode_as_member), the final states go through the
// team's shared words, and every member ends with the whole result (the
// leader writes the header). Warp: lane, sync() (the warp barrier),
// ballot(p) and shared() (the team's shared words). The GPU module
// (WarpOps) and the CPU tests (threads with a barrier) run this same loop.
template <typename Warp>
struct MemberEncodeLanes {
    Warp warp;
    MANS_HD void operator()(RansEncodeArgs& a) const {
        warp.sync();  // the tables were written by the leader
        const MemberEncodeResult m = rans_encode_as_member(a, warp.lane, [this](bool p) { return warp.ballot(p); });
        std::uint64_t* states = warp.shared() + kTeamLaneValues;
        if (warp.lane < a.layout.lanes) states[warp.lane] = m.state;
        warp.sync();  // the words and the states are written
        for (unsigned j = 0; j < a.layout.lanes; ++j) a.states[j] = static_cast<std::uint32_t>(states[j]);
        a.words_first = m.words_first;
        a.ok = true;
    }
};

// Elements of block b of a batch.
template <typename Batch>
MANS_HD std::uint64_t batch_block_elems(const Batch& batch, std::uint64_t b) {
    return b + 1 == batch.blocks ? batch.last_elems : batch.block_elems;
}

// Decodes block b into its place in batch.dst using `scratch`
// (block_scratch_bytes(batch.block_elems, element bytes), 16-byte aligned) and
// returns its mans_status, with every member of `team` (core/team.hpp)
// calling it alike and `lanes` its rANS lane loop. The pointers are in the
// memory the caller runs in (device memory in a kernel).
template <typename Team = SoloTeam, typename Lanes = ReferenceLanes>
MANS_HD std::int32_t decode_batch_block(const mans_backend_block_batch& batch, std::uint64_t b,
                                        std::uint8_t* scratch, const Team& team = Team{},
                                        const Lanes& lanes = Lanes{}) {
    const DType dtype = static_cast<DType>(batch.dtype);
    const unsigned esize = elem_bytes(dtype);
    if (esize == 0 || b >= batch.blocks) return MANS_ERR_INTERNAL;
    const std::uint64_t begin = batch.offsets[b], end = batch.offsets[b + 1];
    if (begin > end || end > batch.payload_bytes) return MANS_ERR_INTERNAL;  // the core checked these
    const std::size_t n = static_cast<std::size_t>(batch_block_elems(batch, b));
    const FixedBlockScratch sc = carve_block_scratch(scratch, static_cast<std::size_t>(batch.block_elems), esize);
    const Errc e = decode_block_payload(dtype, batch.payloads + begin, static_cast<std::size_t>(end - begin), n,
                                        batch.dst + b * batch.block_elems * esize, lanes, sc, team);
    return static_cast<std::int32_t>(e);
}

// ---------------------------------------------------------------- encoding

// An output of fixed capacity for BlockEncoder (grow returns null when full).
struct FixedOut {
    std::uint8_t* data;
    std::size_t cap;
    std::size_t used = 0;
    MANS_HD std::size_t size() const { return used; }
    MANS_HD std::uint8_t* grow(std::size_t n) {
        if (n > cap - used) return nullptr;
        std::uint8_t* p = data + used;
        used += n;
        return p;
    }
    MANS_HD void truncate(std::size_t n) { used = n < used ? n : used; }
    // Removes [begin, end): the tail moves down (never overlapping upwards).
    MANS_HD void erase(std::size_t begin, std::size_t end) {
        for (std::size_t i = end; i < used; ++i) data[begin + (i - end)] = data[i];
        used -= end - begin;
    }
};

// Encoder scratch for blocks of up to max_n elements of esize bytes, as one
// 16-byte aligned slice: output, tokens, raw bits, sample, dictionary,
// indices, 16-bit value map, encoder tables, words, work (histograms).
struct EncodeSliceLayout {
    std::size_t out, tokens, bits, sample, dict, index, value_map, sorted, enc, words, work, total;
};
// Raw bits per element at most: a hybrid token's are fewer than the
// element's bits, ADM's (also in a nested u32 index block) at most 32;
// bytes have neither ADM nor a dictionary.
MANS_HD std::size_t raw_bits_per_elem(unsigned esize) {
    if (esize == 1) return 8;
    return 8 * esize > 32 ? 8 * esize : 32;
}

MANS_HD EncodeSliceLayout encode_slice_layout(std::size_t max_n, unsigned esize) {
    EncodeSliceLayout l{};
    std::size_t at = 0;
    const auto take = [&at](std::size_t bytes) {
        const std::size_t here = at;
        at += align16(bytes);
        return here;
    };
    const std::size_t sampled = max_n < kSampleRun * kSampleRuns ? max_n : kSampleRun * kSampleRuns;
    l.out = take(block_encode_out_bound(max_n, esize));
    l.tokens = take(token_buffer_entries(max_n));
    l.bits = take(bit_writer_bytes(max_n * raw_bits_per_elem(esize)));
    l.sample = take((sampled / 4 + 1) * 8);
    l.dict = take(esize >= 2 ? max_n * 8 : 0);
    l.index = take(esize >= 2 ? max_n * 4 : 0);
    l.value_map = take(esize == 2 ? (std::size_t{1} << 16) * 4 : 0);
    l.sorted = take(esize >= 4 ? max_n * 8 : 0);
    l.enc = take(std::size_t{kMaxContexts} * 256 * sizeof(EncSym));
    l.words = take((max_n + kWordPadding) * 2);
    l.work = take(sizeof(EncodeWork));
    l.total = at;
    return l;
}

// BlockEncoder's Env (block_encode.hpp) over one slice; `lanes` runs the
// rANS lane loop (in a team: in every member, which all end with the result).
template <typename Lanes = ReferenceEncodeLanes>
struct FixedEncodeEnv {
    std::uint8_t* base;
    EncodeSliceLayout lay;
    std::size_t max_n;
    unsigned esize;
    FixedOut payload;
    Lanes lane_loop;

    MANS_HD FixedOut& out() { return payload; }
    MANS_HD void lanes(RansEncodeArgs& a) const { lane_loop(a); }
    MANS_HD std::uint8_t* tokens(std::size_t slots) const {
        return slots <= token_buffer_entries(max_n) ? base + lay.tokens : nullptr;
    }
    MANS_HD std::uint8_t* bits(std::size_t bytes) const {
        return bytes <= bit_writer_bytes(max_n * raw_bits_per_elem(esize)) ? base + lay.bits : nullptr;
    }
    MANS_HD std::uint64_t* sample(std::size_t n) const {
        const std::size_t sampled = max_n < kSampleRun * kSampleRuns ? max_n : kSampleRun * kSampleRuns;
        return n <= sampled / 4 + 1 ? reinterpret_cast<std::uint64_t*>(base + lay.sample) : nullptr;
    }
    MANS_HD std::uint64_t* dict(std::size_t n) const {
        return esize >= 2 && n <= max_n ? reinterpret_cast<std::uint64_t*>(base + lay.dict) : nullptr;
    }
    MANS_HD std::uint32_t* index(std::size_t n) const {
        return esize >= 2 && n <= max_n ? reinterpret_cast<std::uint32_t*>(base + lay.index) : nullptr;
    }
    MANS_HD std::uint32_t* value_map(std::size_t n) const {
        return esize == 2 && n <= (std::size_t{1} << 16) ? reinterpret_cast<std::uint32_t*>(base + lay.value_map)
                                                        : nullptr;
    }
    MANS_HD std::uint64_t* sorted(std::size_t n) const {
        return esize >= 4 && n <= max_n ? reinterpret_cast<std::uint64_t*>(base + lay.sorted) : nullptr;
    }
    MANS_HD EncodeWork* work() const { return reinterpret_cast<EncodeWork*>(base + lay.work); }
    MANS_HD TokenEncodeBuffers stream(std::size_t n) const {
        if (n > max_n) return {nullptr, nullptr, nullptr};
        return {reinterpret_cast<EncSym*>(base + lay.enc), reinterpret_cast<std::uint16_t*>(base + lay.words),
                &work()->stream};
    }
};

// Elements of the batch's largest block: what its scratch slices are sized
// for (a batch of one short block, such as a device-memory chunk's last or
// only block, needs less than block_elems). A slice sized for more serves
// too: encode_slice_layout only grows with its max_n, and no buffer's size
// changes a byte of the output.
MANS_HD std::size_t batch_slice_elems(const mans_backend_encode_batch& batch) {
    return static_cast<std::size_t>(batch.blocks > 1 ? batch.block_elems : batch.last_elems);
}

// Encodes block b of the batch, whose elements are U (esize bytes, checked
// by the caller), with `scratch` (encode_slice_layout(batch_slice_elems(
// batch), esize).total bytes or more, 16-byte aligned) into its slot; returns its
// mans_status (MANS_ERR_INTERNAL when the slice was too small, which a
// correct bound never allows), with every member of `team` calling it
// alike and `lanes` its rANS lane loop. One instantiation per kernel keeps
// a GPU thread's stack to one encoder's.
template <typename U, typename Team = SoloTeam, typename Lanes = ReferenceEncodeLanes>
MANS_HD std::int32_t encode_batch_block_as(const mans_backend_encode_batch& batch, std::uint64_t b,
                                           std::uint8_t* scratch, const Team& team = Team{},
                                           const Lanes& lanes = Lanes{}) {
    constexpr unsigned esize = sizeof(U);
    if (b >= batch.blocks) return MANS_ERR_INTERNAL;
    const std::size_t max_n = batch_slice_elems(batch);
    const std::size_t n = static_cast<std::size_t>(batch_block_elems(batch, b));
    const EncodeSliceLayout lay = encode_slice_layout(max_n, esize);
    using Env = FixedEncodeEnv<Lanes>;
    Env env{scratch, lay, max_n, esize, FixedOut{scratch + lay.out, block_encode_out_bound(max_n, esize)}, lanes};
    const std::uint8_t* src = batch.src + b * batch.block_elems * esize;
    const bool ok = BlockEncoder<U, Env, false, Team>(src, n, sign_flip(static_cast<DType>(batch.dtype)), env, team)
                        .run(ModeHint::automatic);
    if (!ok || env.payload.used > batch.slot_bytes) return MANS_ERR_INTERNAL;
    team_copy(team, batch.slots + b * batch.slot_bytes, env.payload.data, env.payload.used);
    if (team.leads()) batch.payload_bytes[b] = env.payload.used;
    return MANS_OK;
}

// The same for any dtype (the host stand-in module calls this).
template <typename Team = SoloTeam>
MANS_HD std::int32_t encode_batch_block(const mans_backend_encode_batch& batch, std::uint64_t b,
                                        std::uint8_t* scratch, const Team& team = Team{}) {
    switch (elem_bytes(static_cast<DType>(batch.dtype))) {
        case 1: return encode_batch_block_as<std::uint8_t>(batch, b, scratch, team);
        case 2: return encode_batch_block_as<std::uint16_t>(batch, b, scratch, team);
        case 4: return encode_batch_block_as<std::uint32_t>(batch, b, scratch, team);
        case 8: return encode_batch_block_as<std::uint64_t>(batch, b, scratch, team);
    }
    return MANS_ERR_INTERNAL;
}

}  // namespace mans::detail
