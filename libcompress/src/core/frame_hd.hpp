// frame_hd.hpp - the stream container (docs/FORMAT.md "Frame"): header,
// block index, header checksum. Written once as MANS_HD code: the CPU
// (frame.cpp) and a GPU writing or reading whole streams in device memory
// (mapping/chunk_batch.hpp) run the same checks and write the same bytes.
// The checksum is a parameter: libxxhash on the CPU, xxh3_hd.hpp on a GPU.
#pragma once

#include <cstddef>
#include <cstdint>

#include "core/byte_io.hpp"
#include "core/hd.hpp"
#include "core/status.hpp"  // MANS_RETURN_IF
#include "mans/mans.hpp"
#include "mapping/elements.hpp"  // elem_bytes

namespace mans::detail {

inline constexpr std::uint8_t kMagic[4] = {'M', 'A', 'N', 'S'};  // host code; device code: has_frame_magic
inline constexpr std::uint8_t kCodecMansLossless = 1;
inline constexpr std::size_t kFixedHeaderBytes = 24;
inline constexpr std::size_t kIndexEntryBytes = 8;
inline constexpr std::size_t kHeaderChecksumBytes = 4;
// Blocks hold at most 64 MiB of raw data, so a block's payload size
// (at most raw + 1) always fits the index's 32-bit field.
inline constexpr std::uint64_t kMaxBlockBytes = mans::kMaxBlockBytes;
inline constexpr std::uint64_t kMinBlockBytes = mans::kMinBlockBytes;
inline constexpr std::uint32_t kKnownFrameFlags = 0;

// mans::compress_bound: the largest stream of src_bytes of input (every
// block stored, one mode byte each, at the smallest block size, plus
// header, dims, index and checksum); 0 when that does not fit a size_t.
MANS_HD std::size_t stream_bound(std::size_t src_bytes) {
    const std::size_t blocks = src_bytes / kMinBlockBytes + 1;
    const std::size_t overhead = kFixedHeaderBytes + 32 + kHeaderChecksumBytes + blocks * (kIndexEntryBytes + 1);
    return src_bytes > ~std::size_t{0} - overhead ? 0 : src_bytes + overhead;
}

MANS_HD bool has_frame_magic(const std::uint8_t* p) {
    return p[0] == 'M' && p[1] == 'A' && p[2] == 'N' && p[3] == 'S';
}

struct FrameHeader {
    std::uint8_t version = MANS_FORMAT_VERSION;
    std::uint8_t codec = kCodecMansLossless;
    DType dtype = DType::u16;
    std::uint32_t rank = 0;
    std::uint64_t dims[4] = {0, 0, 0, 0};
    std::uint64_t count = 0;        // elements
    std::uint32_t block_elems = 0;  // elements per block (last block may be shorter)

