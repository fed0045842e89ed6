// block_decoder.cpp - the CPU's decode_block (block_codec.hpp): the shared
// decoder of block_decode.hpp with this CPU's rANS kernels and scratch
// vectors that grow to the largest block seen.
#include "mapping/block_codec.hpp"
#include "mapping/block_decode.hpp"

namespace mans::detail {

namespace {

// Scratch provider for decode_block_payload: BlockScratch's vectors, grown
// on demand (std::bad_alloc reaches the API's catch).
struct VectorBlockScratch {
    BlockScratch& sc;
    const RansKernels& kernels;

    bool stream(std::size_t n, TokenDecodeBuffers* b) const {
        sc.stream.dec.resize(std::size_t{kMaxContexts} << kMaxProbBits);
        sc.stream.freq.resize(1);
        if (sc.stream.words.size() < n + kWordPadding) sc.stream.words.resize(n + kWordPadding);
        if (sc.tokens.size() < token_buffer_entries(n)) sc.tokens.resize(token_buffer_entries(n));
        *b = {sc.stream.dec.data(), sc.stream.words.data(), sc.tokens.data(), sc.stream.freq.data()};
        return true;
    }
    // The dictionary in the block's type, as in a GPU's slice; the vector's
    // storage (operator new) is aligned for any of them.
    template <typename U>
    U* dict(std::size_t count) const {
        if (sc.dict_area.size() < count * sizeof(U)) sc.dict_area.resize(count * sizeof(U));
        return reinterpret_cast<U*>(sc.dict_area.data());
    }
    std::uint32_t* index(std::size_t n) const {
        if (sc.index.size() < n) sc.index.resize(n);
        return sc.index.data();
    }
    HybridTokenInfo* hybrid_token_info() const {
        sc.token_info.resize(kHybridTokenInfoEntries);
        return sc.token_info.data();
    }
    auto hybrid_reconstructor() const { return kernels.reconstruct_hybrid; }
    std::uint8_t* lane_tokens(std::size_t n) const {
        if (sc.lane_tokens.size() < n) sc.lane_tokens.resize(n);
        return sc.lane_tokens.data();
    }
};

}  // namespace

Errc decode_block(DType dtype, const std::uint8_t* payload, std::size_t size, std::size_t n,
                  void* dst, const RansKernels& kernels, BlockScratch& scratch) {
    const auto lanes = [&](const RansDecodeArgs& a) { return kernels.decode(a); };
    return decode_block_payload(dtype, payload, size, n, static_cast<std::uint8_t*>(dst), lanes,
                                VectorBlockScratch{scratch, kernels});
}

}  // namespace mans::detail
