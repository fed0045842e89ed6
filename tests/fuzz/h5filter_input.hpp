// h5filter_input.hpp - how fuzz_h5filter reads its input, shared with the
// seed generator (make_h5_seeds.cpp) so that seeds hit valid configs:
//
//   byte 0      selector: bit 0 = encode (else decode); bit 1 = structured
//               config (else raw cd_values); bits 2..7 = structured: index
//               of a persisted word to override (>= 15: none)
//   structured  8 bytes: codec, dtype, rank, 4 dims, mode/flags/bound/fill
//               (bit 0 relative, bits 1-2 flags, 4-5 bound, 6-7 fill); then a
//               4-byte override word (little-endian)
//   raw         1 byte word count (mod 25), then 4 bytes per word
//   rest        the chunk: decode input, or encode input (cut or zero-padded
//               to the chunk size)
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <vector>

#include "chunk_codec.h"
#include "mans/prism.h"

namespace h5fuzz {

constexpr std::size_t kStructuredHeader = 1 + 8 + 4;

inline std::uint32_t le32(const std::uint8_t* p) {
    return std::uint32_t(p[0]) | std::uint32_t(p[1]) << 8 | std::uint32_t(p[2]) << 16 | std::uint32_t(p[3]) << 24;
}

// A plausible persisted config from 8 bytes: small chunks, every codec/dtype.
inline mans_h5_config config_from(const std::uint8_t* b) {
    static const std::uint32_t mans_dtypes[] = {MANS_DTYPE_U8,  MANS_DTYPE_U16, MANS_DTYPE_U32, MANS_DTYPE_U64,
                                                MANS_DTYPE_I16, MANS_DTYPE_I32, MANS_DTYPE_I64};
    static const std::uint32_t sizes[] = {1, 2, 4, 8, 2, 4, 8};
    static const double bounds[] = {1e-3, 1e-1, 1.0, 1e-6};
    mans_h5_config c{};
    c.codec = 1 + b[0] % 2;
    if (c.codec == MANS_H5_CODEC_MANS) {
        c.dtype = mans_dtypes[b[1] % 7];
        c.element_size = sizes[b[1] % 7];
        c.mode = MANS_H5_LOSSLESS;
    } else {
        c.dtype = b[1] % 2 ? MANS_PRISM_F64 : MANS_PRISM_F32;
        c.element_size = b[1] % 2 ? 8 : 4;
        c.mode = b[7] & 1 ? MANS_H5_REL : MANS_H5_ABS;
        c.bound = bounds[(b[7] >> 4) % 4];
    }
    c.rank = 1 + b[2] % 4;
    for (std::uint32_t i = 0; i < c.rank; ++i) c.dims[i] = 1 + b[3 + i] % (c.rank == 1 ? 4096 : 40);
    c.flags = (b[7] >> 1) & MANS_H5_KNOWN_FLAGS;
    static const double fills[] = {-1e10, NAN, -0.0, 1e300};  // a hostile writer's fills too
    if (c.flags & MANS_H5_FLAG_FILL) c.fill = fills[b[7] >> 6];
    return c;
}

// Writes the structured input for config bytes `cfg` and a chunk.
inline std::vector<std::uint8_t> structured_input(bool encode, const std::uint8_t cfg[8],
                                                  const std::vector<std::uint8_t>& chunk) {
    std::vector<std::uint8_t> in;
    in.push_back(static_cast<std::uint8_t>((encode ? 1 : 0) | 2 | (63u << 2)));  // no override
    in.insert(in.end(), cfg, cfg + 8);
    in.insert(in.end(), 4, 0);
    in.insert(in.end(), chunk.begin(), chunk.end());
    return in;
}

}  // namespace h5fuzz
