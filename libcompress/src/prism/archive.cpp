// archive.cpp - writing and validating the PRISM header and segment index.
#include "prism/archive.hpp"

#include <cmath>
#include <cstring>

#include "core/byte_io.hpp"
#include "core/frame.hpp"
#include "core/status.hpp"
#include "mans/version.h"

namespace mans::detail::prism {
namespace {

class VecWriter {
public:
    explicit VecWriter(std::vector<std::uint8_t>* out) : out_(out) {}
    template <typename T>
    void put(T v) {
        const std::size_t at = out_->size();
        out_->resize(at + sizeof(T));
        store_le<T>(out_->data() + at, v);
    }

private:
    std::vector<std::uint8_t>* out_;
};

bool finite_nonneg(double v) { return std::isfinite(v) && v >= 0; }

void put_varint(std::vector<std::uint8_t>* out, std::uint64_t v) {
    std::uint8_t b[kMaxVarintBytes];
    out->insert(out->end(), b, b + encode_varint(v, b));
}


}  // namespace

std::uint64_t truncation_cap(unsigned kept, unsigned planes, Coding c) {
    const unsigned low = planes - kept;  // digits dropped
    if (c == Coding::negabinary) return ((std::uint64_t{1} << (low + 1)) - 1) / 3;
    if (kept == 0) return planes ? (std::uint64_t{1} << (planes - 1)) - 1 : 0;  // the whole magnitude
    return (std::uint64_t{1} << low) - 1;
}

std::uint16_t encode_sum_sq(double v) {
    if (!(v > 0)) return 0;
    const double code = std::ceil(std::log2(1.0 + v) * 512.0);
    return code >= 65535 ? 65535 : static_cast<std::uint16_t>(code);
}

double decode_sum_sq(std::uint16_t code) { return code ? std::exp2(code / 512.0) - 1.0 : 0.0; }

std::uint64_t Header::plane_range_begin(unsigned l, unsigned b) const {
    if (b >= level[l].planes) {
        // One past the level's last segment.
        const std::size_t next = level_first_segment[l] + static_cast<std::size_t>(level[l].planes * chunks(l));
        return next < segments.size() ? segment_offset[next] : total_bytes;
    }
    return segment_offset[segment_index(l, b, 0)];
}

std::uint64_t Header::plane_range_bytes(unsigned l, unsigned b0, unsigned b1) const {
    return b1 <= b0 ? 0 : plane_range_begin(l, b1) - plane_range_begin(l, b0);
}

std::vector<std::uint8_t> write_header(Header* h) {
    std::vector<std::uint8_t> out(kPreambleBytes, 0);
    std::memcpy(out.data(), kMagic, 4);
    out[4] = MANS_FORMAT_VERSION;
    out[5] = kCodecPrism;
    out[6] = static_cast<std::uint8_t>(h->type);
    VecWriter w(&out);
    w.put<std::uint8_t>(static_cast<std::uint8_t>(h->grid.rank));
    w.put<std::uint8_t>(static_cast<std::uint8_t>(h->mode));
    w.put<std::uint8_t>(static_cast<std::uint8_t>(h->coding));
    w.put<std::uint8_t>(0);
    w.put<std::uint32_t>(h->levels);
    w.put<std::uint32_t>(h->chunk_codes);
    for (unsigned a = 0; a < h->grid.rank; ++a) w.put<std::uint64_t>(h->grid.n[a]);
    for (double v : {h->requested_bound, h->abs_bound, h->value_min, h->value_max, h->full_max_error,
                     h->work_max_error, h->max_abs_work, h->full_mse, h->work_mse})
        w.put<double>(v);
    w.put<std::uint64_t>(h->masked_count);
    w.put<std::uint64_t>(h->outlier_count);
    w.put<std::uint32_t>(static_cast<std::uint32_t>(h->fill_values.size()));
    for (double f : h->fill_values) w.put<double>(f);
    for (const LevelMeta& m : h->level) {
        w.put<std::uint8_t>(static_cast<std::uint8_t>(m.scheme));
        w.put<std::uint8_t>(static_cast<std::uint8_t>(m.kinds));
        w.put<std::uint8_t>(m.planes);
        w.put<double>(m.step);
        for (unsigned b = 0; b < m.planes; ++b)
            put_varint(&out, truncation_cap(b, m.planes, h->coding) - static_cast<std::uint64_t>(m.max_err[b]));
        for (unsigned b = 0; b < m.planes; ++b) w.put<std::uint16_t>(encode_sum_sq(m.sum_sq[b]));
    }
    w.put<std::uint64_t>(h->base_bytes);
    w.put<std::uint32_t>(h->base_checksum);
    for (std::uint32_t c : h->plane_checksum) w.put<std::uint32_t>(c);
    for (const Segment& s : h->segments) put_varint(&out, s.stored);
    store_le<std::uint32_t>(out.data() + 8, static_cast<std::uint32_t>(out.size() - kPreambleBytes));
    w.put<std::uint32_t>(checksum32(out.data(), out.size()));
    h->header_bytes = out.size();
    layout_segments(h);
    return out;
}

Errc parse_preamble(const std::uint8_t* p, std::size_t n, std::uint64_t* header_len) {
    if (n == 0) return Errc::truncated;
    if (n < 4 || std::memcmp(p, kMagic, 4) != 0) return Errc::bad_magic;
    if (n < kPreambleBytes) return Errc::truncated;
    if (p[4] < 1 || p[4] > MANS_FORMAT_VERSION) return Errc::unsupported_version;
    if (p[5] != kCodecPrism) return Errc::corrupt_header;
    if (p[6] != static_cast<std::uint8_t>(FloatType::f32) && p[6] != static_cast<std::uint8_t>(FloatType::f64))
        return Errc::corrupt_header;
    if (p[7] != 0 || load_le<std::uint32_t>(p + 12) != 0) return Errc::corrupt_header;
    *header_len = load_le<std::uint32_t>(p + 8);
    if (*header_len > kMaxHeaderBytes) return Errc::corrupt_header;
    return Errc::ok;
}

Errc layout_segments(Header* h) {
    h->level_first_segment.assign(h->levels, 0);
    h->level_first_plane.assign(h->levels, 0);
    std::size_t first = 0, plane = 0;
    for (unsigned l = 0; l < h->levels; ++l) {
        h->level_first_segment[l] = first;
        h->level_first_plane[l] = plane;
        first += static_cast<std::size_t>(h->level[l].planes * h->chunks(l));
        plane += h->level[l].planes;
    }
    if (first != h->segments.size() || plane != h->plane_checksum.size()) return Errc::corrupt_header;
    h->segment_offset.resize(h->segments.size());
    std::uint64_t at = h->header_bytes + h->base_bytes;
    for (std::size_t s = 0; s < h->segments.size(); ++s) {
        h->segment_offset[s] = at;
        at += h->segments[s].stored;
    }
    h->total_bytes = at;
    return Errc::ok;
}

Errc parse_header(const std::uint8_t* bytes, std::size_t n, std::uint64_t archive_size, Header* out) {
    std::uint64_t hlen = 0;
    MANS_RETURN_IF_ERROR(parse_preamble(bytes, n, &hlen));
    if (n < kPreambleBytes + hlen + kChecksumBytes) return Errc::truncated;
    if (load_le<std::uint32_t>(bytes + kPreambleBytes + hlen) != checksum32(bytes, kPreambleBytes + hlen))
        return Errc::header_checksum;

    Header h;
    h.type = static_cast<FloatType>(bytes[6]);
    h.header_bytes = kPreambleBytes + hlen + kChecksumBytes;
    ByteReader r(bytes + kPreambleBytes, hlen);
    std::uint8_t rank = 0, mode = 0, coding = 0, flags = 0;
    if (!r.read(&rank) || !r.read(&mode) || !r.read(&coding) || !r.read(&flags)) return Errc::corrupt_header;
    if (rank < 1 || rank > kMaxRank || flags != 0) return Errc::corrupt_header;
    if (mode != 1 && mode != 2) return Errc::corrupt_header;
    if (coding != 1 && coding != 2) return Errc::corrupt_header;
    h.mode = static_cast<ErrorMode>(mode);
    h.coding = static_cast<Coding>(coding);
    if (!r.read(&h.levels) || !r.read(&h.chunk_codes)) return Errc::corrupt_header;
    if (h.chunk_codes < 64 || h.chunk_codes > (1u << 24) || h.chunk_codes % 64) return Errc::corrupt_header;
    std::uint64_t dims[kMaxRank] = {0, 0, 0, 0};
    std::uint64_t count = 1;
    for (unsigned a = 0; a < rank; ++a) {
        if (!r.read(&dims[a])) return Errc::corrupt_header;
        if (dims[a] != 0 && count > (std::uint64_t{1} << 62) / dims[a]) return Errc::corrupt_header;
        count *= dims[a];
    }
    if (count * h.esize() / h.esize() != count) return Errc::corrupt_header;
    h.grid = Grid::make(rank, dims);
    if (h.levels != (count ? level_count(h.grid) : 0)) return Errc::corrupt_header;

    double* doubles[] = {&h.requested_bound, &h.abs_bound,    &h.value_min, &h.value_max, &h.full_max_error,
                         &h.work_max_error,  &h.max_abs_work, &h.full_mse,  &h.work_mse};
    for (double* d : doubles)
        if (!r.read(d)) return Errc::corrupt_header;
    if (!std::isfinite(h.requested_bound) || h.requested_bound <= 0 || !finite_nonneg(h.abs_bound) ||
        !std::isfinite(h.value_min) || !std::isfinite(h.value_max) || h.value_min > h.value_max ||
        !finite_nonneg(h.full_max_error) || !finite_nonneg(h.work_max_error) || !finite_nonneg(h.max_abs_work) ||
        !finite_nonneg(h.full_mse) || !finite_nonneg(h.work_mse))
        return Errc::corrupt_header;
    if (h.full_max_error > h.abs_bound || h.work_max_error > h.abs_bound) return Errc::corrupt_header;
    if (!r.read(&h.masked_count) || !r.read(&h.outlier_count)) return Errc::corrupt_header;
    if (h.masked_count > count || h.outlier_count > count - h.masked_count) return Errc::corrupt_header;
    std::uint32_t nfill = 0;
    if (!r.read(&nfill) || nfill > 64) return Errc::corrupt_header;
    h.fill_values.resize(nfill);
    for (double& f : h.fill_values)
        if (!r.read(&f)) return Errc::corrupt_header;

    h.level.resize(h.levels);
    std::uint64_t nplanes = 0, nseg = 0;
    for (unsigned i = 0; i < h.levels; ++i) {
        LevelMeta& m = h.level[i];
        std::uint8_t scheme = 0, kinds = 0, planes = 0;
        if (!r.read(&scheme) || !r.read(&kinds) || !r.read(&planes) || !r.read(&m.step)) return Errc::corrupt_header;
        if (scheme >= kSchemeCount || kinds > 2 || planes > kMaxPlanes) return Errc::corrupt_header;
        if (!finite_nonneg(m.step)) return Errc::corrupt_header;
        m.scheme = static_cast<Scheme>(scheme);
        m.kinds = static_cast<KindMode>(kinds);
        m.planes = planes;
        m.eb = m.step / 2;
        m.codes = level_code_count(h.grid, level_unit(h.levels, i));
        m.max_err.assign(planes + 1u, 0);
        m.sum_sq.assign(planes + 1u, 0);
        for (unsigned b = 0; b < planes; ++b) {
            std::uint64_t below = 0;
            const std::uint64_t cap = truncation_cap(b, planes, h.coding);
            if (!r.read_varint64(&below) || below > cap) return Errc::corrupt_header;
            m.max_err[b] = static_cast<double>(cap - below);
        }
        for (unsigned b = 0; b < planes; ++b) {
            std::uint16_t code = 0;
            if (!r.read(&code)) return Errc::corrupt_header;
            m.sum_sq[b] = decode_sum_sq(code);
        }
        nplanes += planes;
        nseg += planes * h.chunks(i);
    }
    if (!r.read(&h.base_bytes) || !r.read(&h.base_checksum)) return Errc::corrupt_header;
    if (h.base_bytes > archive_size) return Errc::corrupt_header;
    if (nplanes * 4 + nseg > r.remaining()) return Errc::corrupt_header;
    h.plane_checksum.resize(static_cast<std::size_t>(nplanes));
    for (std::uint32_t& c : h.plane_checksum)
        if (!r.read(&c)) return Errc::corrupt_header;
    h.segments.resize(static_cast<std::size_t>(nseg));
    for (Segment& s : h.segments) {
        std::uint64_t stored = 0;
        if (!r.read_varint64(&stored) || stored > archive_size || stored > UINT32_MAX) return Errc::corrupt_header;
        s.stored = static_cast<std::uint32_t>(stored);
    }
    if (r.remaining() != 0) return Errc::corrupt_header;
    MANS_RETURN_IF_ERROR(layout_segments(&h));
    if (h.total_bytes > archive_size) return Errc::truncated;
    if (h.total_bytes < archive_size) return Errc::trailing_bytes;
    *out = std::move(h);
    return Errc::ok;
}

}  // namespace mans::detail::prism
