// block_encoder.cpp - the CPU's encode_block (block_codec.hpp): the shared
// encoder of block_encode.hpp with this CPU's rANS kernels and scratch
// vectors that grow to the largest block seen.
#include "backend.hpp"
#include "mapping/block_codec.hpp"
#include "mapping/block_encode.hpp"

namespace mans::detail {

namespace {

// Grows v to at least n entries and returns its data (never null: a failed
// allocation throws std::bad_alloc to the API's catch).
template <typename T>
T* at_least(std::vector<T>& v, std::size_t n) {
    if (v.size() < n) v.resize(n);
    return v.data();
}

// Output for BlockEncoder: the caller's payload vector.
struct VectorPayload {
    std::vector<std::uint8_t>& v;
    std::size_t size() const { return v.size(); }
    std::uint8_t* grow(std::size_t n) { return VectorOut{v}.grow(n); }
    void truncate(std::size_t n) { v.resize(n); }
    void erase(std::size_t begin, std::size_t end) {
        v.erase(v.begin() + static_cast<std::ptrdiff_t>(begin), v.begin() + static_cast<std::ptrdiff_t>(end));
    }
};

// Env of BlockEncoder (block_encode.hpp) on the CPU.
struct CpuEncodeEnv {
    const RansKernels& kernels;
    BlockScratch& sc;
    VectorPayload payload;

    VectorPayload& out() { return payload; }
    void lanes(RansEncodeArgs& a) const { kernels.encode(a); }
    auto hybrid_tokenizer() const { return kernels.tokenize_hybrid; }
    std::uint8_t* tokens(std::size_t slots) const { return at_least(sc.tokens, slots); }
    std::uint8_t* bits(std::size_t bytes) const { return at_least(sc.bits, bytes); }
    std::uint64_t* sample(std::size_t n) const { return at_least(sc.sample, n); }
    std::uint64_t* dict(std::size_t n) const { return at_least(sc.dict, n); }
    std::uint32_t* index(std::size_t n) const { return at_least(sc.index, n); }
    std::uint32_t* value_map(std::size_t n) const { return at_least(sc.value_map, n); }
    std::uint64_t* sorted(std::size_t n) const { return at_least(sc.sorted, n); }
    EncodeWork* work() const { return at_least(sc.work, 1); }
    TokenEncodeBuffers stream(std::size_t n) const {
        return {at_least(sc.stream.enc, std::size_t{kMaxContexts} * 256), at_least(sc.stream.words, n + kWordPadding),
                &work()->stream};
    }
};

}  // namespace

void encode_block(DType dtype, const void* src, std::size_t n, const RansKernels& kernels,
                  BlockScratch& scratch, std::vector<std::uint8_t>& out, ModeHint hint) {
    CpuEncodeEnv env{kernels, scratch, VectorPayload{out}};
    dispatch_width(dtype, [&](auto zero) {
        using U = decltype(zero);
        BlockEncoder<U, CpuEncodeEnv> enc(static_cast<const std::uint8_t*>(src), n, sign_flip(dtype), env);
        enc.run(hint);  // a CPU Env never fails
    });
}

}  // namespace mans::detail
