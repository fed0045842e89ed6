// frame.hpp - the stream container on the CPU: header, block index,
// header checksum. docs/FORMAT.md "Frame" is the normative description; the
// code that writes and checks it is shared with the GPU (frame_hd.hpp).
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "core/frame_hd.hpp"
#include "mans/mans.hpp"

namespace mans::detail {

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
