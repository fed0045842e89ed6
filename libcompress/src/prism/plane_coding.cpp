// plane_coding.cpp - payload = [u16: 2-bit method per context] then, for
// each context whose method is not 0, [varint stored bytes][payload]; a
// context's bits are packed in code order (bit i at bit i % 8 of byte i / 8,
// unused high bits zero).
//
// Work is done 64 codes at a time on bit masks: a plane and the
// significance of the codes are u64 words, the contexts are masks derived
// from them, and a context's bits are gathered (encoder) or scattered
// (decoder) with a loop over set bits only, so sparse high planes cost
// little.
#include "prism/plane_coding.hpp"

#include <algorithm>
#include <cstring>

#include "core/byte_io.hpp"
#include "core/hd.hpp"  // popcount64_hd
#include "core/status.hpp"
#include "prism/lossless.hpp"

namespace mans::detail::prism {
namespace {

constexpr unsigned kStreams = 5;

// Bits of a word in the planes before b (the part a reader already has).
std::uint32_t higher_mask(unsigned b, unsigned planes, Coding c) {
    std::uint32_t m = 0;
    for (unsigned k = 0; k < b; ++k) m = with_plane_bit(m, k, planes, c, 1);
    return m;
}

// Context masks of 64 codes from the significance of the codes (sig) and of
// their chunk neighbours: not yet significant: 0, 1, 2 by the number of
// significant neighbours j-1, j+1; significant: 3 when its first set bit was
// the previous plane (fresh), else 4. `prev_top` / `next_low` are the
// neighbouring words' edge bits; `valid` masks codes past the chunk end.
void context_masks(std::uint64_t sig, std::uint64_t fresh, std::uint64_t prev_top, std::uint64_t next_low,
                   std::uint64_t valid, std::uint64_t* m) {
    const std::uint64_t left = (sig << 1) | prev_top;    // bit j: code j-1 significant
    const std::uint64_t right = (sig >> 1) | (next_low << 63);
    const std::uint64_t free = ~sig & valid;
    m[0] = free & ~left & ~right;
    m[1] = free & (left ^ right);
    m[2] = free & left & right;
    m[3] = sig & fresh & valid;
    m[4] = sig & ~fresh & valid;
}

// A growing bit string (LSB-first).
class BitSink {
public:
    void append(std::uint64_t v, unsigned n) {  // n <= 64, v < 2^n
        const std::size_t word = static_cast<std::size_t>(pos_ / 64);
        const unsigned at = static_cast<unsigned>(pos_ % 64);
        if (words_.size() < word + 2) words_.resize(word + 2, 0);
        if (v) {
            words_[word] |= v << at;
            if (at && at + n > 64) words_[word + 1] |= v >> (64 - at);
        }
        pos_ += n;
    }
    std::vector<std::uint8_t> bytes() const {
        std::vector<std::uint8_t> out(static_cast<std::size_t>((pos_ + 7) / 8));
        if (!out.empty()) std::memcpy(out.data(), words_.data(), out.size());
        return out;
    }

private:
    std::vector<std::uint64_t> words_;
    std::uint64_t pos_ = 0;
};

class BitSource {
public:
    explicit BitSource(const std::vector<std::uint8_t>& bytes) : words_(bytes.size() / 8 + 2, 0) {
        if (!bytes.empty()) std::memcpy(words_.data(), bytes.data(), bytes.size());
    }
    std::uint64_t take(unsigned n) {  // n <= 64; the caller never reads past the stream's count
        const std::size_t word = static_cast<std::size_t>(pos_ / 64);
        const unsigned at = static_cast<unsigned>(pos_ % 64);
        std::uint64_t v = words_[word] >> at;
        if (at && at + n > 64) v |= words_[word + 1] << (64 - at);
        pos_ += n;
        return n == 64 ? v : v & ((std::uint64_t{1} << n) - 1);
    }

private:
    std::vector<std::uint64_t> words_;
    std::uint64_t pos_ = 0;
};

// Software PEXT/PDEP, a byte of the mask at a time through 256 x 256
// tables (the portable build cannot assume BMI2, and its PDEP is slow on
// some AMD cores).
struct ByteTables {
    std::uint8_t pext[256][256];  // [mask][value]: value's bits at mask, packed low
    std::uint8_t pdep[256][256];  // [mask][bits]: low bits placed at mask's positions
    std::uint8_t count[256];
    ByteTables() {
        for (unsigned m = 0; m < 256; ++m) {
            count[m] = static_cast<std::uint8_t>(__builtin_popcount(m));
            for (unsigned v = 0; v < 256; ++v) {
                unsigned ext = 0, dep = 0, k = 0;
                for (unsigned b = 0; b < 8; ++b) {
                    if (!(m >> b & 1)) continue;
                    ext |= (v >> b & 1) << k;
                    dep |= (v >> k & 1) << b;
                    ++k;
                }
                pext[m][v] = static_cast<std::uint8_t>(ext);
                pdep[m][v] = static_cast<std::uint8_t>(dep);
            }
        }
    }
};
const ByteTables& byte_tables() {
    static const ByteTables t;
    return t;
}

// The bits of `v` at the positions of `mask`, packed low.
std::uint64_t gather(std::uint64_t v, std::uint64_t mask) {
    if (mask == ~std::uint64_t{0}) return v;
    if (!(v & mask)) return 0;
    const ByteTables& t = byte_tables();
    std::uint64_t out = 0;
    unsigned at = 0;
    for (unsigned i = 0; i < 64; i += 8) {
        const unsigned m = static_cast<unsigned>(mask >> i & 0xff);
        out |= static_cast<std::uint64_t>(t.pext[m][v >> i & 0xff]) << at;
        at += t.count[m];
    }
    return out;
}

// The low bits of `v` placed at the positions of `mask`.
std::uint64_t scatter(std::uint64_t v, std::uint64_t mask) {
    if (mask == ~std::uint64_t{0}) return v;
    if (!v) return 0;
    const ByteTables& t = byte_tables();
    std::uint64_t out = 0;
    for (unsigned i = 0; i < 64 && v; i += 8) {
        const unsigned m = static_cast<unsigned>(mask >> i & 0xff);
        out |= static_cast<std::uint64_t>(t.pdep[m][v & 0xff]) << i;
        v >>= t.count[m];
    }
    return out;
}

// Segment payload: u16 with 2 bits per context (its method), then for each
// context whose method is not 0: varint stored bytes and the payload.
void put_sub_blobs(const BitSink* sinks, std::vector<std::uint8_t>* out) {
    Encoded e[kStreams];
    std::uint16_t methods = 0;
    for (unsigned k = 0; k < kStreams; ++k) {
        const std::vector<std::uint8_t> bits = sinks[k].bytes();
        encode_best(bits.data(), bits.size(), 1, true, &e[k]);
        methods |= static_cast<std::uint16_t>(static_cast<unsigned>(e[k].method) << (2 * k));
    }
    out->push_back(static_cast<std::uint8_t>(methods));
    out->push_back(static_cast<std::uint8_t>(methods >> 8));
    for (unsigned k = 0; k < kStreams; ++k) {
        if (e[k].method == Method::zero) continue;
        std::uint8_t v[kMaxVarintBytes];
        out->insert(out->end(), v, v + encode_varint(e[k].bytes.size(), v));
        out->insert(out->end(), e[k].bytes.begin(), e[k].bytes.end());
    }
}

Errc get_sub_blob(ByteReader* r, Method method, std::uint64_t nbits, std::vector<std::uint8_t>* bits) {
    std::uint64_t stored = 0;
    const std::uint8_t* p = nullptr;
    if (method != Method::zero && (!r->read_varint64(&stored) || stored > r->remaining())) return Errc::corrupt_block;
    r->take(static_cast<std::size_t>(stored), &p);
    const std::size_t nbytes = static_cast<std::size_t>((nbits + 7) / 8);
    bits->resize(nbytes);
    const Errc e = decode_payload(method, p, static_cast<std::size_t>(stored), bits->data(), nbytes, 1);
    if (e != Errc::ok) return e;
    if ((nbits % 8) && ((*bits)[nbytes - 1] >> (nbits % 8))) return Errc::corrupt_block;
    return Errc::ok;
}

// Significance (any bit in `higher`) of the codes, as u64 words.
std::vector<std::uint64_t> significance(const std::uint32_t* words, std::uint64_t len, std::uint32_t higher) {
    std::vector<std::uint64_t> sig(static_cast<std::size_t>((len + 63) / 64), 0);
    if (higher)
        for (std::uint64_t j = 0; j < len; ++j)
            if (words[j] & higher) sig[j / 64] |= std::uint64_t{1} << (j % 64);
    return sig;
}

std::uint64_t valid_mask(std::uint64_t w, std::uint64_t len) {
    const std::uint64_t left = len - 64 * w;
    return left >= 64 ? ~std::uint64_t{0} : (std::uint64_t{1} << left) - 1;
}

// Calls fn(w, masks) for every 64-code word of the chunk.
template <typename F>
void for_each_word(const std::vector<std::uint64_t>& sig, const std::vector<std::uint64_t>& fresh, std::uint64_t len,
                   F&& fn) {
    const std::size_t nw = sig.size();
    for (std::size_t w = 0; w < nw; ++w) {
        const std::uint64_t prev_top = w ? sig[w - 1] >> 63 : 0;
        const std::uint64_t next_low = w + 1 < nw ? sig[w + 1] & 1 : 0;
        std::uint64_t m[kStreams];
        context_masks(sig[w], fresh[w], prev_top, next_low, valid_mask(w, len), m);
        fn(w, m);
    }
}

}  // namespace

void encode_plane_chunks(const std::uint32_t* words, std::uint64_t len, unsigned planes, Coding c,
                         std::vector<std::vector<std::uint8_t>>* out, std::vector<std::uint8_t>* after_zero_plane) {
    const std::size_t nw = static_cast<std::size_t>((len + 63) / 64);
    // Transpose once: plane bitsets from the words' set bits.
    std::vector<std::uint64_t> bits(static_cast<std::size_t>(planes) * nw, 0);
    std::uint32_t digit_plane[32] = {};
    for (unsigned b = 0; b < planes; ++b) {
        const std::uint32_t d = with_plane_bit(0, b, planes, c, 1);
        digit_plane[__builtin_ctz(d)] = b;
    }
    for (std::uint64_t j = 0; j < len; ++j)
        for (std::uint32_t w = words[j]; w; w &= w - 1)
            bits[digit_plane[__builtin_ctz(w)] * nw + j / 64] |= std::uint64_t{1} << (j % 64);
    out->assign(planes, {});
    std::vector<std::uint64_t> sig(nw, 0);    // significant in the planes before b
    std::vector<std::uint64_t> fresh(nw, 0);  // ... and first in plane b - 1
    auto code_plane = [&](const std::uint64_t* plane, const std::vector<std::uint64_t>& fr,
                          std::vector<std::uint8_t>* seg) {
        bool any = false;
        for (std::size_t w = 0; w < nw; ++w) any |= plane[w] != 0;
        if (!any) return;
        BitSink sinks[kStreams];
        for_each_word(sig, fr, len, [&](std::size_t w, const std::uint64_t* m) {
            for (unsigned k = 0; k < kStreams; ++k) sinks[k].append(gather(plane[w], m[k]), popcount64_hd(m[k]));
        });
        put_sub_blobs(sinks, seg);
    };
    for (unsigned b = 0; b < planes; ++b) {
        const std::uint64_t* plane = bits.data() + static_cast<std::size_t>(b) * nw;
        code_plane(plane, fresh, &(*out)[b]);
        if (b == 1 && after_zero_plane) {  // an all-zero plane between leaves no code fresh
            after_zero_plane->clear();
            code_plane(plane, std::vector<std::uint64_t>(nw, 0), after_zero_plane);
        }
        for (std::size_t w = 0; w < nw; ++w) fresh[w] = plane[w] & ~sig[w], sig[w] |= plane[w];
    }
}

Errc decode_plane_chunks(const std::uint8_t* const* payload, const std::size_t* size, std::uint32_t* words,
                         std::uint64_t len, unsigned b0, unsigned b1, unsigned planes, Coding c) {
    std::vector<std::uint64_t> sig = significance(words, len, higher_mask(b0, planes, c));
    std::vector<std::uint64_t> fresh = b0 ? significance(words, len, higher_mask(b0 - 1, planes, c))
                                          : std::vector<std::uint64_t>(sig.size(), 0);
    for (std::size_t w = 0; w < sig.size(); ++w) fresh[w] = sig[w] & ~fresh[w];
    std::vector<BitSource> sources;
    std::vector<std::uint8_t> bytes;
    for (unsigned b = b0; b < b1; ++b) {
        const std::size_t i = b - b0;
        if (size[i] == 0) {  // an all-zero plane chunk: nothing becomes significant
            std::fill(fresh.begin(), fresh.end(), 0);
            continue;
        }
        std::uint64_t count[kStreams] = {};
        for_each_word(sig, fresh, len, [&](std::size_t, const std::uint64_t* m) {
            for (unsigned k = 0; k < kStreams; ++k) count[k] += popcount64_hd(m[k]);
        });
        ByteReader r(payload[i], size[i]);
        std::uint16_t methods = 0;
        if (!r.read(&methods) || (methods >> (2 * kStreams))) return Errc::corrupt_block;
        sources.clear();
        for (unsigned k = 0; k < kStreams; ++k) {
            MANS_RETURN_IF_ERROR(get_sub_blob(&r, static_cast<Method>(methods >> (2 * k) & 3), count[k], &bytes));
            sources.emplace_back(bytes);
        }
        if (r.remaining() != 0) return Errc::corrupt_block;
        const std::uint32_t digit = with_plane_bit(0, b, planes, c, 1);
        std::vector<std::uint64_t> plane(sig.size(), 0);
        for_each_word(sig, fresh, len, [&](std::size_t w, const std::uint64_t* m) {
            std::uint64_t p = 0;
            for (unsigned k = 0; k < kStreams; ++k) {
                const unsigned n = popcount64_hd(m[k]);
                if (n) p |= scatter(sources[k].take(n), m[k]);
            }
            plane[w] = p;
            for (; p; p &= p - 1) words[64 * w + static_cast<unsigned>(__builtin_ctzll(p))] |= digit;
        });
        for (std::size_t w = 0; w < sig.size(); ++w) fresh[w] = plane[w] & ~sig[w], sig[w] |= plane[w];
    }
    return Errc::ok;
}

}  // namespace mans::detail::prism