    MANS_HD std::uint64_t block_count() const {
        // Written so that it cannot wrap for counts near 2^64.
        return block_elems ? count / block_elems + (count % block_elems != 0) : 0;
    }
    // First element of block b and its element count (the last block may be short).
    MANS_HD std::uint64_t block_first(std::uint64_t b) const { return b * block_elems; }
    MANS_HD std::uint64_t block_len(std::uint64_t b) const {
        const std::uint64_t left = count - block_first(b);
        return left < block_elems ? left : block_elems;
    }
    MANS_HD std::size_t header_bytes() const { return kFixedHeaderBytes + 8 * rank; }
    MANS_HD std::size_t prefix_bytes() const {  // header + index + header checksum
        return header_bytes() + kIndexEntryBytes * block_count() + kHeaderChecksumBytes;
    }
};

struct IndexEntry {
    std::uint32_t payload_bytes;
    std::uint32_t content_checksum;  // XXH3-64 of the block's raw bytes, low 32 bits
};

// Writes header, index and header checksum to dst (h.prefix_bytes()
// bytes). entry(b) gives block b's IndexEntry; checksum(p, n) the low 32
// bits of XXH3-64.
template <typename Entry, typename Checksum>
MANS_HD void write_frame_prefix_with(const FrameHeader& h, const Entry& entry, const Checksum& checksum,
                                     std::uint8_t* dst) {
    std::uint8_t* p = dst;
    p[0] = 'M', p[1] = 'A', p[2] = 'N', p[3] = 'S';
    p[4] = h.version;
    p[5] = h.codec;
    p[6] = static_cast<std::uint8_t>(h.dtype);
    p[7] = static_cast<std::uint8_t>(h.rank);
    store_le<std::uint64_t>(p + 8, h.count);
    store_le<std::uint32_t>(p + 16, h.block_elems);
    store_le<std::uint32_t>(p + 20, 0);  // flags
    p += kFixedHeaderBytes;
    for (std::uint32_t d = 0; d < h.rank; ++d, p += 8) store_le<std::uint64_t>(p, h.dims[d]);
    const std::uint64_t nblocks = h.block_count();
    for (std::uint64_t b = 0; b < nblocks; ++b, p += kIndexEntryBytes) {
        const IndexEntry e = entry(b);
        store_le<std::uint32_t>(p, e.payload_bytes);
        store_le<std::uint32_t>(p + 4, e.content_checksum);
    }
    store_le<std::uint32_t>(p, checksum(dst, static_cast<std::size_t>(p - dst)));
}

// Reads and validates the header of a stream of `size` bytes (magic,
// version, fields, that the index fits, the header checksum): everything
// but the index entries, which parse_frame_index checks. Allocates nothing.
template <typename Checksum>
MANS_HD Errc parse_frame_header_with(const std::uint8_t* src, std::size_t size, const Checksum& checksum,
                                     FrameHeader* out) {
    MANS_RETURN_IF(!src && size, Errc::invalid_argument);
    MANS_RETURN_IF(size < 4, size == 0 ? Errc::truncated : Errc::bad_magic);
    MANS_RETURN_IF(!has_frame_magic(src), Errc::bad_magic);
    MANS_RETURN_IF(size < kFixedHeaderBytes, Errc::truncated);
    FrameHeader& h = *out;
    h.version = src[4];
    MANS_RETURN_IF(h.version == 0 || h.version > MANS_FORMAT_VERSION, Errc::unsupported_version);
    h.codec = src[5];
    MANS_RETURN_IF(h.codec != kCodecMansLossless, Errc::corrupt_header);
    h.dtype = static_cast<DType>(src[6]);
    const std::uint64_t esize = elem_bytes(h.dtype);
    MANS_RETURN_IF(esize == 0, Errc::corrupt_header);
    h.rank = src[7];
    MANS_RETURN_IF(h.rank > 4, Errc::corrupt_header);
    h.count = load_le<std::uint64_t>(src + 8);
    h.block_elems = load_le<std::uint32_t>(src + 16);
    MANS_RETURN_IF(load_le<std::uint32_t>(src + 20) & ~kKnownFrameFlags, Errc::corrupt_header);
    MANS_RETURN_IF(h.count > (~0ull) / esize, Errc::corrupt_header);
    MANS_RETURN_IF(h.block_elems == 0 || h.block_elems * esize > kMaxBlockBytes, Errc::corrupt_header);
    MANS_RETURN_IF(size < h.header_bytes(), Errc::truncated);
    std::uint64_t product = 1;
    for (std::uint32_t d = 0; d < h.rank; ++d) {
        h.dims[d] = load_le<std::uint64_t>(src + kFixedHeaderBytes + 8 * d);
        MANS_RETURN_IF(h.dims[d] != 0 && product > (~0ull) / h.dims[d], Errc::corrupt_header);
        product *= h.dims[d];
    }
    MANS_RETURN_IF(h.rank > 0 && product != h.count, Errc::corrupt_header);

    // The index must fit in what is left (so that a caller may size arrays
    // by block_count() without trusting it further).
    const std::uint64_t nblocks = h.block_count();
    const std::size_t after_header = size - h.header_bytes();
    const std::size_t for_index = after_header - (after_header < kHeaderChecksumBytes ? after_header : kHeaderChecksumBytes);
    MANS_RETURN_IF(nblocks > for_index / kIndexEntryBytes, Errc::truncated);
    const std::size_t prefix = h.prefix_bytes();
    MANS_RETURN_IF(size < prefix, Errc::truncated);
    const std::uint32_t stored = load_le<std::uint32_t>(src + prefix - kHeaderChecksumBytes);
    MANS_RETURN_IF(stored != checksum(src, prefix - kHeaderChecksumBytes), Errc::header_checksum);
    return Errc::ok;
}

// Checks the index of a stream whose header parse_frame_header_with
// accepted, and that the payloads end exactly at `size`. Calls
// on_entry(b, entry, offset) for each block, offset being where its payload
// starts in the stream; *total gets the stream's size.
template <typename OnEntry>
MANS_HD Errc parse_frame_index(const std::uint8_t* src, std::size_t size, const FrameHeader& h,
                               const OnEntry& on_entry, std::uint64_t* total) {
    const std::uint64_t esize = elem_bytes(h.dtype);
    const std::uint64_t nblocks = h.block_count();
    std::uint64_t offset = h.prefix_bytes();
    const std::uint8_t* p = src + h.header_bytes();
    for (std::uint64_t b = 0; b < nblocks; ++b, p += kIndexEntryBytes) {
        IndexEntry e;
        e.payload_bytes = load_le<std::uint32_t>(p);
        e.content_checksum = load_le<std::uint32_t>(p + 4);
        // A payload is a mode byte plus at most the raw bytes.
        MANS_RETURN_IF(e.payload_bytes == 0 || e.payload_bytes > 1 + h.block_len(b) * esize, Errc::corrupt_header);
        on_entry(b, e, offset);
        offset += e.payload_bytes;
    }
    *total = offset;
    MANS_RETURN_IF(size < offset, Errc::truncated);
    MANS_RETURN_IF(size > offset, Errc::trailing_bytes);
    return Errc::ok;
}

}  // namespace mans::detail
