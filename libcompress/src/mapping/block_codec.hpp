// block_codec.hpp - encodes and decodes one independent block of elements.
//
// Each block picks its own mapping by estimated cost (docs/FORMAT.md "Block
// payload"): stored, constant, hybrid tokens against the block center or the
// previous element (optionally with a repeat token), ADM, byte planes, or a
// dictionary of distinct values with a nested block of indices. Blocks share nothing, so a backend
// may run them in any order or all at once.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "backend.hpp"
#include "entropy/token_stream.hpp"
#include "mapping/block_decode.hpp"  // BlockMode
#include "mapping/block_encode.hpp"  // ModeHint
#include "mans/mans.hpp"

namespace mans::detail {


struct BlockScratch {
    TokenStreamScratch stream;
    std::vector<std::uint8_t> tokens;
    std::vector<std::uint8_t> bits;
    std::vector<std::uint64_t> sample;
    std::vector<std::uint64_t> dict;    // dictionary mode: sorted distinct values
    std::vector<std::uint8_t> dict_area;  // decoding them: in the block's type
    std::vector<std::uint32_t> index;   // dictionary mode: index of each element
    std::vector<std::uint32_t> value_map;  // dictionary mode, 16-bit values: value -> index
    std::vector<std::uint64_t> sorted;     // dictionary mode, wider values, in a team (unused by one thread)
    std::vector<HybridTokenInfo> token_info;  // token mode's decode table (kHybridTokenInfoEntries)
    std::vector<std::uint8_t> lane_tokens;    // token mode's SIMD decoder: the tokens lane by lane
    std::vector<EncodeWork> work;           // one, made by the first encode
};

// Appends the payload of block `src` (n elements of `dtype`) to `out`.
void encode_block(DType dtype, const void* src, std::size_t n, const RansKernels& kernels,
                  BlockScratch& scratch, std::vector<std::uint8_t>& out,
                  ModeHint hint = ModeHint::automatic);

// Decodes a payload of exactly `size` bytes into n elements at dst.
Errc decode_block(DType dtype, const std::uint8_t* payload, std::size_t size, std::size_t n,
                  void* dst, const RansKernels& kernels, BlockScratch& scratch);

}  // namespace mans::detail
