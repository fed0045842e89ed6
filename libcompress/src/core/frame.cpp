// frame.cpp - see frame.hpp.
#include "core/frame.hpp"

#include <algorithm>
#include <cstring>

#define XXH_INLINE_ALL
#include <xxhash.h>

#include "core/byte_io.hpp"
#include "core/status.hpp"

namespace mans::detail {

namespace {
constexpr std::uint32_t kKnownFlags = 0;
}

std::uint32_t checksum32(const void* data, std::size_t size) {
    return static_cast<std::uint32_t>(XXH3_64bits(data, size));
}

void write_frame_prefix(const FrameHeader& h, const IndexEntry* index, std::uint8_t* dst) {
    std::uint8_t* p = dst;
    std::memcpy(p, kMagic, 4);
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
        store_le<std::uint32_t>(p, index[b].payload_bytes);
        store_le<std::uint32_t>(p + 4, index[b].content_checksum);
    }
    store_le<std::uint32_t>(p, checksum32(dst, static_cast<std::size_t>(p - dst)));
}

Errc parse_frame(const std::uint8_t* src, std::size_t size, ParsedFrame* out) {
    MANS_RETURN_IF(!src && size, Errc::invalid_argument);
    MANS_RETURN_IF(size < 4, size == 0 ? Errc::truncated : Errc::bad_magic);
    MANS_RETURN_IF(std::memcmp(src, kMagic, 4) != 0, Errc::bad_magic);
    MANS_RETURN_IF(size < kFixedHeaderBytes, Errc::truncated);
    FrameHeader& h = out->header;
    h.version = src[4];
    MANS_RETURN_IF(h.version == 0 || h.version > MANS_FORMAT_VERSION, Errc::unsupported_version);
    h.codec = src[5];
    MANS_RETURN_IF(h.codec != kCodecMansLossless, Errc::corrupt_header);
    h.dtype = static_cast<DType>(src[6]);
    MANS_RETURN_IF(dtype_size(h.dtype) == 0, Errc::corrupt_header);
    h.rank = src[7];
    MANS_RETURN_IF(h.rank > 4, Errc::corrupt_header);
    h.count = load_le<std::uint64_t>(src + 8);
    h.block_elems = load_le<std::uint32_t>(src + 16);
    MANS_RETURN_IF(load_le<std::uint32_t>(src + 20) & ~kKnownFlags, Errc::corrupt_header);
    const std::size_t esize = dtype_size(h.dtype);
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

    // The index must fit in what is left; checked before any allocation.
    const std::uint64_t nblocks = h.block_count();
    const std::size_t after_header = size - h.header_bytes();
    MANS_RETURN_IF(nblocks > (after_header - std::min<std::size_t>(after_header, kHeaderChecksumBytes)) /
                                 kIndexEntryBytes,
                   Errc::truncated);
    const std::size_t prefix = h.prefix_bytes();
    MANS_RETURN_IF(size < prefix, Errc::truncated);
    const std::uint32_t stored = load_le<std::uint32_t>(src + prefix - kHeaderChecksumBytes);
    MANS_RETURN_IF(stored != checksum32(src, prefix - kHeaderChecksumBytes), Errc::header_checksum);

    out->index.resize(nblocks);
    out->offsets.resize(nblocks);
    std::uint64_t offset = prefix;
    const std::uint8_t* p = src + h.header_bytes();
    for (std::uint64_t b = 0; b < nblocks; ++b, p += kIndexEntryBytes) {
        IndexEntry& e = out->index[b];
        e.payload_bytes = load_le<std::uint32_t>(p);
        e.content_checksum = load_le<std::uint32_t>(p + 4);
        // A payload is a mode byte plus at most the raw bytes.
        MANS_RETURN_IF(e.payload_bytes == 0 || e.payload_bytes > 1 + h.block_len(b) * esize,
                       Errc::corrupt_header);
        out->offsets[b] = offset;
        offset += e.payload_bytes;
    }
    out->total_bytes = offset;
    MANS_RETURN_IF(size < offset, Errc::truncated);
    MANS_RETURN_IF(size > offset, Errc::trailing_bytes);
    return Errc::ok;
}

}  // namespace mans::detail
