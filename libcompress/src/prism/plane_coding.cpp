// plane_coding.cpp - payload = sub-blob "new" || sub-blob "refine";
// sub-blob = [u8 method][varint stored bytes][payload], the bits packed in
// code order (bit i at bit i % 8 of byte i / 8, unused high bits zero).
#include "prism/plane_coding.hpp"

#include "core/byte_io.hpp"
#include "core/status.hpp"
#include "prism/lossless.hpp"

namespace mans::detail::prism {
namespace {

// Bits of a word in the planes before b (the part a reader has already).
std::uint32_t higher_mask(unsigned b, unsigned planes, Coding c) {
    std::uint32_t m = 0;
    for (unsigned k = 0; k < b; ++k) m = with_plane_bit(m, k, planes, c, 1);
    return m;
}

void put_sub_blob(const std::vector<std::uint8_t>& bits, std::vector<std::uint8_t>* out) {
    Encoded e;
    encode_best(bits.data(), bits.size(), 1, true, &e);
    out->push_back(static_cast<std::uint8_t>(e.method));
    std::uint8_t v[kMaxVarintBytes];
    out->insert(out->end(), v, v + encode_varint(e.bytes.size(), v));
    out->insert(out->end(), e.bytes.begin(), e.bytes.end());
}

Errc get_sub_blob(ByteReader* r, std::uint64_t nbits, std::vector<std::uint8_t>* bits) {
    std::uint8_t method = 0;
    std::uint64_t stored = 0;
    const std::uint8_t* p = nullptr;
    if (!r->read(&method) || !r->read_varint64(&stored) || method >= kMethodCount || stored > r->remaining())
        return Errc::corrupt_block;
    r->take(static_cast<std::size_t>(stored), &p);
    const std::size_t nbytes = static_cast<std::size_t>((nbits + 7) / 8);
    bits->resize(nbytes);
    const Errc e = decode_payload(static_cast<Method>(method), p, static_cast<std::size_t>(stored), bits->data(),
                                  nbytes, 1);
    if (e != Errc::ok) return e;
    if ((nbits % 8) && ((*bits)[nbytes - 1] >> (nbits % 8))) return Errc::corrupt_block;
    return Errc::ok;
}

// Stream of code j for plane b: 3 when the code is already significant
// (refinement bits), else the number of its chunk neighbours j-1, j+1 that
// are (0..2): significance spreads spatially.
constexpr unsigned kStreams = 4;

void classify(const std::uint32_t* words, std::uint64_t len, std::uint32_t higher, std::vector<std::uint8_t>* ctx) {
    ctx->resize(static_cast<std::size_t>(len));
    for (std::uint64_t j = 0; j < len; ++j) {
        if (words[j] & higher) {
            (*ctx)[j] = 3;
            continue;
        }
        const unsigned left = j > 0 && (words[j - 1] & higher);
        const unsigned right = j + 1 < len && (words[j + 1] & higher);
        (*ctx)[j] = static_cast<std::uint8_t>(left + right);
    }
}

}  // namespace

bool encode_plane_chunk(const std::uint32_t* words, std::uint64_t len, unsigned b, unsigned planes, Coding c,
                        std::vector<std::uint8_t>* out) {
    const std::uint32_t higher = higher_mask(b, planes, c);
    const std::uint32_t digit = with_plane_bit(0, b, planes, c, 1);
    std::vector<std::uint8_t> ctx;
    classify(words, len, higher, &ctx);
    std::vector<std::uint8_t> streams[kStreams];
    std::uint64_t count[kStreams] = {0, 0, 0, 0};
    for (auto& st : streams) st.assign(static_cast<std::size_t>((len + 7) / 8), 0);
    bool any = false;
    for (std::uint64_t j = 0; j < len; ++j) {
        const std::uint8_t bit = (words[j] & digit) ? 1 : 0;
        any |= bit != 0;
        const unsigned k = ctx[j];
        streams[k][count[k] / 8] |= static_cast<std::uint8_t>(bit << (count[k] % 8));
        ++count[k];
    }
    if (!any) return false;
    for (unsigned k = 0; k < kStreams; ++k) {
        streams[k].resize(static_cast<std::size_t>((count[k] + 7) / 8));
        put_sub_blob(streams[k], out);
    }
    return true;
}

Errc decode_plane_chunk(const std::uint8_t* payload, std::size_t size, std::uint32_t* words, std::uint64_t len,
                        unsigned b, unsigned planes, Coding c) {
    const std::uint32_t higher = higher_mask(b, planes, c);
    const std::uint32_t digit = with_plane_bit(0, b, planes, c, 1);
    std::vector<std::uint8_t> ctx;
    classify(words, len, higher, &ctx);
    std::uint64_t count[kStreams] = {0, 0, 0, 0};
    for (std::uint8_t k : ctx) ++count[k];
    ByteReader r(payload, size);
    std::vector<std::uint8_t> streams[kStreams];
    for (unsigned k = 0; k < kStreams; ++k) MANS_RETURN_IF_ERROR(get_sub_blob(&r, count[k], &streams[k]));
    if (r.remaining() != 0) return Errc::corrupt_block;
    std::uint64_t at[kStreams] = {0, 0, 0, 0};
    for (std::uint64_t j = 0; j < len; ++j) {
        const unsigned k = ctx[j];
        const std::uint64_t i = at[k]++;
        if (streams[k][static_cast<std::size_t>(i / 8)] >> (i % 8) & 1) words[j] |= digit;
    }
    return Errc::ok;
}

}  // namespace mans::detail::prism
