// base.cpp - base segment blobs: [u8 method][varint raw bytes][varint stored bytes][payload].
#include "prism/base.hpp"

#include <cstring>

#include "core/byte_io.hpp"
#include "core/status.hpp"

namespace mans::detail::prism {
namespace {

void put_blob(std::vector<std::uint8_t>* out, const std::uint8_t* data, std::size_t n, unsigned width) {
    Encoded e;
    encode_best(data, n, width, true, &e);
    std::uint8_t head[1 + 2 * kMaxVarintBytes];
    head[0] = static_cast<std::uint8_t>(e.method);
    unsigned len = 1 + encode_varint(n, head + 1);
    len += encode_varint(e.bytes.size(), head + len);
    out->insert(out->end(), head, head + len);
    out->insert(out->end(), e.bytes.begin(), e.bytes.end());
}

// Reads one blob that must decode to exactly `expect` bytes.
Errc get_blob(ByteReader* r, std::size_t expect, unsigned width, std::vector<std::uint8_t>* out) {
    std::uint8_t method = 0;
    std::uint64_t raw = 0, stored = 0;
    if (!r->read(&method) || !r->read_varint64(&raw) || !r->read_varint64(&stored)) return Errc::corrupt_block;
    if (method >= kMethodCount || raw != expect || stored > r->remaining()) return Errc::corrupt_block;
    const std::uint8_t* payload = nullptr;
    r->take(static_cast<std::size_t>(stored), &payload);
    out->resize(expect);
    return decode_payload(static_cast<Method>(method), payload, static_cast<std::size_t>(stored), out->data(),
                          expect, width);
}

}  // namespace

std::vector<std::uint8_t> encode_base(const BaseData& b, std::size_t esize) {
    const unsigned w = static_cast<unsigned>(esize);
    std::vector<std::uint8_t> kinds;
    for (const auto& k : b.kind_bits) kinds.insert(kinds.end(), k.begin(), k.end());
    std::vector<std::uint8_t> gaps(b.outlier_index.size() * 8);
    std::uint64_t prev = 0;
    for (std::size_t i = 0; i < b.outlier_index.size(); ++i) {
        store_le<std::uint64_t>(gaps.data() + 8 * i, b.outlier_index[i] - prev);
        prev = b.outlier_index[i] + 1;
    }
    std::vector<std::uint8_t> out;
    put_blob(&out, kinds.data(), kinds.size(), 1);
    put_blob(&out, b.mask_bits.data(), b.mask_bits.size(), 1);
    put_blob(&out, b.masked_values.data(), b.masked_values.size(), w);
    put_blob(&out, gaps.data(), gaps.size(), 8);
    put_blob(&out, b.outlier_values.data(), b.outlier_values.size(), w);
    put_blob(&out, b.anchor_value.data(), b.anchor_value.size(), w);
    return out;
}

Errc decode_base(const std::uint8_t* p, std::size_t n, const Header& h, BaseData* out) {
    const std::size_t es = h.esize();
    const unsigned w = static_cast<unsigned>(es);
    const std::uint64_t count = h.grid.count;
    ByteReader r(p, n);
    BaseData b;

    const std::uint64_t kind_bytes = (kind_block_count(h) + 7) / 8;
    std::size_t kinds_total = 0;
    for (const LevelMeta& m : h.level) kinds_total += m.kinds == KindMode::per_block ? kind_bytes : 0;
    std::vector<std::uint8_t> kinds;
    MANS_RETURN_IF_ERROR(get_blob(&r, kinds_total, 1, &kinds));
    b.kind_bits.resize(h.levels);
    std::size_t at = 0;
    for (unsigned l = 0; l < h.levels; ++l) {
        if (h.level[l].kinds != KindMode::per_block) continue;
        b.kind_bits[l].assign(kinds.begin() + at, kinds.begin() + at + kind_bytes);
        at += kind_bytes;
    }

    const std::size_t mask_bytes = h.masked_count ? static_cast<std::size_t>((count + 7) / 8) : 0;
    MANS_RETURN_IF_ERROR(get_blob(&r, mask_bytes, 1, &b.mask_bits));
    if (mask_bytes) {
        std::uint64_t ones = 0;
        for (std::uint8_t v : b.mask_bits) ones += static_cast<unsigned>(__builtin_popcount(v));
        const unsigned tail = static_cast<unsigned>(count % 8);
        if (tail && (b.mask_bits.back() >> tail)) return Errc::corrupt_block;
        if (ones != h.masked_count) return Errc::corrupt_block;
    }
    MANS_RETURN_IF_ERROR(get_blob(&r, static_cast<std::size_t>(h.masked_count * es), w, &b.masked_values));

    std::vector<std::uint8_t> gaps;
    MANS_RETURN_IF_ERROR(get_blob(&r, static_cast<std::size_t>(h.outlier_count * 8), 8, &gaps));
    b.outlier_index.resize(static_cast<std::size_t>(h.outlier_count));
    std::uint64_t next = 0;  // smallest position the next outlier may take
    for (std::size_t i = 0; i < b.outlier_index.size(); ++i) {
        const std::uint64_t gap = load_le<std::uint64_t>(gaps.data() + 8 * i);
        if (gap >= count || next + gap >= count || next + gap == 0) return Errc::corrupt_block;  // 0 is the anchor
        const std::uint64_t pos = next + gap;
        if (mask_bytes && (b.mask_bits[pos / 8] >> (pos % 8) & 1)) return Errc::corrupt_block;
        b.outlier_index[i] = pos;
        next = pos + 1;
    }
    MANS_RETURN_IF_ERROR(get_blob(&r, static_cast<std::size_t>(h.outlier_count * es), w, &b.outlier_values));

    const bool anchor_masked = count && mask_bytes && (b.mask_bits[0] & 1);
    const std::size_t anchor_bytes = count && !anchor_masked ? es : 0;
    MANS_RETURN_IF_ERROR(get_blob(&r, anchor_bytes, w, &b.anchor_value));
    if (r.remaining() != 0) return Errc::corrupt_block;
    *out = std::move(b);
    return Errc::ok;
}

}  // namespace mans::detail::prism
