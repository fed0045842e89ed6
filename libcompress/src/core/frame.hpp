// frame.hpp - the stream container: header, block index, header checksum.
// docs/FORMAT.md "Frame" is the normative description.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "mans/mans.hpp"

namespace mans::detail {

inline constexpr std::uint8_t kMagic[4] = {'M', 'A', 'N', 'S'};
inline constexpr std::uint8_t kCodecMansLossless = 1;
inline constexpr std::size_t kFixedHeaderBytes = 24;
inline constexpr std::size_t kIndexEntryBytes = 8;
inline constexpr std::size_t kHeaderChecksumBytes = 4;
// Blocks hold at most 64 MiB of raw data, so a block's payload size
// (at most raw + 1) always fits the index's 32-bit field.
inline constexpr std::uint64_t kMaxBlockBytes = mans::kMaxBlockBytes;
inline constexpr std::uint64_t kMinBlockBytes = mans::kMinBlockBytes;

struct FrameHeader {
    std::uint8_t version = MANS_FORMAT_VERSION;
    std::uint8_t codec = kCodecMansLossless;
    DType dtype = DType::u16;
    std::uint32_t rank = 0;
    std::uint64_t dims[4] = {0, 0, 0, 0};
    std::uint64_t count = 0;        // elements
    std::uint32_t block_elems = 0;  // elements per block (last block may be shorter)

    std::uint64_t block_count() const {
        // Written so that it cannot wrap for counts near 2^64.
        return block_elems ? count / block_elems + (count % block_elems != 0) : 0;
    }
    // First element of block b and its element count (the last block may be short).
    std::uint64_t block_first(std::uint64_t b) const { return b * block_elems; }
    std::uint64_t block_len(std::uint64_t b) const {
        const std::uint64_t left = count - block_first(b);
        return left < block_elems ? left : block_elems;
    }
    std::size_t header_bytes() const { return kFixedHeaderBytes + 8 * rank; }
    std::size_t prefix_bytes() const {  // header + index + header checksum
        return header_bytes() + kIndexEntryBytes * block_count() + kHeaderChecksumBytes;
    }
};

struct IndexEntry {
    std::uint32_t payload_bytes;
    std::uint32_t content_checksum;  // XXH3-64 of the block's raw bytes, low 32 bits
};

// Writes header, index and header checksum to dst (prefix_bytes() bytes).
void write_frame_prefix(const FrameHeader& h, const IndexEntry* index, std::uint8_t* dst);

struct ParsedFrame {
    FrameHeader header;
    std::vector<IndexEntry> index;
    std::vector<std::uint64_t> offsets;  // payload offset of each block within the stream
    std::uint64_t total_bytes = 0;
};

// Validates everything but the payloads (magic, version, fields, index,
// header checksum, exact total size).
Errc parse_frame(const std::uint8_t* src, std::size_t size, ParsedFrame* out);

std::uint32_t checksum32(const void* data, std::size_t size);

}  // namespace mans::detail
