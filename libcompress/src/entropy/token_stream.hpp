// token_stream.hpp - one rANS-coded token stream with its own tables, on
// the CPU (the shared code: token_stream_encode.hpp, token_stream_decode.hpp).
//
// The encoder picks the number of contexts (1, 2, 4 or 8 classes of the
// previous token in the lane) and the probability precision (8..12 bits) by
// estimated size, tables included. docs/FORMAT.md "Token stream".
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "backend.hpp"
#include "core/byte_io.hpp"
#include "entropy/rans_table.hpp"
#include "entropy/token_stream_encode.hpp"  // StreamWork, estimate_order0_fix16

namespace mans::detail {

// Scratch kept between calls (one per worker thread).
struct TokenStreamScratch {
    std::vector<std::uint16_t> words;
    std::vector<EncSym> enc;          // kMaxContexts * 256
    std::vector<std::uint32_t> dec;   // kMaxContexts << kMaxProbBits
    std::vector<FreqTable> freq;      // one, while a stream's tables are read
    std::vector<StreamWork> work;     // one
};

// Appends the coded stream of `layout.n` interleaved tokens to `out`.
// Returns false only when the coder itself fails (never for valid input).
bool encode_token_stream(const std::uint8_t* tokens, const LaneLayout& layout,
                         const RansKernels& kernels, TokenStreamScratch& scratch,
                         std::vector<std::uint8_t>& out);

// Decodes a stream of n tokens from r into `out` (resized to the layout's
// slots, interleaved order) and returns the layout it used in *layout.
// Returns false on any inconsistency.
bool decode_token_stream(ByteReader& r, std::size_t n, const RansKernels& kernels,
                         TokenStreamScratch& scratch, std::vector<std::uint8_t>& out,
                         LaneLayout* layout);

// An output for the shared coders (`grow`, token_stream_encode.hpp) that
// appends to a vector; it never fails (std::bad_alloc reaches the API).
struct VectorOut {
    std::vector<std::uint8_t>& v;
    std::uint8_t* grow(std::size_t n) {
        const std::size_t old = v.size();
        v.resize(old + n);
        return v.data() + old;
    }
};

}  // namespace mans::detail
