// host_waves.hpp - how a module codes one host-memory window in waves.
//
// A GPU module's encode_blocks and decode_blocks (backend_module.hpp) get
// a window of blocks in host memory. The module copies each wave of blocks
// in, codes it and copies its results out, so that one wave's copies
// overlap another's kernel (backends/gpu/gpu_module.cu: two streams). What
// a wave moves is decided here, once, for the GPU module and for the host
// stand-in module of the dispatch tests (tests/backend_fixture), which
// codes each wave between the same copies with std::memcpy: a range that a
// wave misses or takes twice changes the bytes those tests compare with
// the CPU's.
//
// `host` is the batch as the core passed it; `dev` the same batch with the
// module's buffers in place of its arrays (the same layout: block b's
// elements, slot, payload and entries at the same offsets). copy(to, from,
// bytes, to_device) does one copy and returns true when it was queued or
// done.
#pragma once

#include <cstddef>
#include <cstdint>

#include "backend_module.hpp"

namespace mans::detail {

// Blocks [first, first + count) of a window.
struct Wave {
    std::uint64_t first;
    std::uint64_t count;
};

// Blocks per wave for a window of `blocks` blocks when `in_flight` blocks
// fit one wave's scratch: about a quarter of the window, so that there are
// waves to overlap, but at least `min_wave` (enough warps to fill a GPU
// with the other stream's wave), and never more than fit.
inline std::uint64_t host_wave_blocks(std::uint64_t blocks, std::uint64_t in_flight, std::uint64_t min_wave) {
    std::uint64_t w = (blocks + 3) / 4;
    if (w < min_wave) w = min_wave;
    if (w > in_flight) w = in_flight;
    return w ? w : 1;
}

// The bytes of the elements of a wave's blocks, and where they start.
template <typename Batch>
std::uint64_t wave_elems_at(const Batch& b, std::uint64_t first) {
    return first * b.block_elems;
}
template <typename Batch>
std::uint64_t wave_elems(const Batch& b, const Wave& w) {
    return w.first + w.count == b.blocks ? (w.count - 1) * b.block_elems + b.last_elems : w.count * b.block_elems;
}

// Whether a decode batch's offsets rise and end within its payloads: the
// waves' copies take them as they are (the core builds them from a checked
// frame; a module checks them before its first copy all the same).
inline bool block_batch_offsets_valid(const mans_backend_block_batch& b) {
    if (!b.offsets || !b.payloads || b.offsets[0] != 0) return false;
    for (std::uint64_t i = 0; i < b.blocks; ++i)
        if (b.offsets[i + 1] < b.offsets[i]) return false;
    return b.offsets[b.blocks] <= b.payload_bytes;
}

// Decoding: the wave's payloads in (the offsets, which every wave reads,
// are the caller's to copy once before the first wave).
template <typename Copy>
bool decode_wave_in(const mans_backend_block_batch& host, const mans_backend_block_batch& dev, const Wave& w,
                    const Copy& copy) {
    const std::uint64_t from = host.offsets[w.first], to = host.offsets[w.first + w.count];
    if (to <= from) return true;
    return copy(const_cast<std::uint8_t*>(dev.payloads) + from, host.payloads + from, static_cast<std::size_t>(to - from),
                true);
}
// ... and its elements and statuses out.
template <typename Copy>
bool decode_wave_out(const mans_backend_block_batch& host, const mans_backend_block_batch& dev, unsigned esize,
                     const Wave& w, const Copy& copy) {
    const std::size_t at = static_cast<std::size_t>(wave_elems_at(host, w.first) * esize);
    return copy(host.dst + at, dev.dst + at, static_cast<std::size_t>(wave_elems(host, w) * esize), false) &&
           copy(host.status + w.first, dev.status + w.first, static_cast<std::size_t>(w.count) * sizeof(std::int32_t),
                false);
}

// Encoding: the wave's elements in ...
template <typename Copy>
bool encode_wave_in(const mans_backend_encode_batch& host, const mans_backend_encode_batch& dev, unsigned esize,
                    const Wave& w, const Copy& copy) {
    const std::size_t at = static_cast<std::size_t>(wave_elems_at(host, w.first) * esize);
    return copy(const_cast<std::uint8_t*>(dev.src) + at, host.src + at,
                static_cast<std::size_t>(wave_elems(host, w) * esize), true);
}
// ... and its slots (whole: a payload's size is only known on the device),
// sizes and statuses out.
template <typename Copy>
bool encode_wave_out(const mans_backend_encode_batch& host, const mans_backend_encode_batch& dev, const Wave& w,
                     const Copy& copy) {
    const std::size_t at = static_cast<std::size_t>(w.first * host.slot_bytes);
    return copy(host.slots + at, dev.slots + at, static_cast<std::size_t>(w.count * host.slot_bytes), false) &&
           copy(host.payload_bytes + w.first, dev.payload_bytes + w.first,
                static_cast<std::size_t>(w.count) * sizeof(std::uint64_t), false) &&
           copy(host.status + w.first, dev.status + w.first, static_cast<std::size_t>(w.count) * sizeof(std::int32_t),
                false);
}

}  // namespace mans::detail
