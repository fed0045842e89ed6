// frame.cpp - see frame.hpp.
#include "core/frame.hpp"

#define XXH_INLINE_ALL
#include <xxhash.h>

#include "core/status.hpp"

namespace mans::detail {

std::uint32_t checksum32(const void* data, std::size_t size) {
    return static_cast<std::uint32_t>(XXH3_64bits(data, size));
}

namespace {
struct Checksum32 {
    std::uint32_t operator()(const void* data, std::size_t size) const { return checksum32(data, size); }
};
}  // namespace

void write_frame_prefix(const FrameHeader& h, const IndexEntry* index, std::uint8_t* dst) {
    write_frame_prefix_with(h, [index](std::uint64_t b) { return index[b]; }, Checksum32{}, dst);
}

Errc parse_frame(const std::uint8_t* src, std::size_t size, ParsedFrame* out) {
    MANS_RETURN_IF_ERROR(parse_frame_header_with(src, size, Checksum32{}, &out->header));
    // block_count() is bounded by the size (checked above): safe to allocate.
    const std::uint64_t nblocks = out->header.block_count();
    out->index.resize(nblocks);
    out->offsets.resize(nblocks);
    return parse_frame_index(
        src, size, out->header,
        [out](std::uint64_t b, const IndexEntry& e, std::uint64_t offset) {
            out->index[b] = e;
            out->offsets[b] = offset;
        },
        &out->total_bytes);
}

}  // namespace mans::detail
