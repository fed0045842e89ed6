// token_stream.cpp - the CPU's token stream coder: the shared code of
// token_stream_encode.hpp / token_stream_decode.hpp with this CPU's rANS
// kernels and growing vectors.
#include "entropy/token_stream.hpp"

#include "entropy/token_stream_decode.hpp"
#include "entropy/token_stream_encode.hpp"

namespace mans::detail {

bool encode_token_stream(const std::uint8_t* tokens, const LaneLayout& lay,
                         const RansKernels& kernels, TokenStreamScratch& sc,
                         std::vector<std::uint8_t>& out) {
    sc.enc.resize(kMaxContexts * 256);
    if (sc.words.size() < lay.n + kWordPadding) sc.words.resize(lay.n + kWordPadding);
    sc.work.resize(1);
    VectorOut o{out};
    return encode_token_stream_into(
        tokens, lay, [&](RansEncodeArgs& a) { kernels.encode(a); },
        TokenEncodeBuffers{sc.enc.data(), sc.words.data(), sc.work.data()}, o);
}

bool decode_token_stream(ByteReader& r, std::size_t n, const RansKernels& kernels,
                         TokenStreamScratch& sc, std::vector<std::uint8_t>& out,
                         LaneLayout* layout) {
    sc.dec.resize(static_cast<std::size_t>(kMaxContexts) << kMaxProbBits);
    sc.words.resize(n + kWordPadding);
    sc.freq.resize(1);
    out.resize(token_buffer_entries(n));
    const TokenDecodeBuffers b{sc.dec.data(), sc.words.data(), out.data(), sc.freq.data()};
    return decode_token_stream_into(
        r, n, [&](const RansDecodeArgs& a) { return kernels.decode(a); }, b, layout);
}

}  // namespace mans::detail
