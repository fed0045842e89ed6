// device_decoder.hpp - PRISM reconstruction as a GPU runs it: the values a
// Reader's retrieval returns, from the planes it read, over the executor of
// device_encoder.hpp (which lists what an Exec provides) plus
//   Errc rans_decode(mans_backend_chunk_batch* a)
//                                           the device chunk decoder over
//                                           a, bound by bind_rans_decode
//
// The host does what needs the whole archive: the header, the plan, the
// planes' checksums and the base (Reader::Impl). Here, per level:
//   1. every kept plane chunk's segment parsed (a thread each:
//      parse_plane_segment), its rANS streams listed;
//   2. those streams decoded at once by the device chunk decoder;
//   3. a team per chunk merges its planes, most significant first, into
//      the codes' words (plane_split_hd.hpp's merge_plane, as
//      decode_plane_chunks does on the CPU), decoding the zero-eliminated
//      streams on the way;
//   4. the points of each pass reconstructed on the full grid (a thread
//      each: predict_point, decode_point), as the encoder's device_predict
//      visits them.
// Then the values rounded to T and the exactly kept ones written (masked
// points, outliers, the anchor). Same bytes as the CPU's reader: checked by
// tests/test_prism_device_decode.cpp with the host executor. Any segment
// the CPU refuses is refused here too, with the CPU's corrupt_block; a
// valid rANS frame the chunk decoder's batch cannot take (blocks smaller
// than kMinBlockBytes: this library never writes them) is
// backend_unavailable, which automatic leaves to the CPU.
#pragma once

#include <algorithm>
#include <cstdint>
#include <vector>

#include "backend_module.hpp"
#include "core/byte_io.hpp"
#include "core/frame_hd.hpp"
#include "core/status.hpp"
#include "mapping/chunk_batch.hpp"
#include "prism/archive.hpp"
#include "prism/base.hpp"
#include "prism/device_encoder.hpp"  // TeamScratch, MANS_HD_LAMBDA, list_bitmap
#include "prism/plane_split_hd.hpp"
#include "prism/point_math.hpp"
#include "prism/selection_hd.hpp"
#include "prism/traverse.hpp"
#include "prism/zero_elim_hd.hpp"

namespace mans::detail::prism {

// One plane chunk's segment (FORMAT.md 4.5) as parse_plane_segment found
// it: each context stream's method, payload (offset in the level's bytes)
// and stored size; for a rANS stream the element count its frame claims
// and its item in the level's rANS batch.
struct SegmentStreams {
    std::uint64_t at[kPlaneStreams];
    std::uint32_t stored[kPlaneStreams];
    std::uint32_t raw[kPlaneStreams];
    std::uint32_t item[kPlaneStreams];
    std::uint8_t method[kPlaneStreams];
    std::uint8_t rans;  // rANS streams
    std::uint8_t ok;    // 0: refused (corrupt_block)
};

// Parses the segment of `size` bytes at level + at. max_stream: the bytes
// of the longest stream a chunk of this level can have (a rANS frame that
// claims more is refused before anything is sized by it). The checks of
// decode_plane_chunks and get_sub_blob that need no decoded bits.
MANS_HD void parse_plane_segment(const std::uint8_t* level, std::uint64_t at, std::size_t size,
                                 std::uint64_t max_stream, SegmentStreams* s) {
    *s = SegmentStreams{};
    if (size == 0) {  // an all-zero plane chunk
        s->ok = 1;
        return;
    }
    ByteReader r(level + at, size);
    std::uint16_t methods = 0;
    if (!r.read(&methods) || (methods >> (2 * kPlaneStreams))) return;
    // A stream's method is recorded once the stream is accepted: a refused
    // segment lists no rANS stream it did not count.
    for (unsigned k = 0; k < kPlaneStreams; ++k) {
        const Method m = static_cast<Method>(methods >> (2 * k) & 3);
        if (m == Method::zero) continue;
        std::uint64_t stored = 0;
        const std::uint8_t* p = nullptr;
        if (!r.read_varint64(&stored) || stored > r.remaining()) return;
        r.take(static_cast<std::size_t>(stored), &p);
        if (m == Method::mans_rans) {
            // A u8 frame (decode_payload's check) and its element count,
            // which sizes its output slot exactly; the decoder checks the
            // rest of the frame.
            if (stored < kFixedHeaderBytes || p[6] != static_cast<std::uint8_t>(rans_dtype(1))) return;
            const std::uint64_t count = load_le<std::uint64_t>(p + 8);
            if (count > max_stream) return;
            s->raw[k] = static_cast<std::uint32_t>(count);
            ++s->rans;
        }
        s->method[k] = static_cast<std::uint8_t>(m);
        s->at[k] = at + static_cast<std::uint64_t>(p - (level + at));
        s->stored[k] = static_cast<std::uint32_t>(stored);
    }
    if (r.remaining() != 0) return;
    s->ok = 1;
}

// The chunk decoder's temp for the batch *a (in / out arrays, out_capacity
// and max_block_bytes set), for `wave` blocks in flight.
template <typename Exec>
Errc bind_rans_decode(Exec& ex, mans_backend_chunk_batch* a, std::uint64_t wave) {
    const ChunkDecodeLayout l = chunk_decode_layout(a->chunks, a->out_capacity, a->max_block_bytes, wave ? wave : 1);
    MANS_RETURN_IF(l.total == 0, Errc::internal);
    a->temp = ex.template alloc<std::uint8_t>(l.total);
    a->temp_bytes = l.total;
    return Errc::ok;
}

// What merge_chunk_planes found (the same in every member).
enum MergeResult : std::uint32_t {
    kMerged = 0,
    kMergeRefused = 1,      // the CPU refuses a segment: corrupt_block
    kMergeUnsupported = 2,  // a valid rANS frame the chunk decoder's batch cannot take
                            // (blocks below kMinBlockBytes, which this library never writes)
};

// Team step 3 for chunk ch: planes [0, kept) of its segments merged into
// words[0..len) (the chunk's codes).
template <typename Team>
MANS_HD MergeResult merge_chunk_planes(const Team& t, const std::uint8_t* level, const SegmentStreams* views,
                                const std::uint32_t* seg_size, std::uint64_t count, std::uint64_t ch, unsigned kept,
                                unsigned planes, Coding coding, const mans_backend_chunk_batch& rans,
                                const std::uint8_t* zeros, std::uint8_t* area, std::uint64_t area_stride,
                                std::uint64_t* sig, std::uint64_t* fresh, std::uint64_t* plane, std::uint64_t len,
                                PlaneSplitScratch* split, std::uint32_t* words) {
    const std::uint64_t nw = plane_word_count(len);
    team_zero(t, reinterpret_cast<std::uint8_t*>(words), static_cast<std::size_t>(len * 4));
    team_zero(t, reinterpret_cast<std::uint8_t*>(sig), static_cast<std::size_t>(nw * 8));
    team_zero(t, reinterpret_cast<std::uint8_t*>(fresh), static_cast<std::size_t>(nw * 8));
    for (unsigned b = 0; b < kept; ++b) {
        const std::uint64_t s = b * count + ch;
        if (seg_size[s] == 0) {  // an all-zero plane chunk: nothing becomes significant
            team_zero(t, reinterpret_cast<std::uint8_t*>(fresh), static_cast<std::size_t>(nw * 8));
            continue;
        }
        const SegmentStreams& v = views[s];
        if (!v.ok) return kMergeRefused;
        std::uint64_t bits[kPlaneStreams];
        count_context_bits(t, sig, fresh, len, split, bits);
        const std::uint8_t* stream[kPlaneStreams];
        for (unsigned k = 0; k < kPlaneStreams; ++k) {
            const std::uint64_t n = (bits[k] + 7) / 8;
            const std::uint8_t* p = level + v.at[k];
            switch (static_cast<Method>(v.method[k])) {
                case Method::zero: stream[k] = zeros; break;
                case Method::raw:
                    if (v.stored[k] != n) return kMergeRefused;
                    stream[k] = p;
                    break;
                case Method::zero_elim: {
                    std::uint8_t* dst = area + k * area_stride;
                    const std::uint64_t e = team_single(t, [&] {
                        return static_cast<std::uint64_t>(zero_elim_decode(p, v.stored[k], dst, static_cast<std::size_t>(n)));
                    });
                    if (e != static_cast<std::uint64_t>(Errc::ok)) return kMergeRefused;
                    stream[k] = dst;
                    break;
                }
                case Method::mans_rans: {
                    const std::uint32_t i = v.item[k];
                    if (rans.statuses[i] == MANS_ERR_INVALID_ARGUMENT) return kMergeUnsupported;
                    if (rans.statuses[i] != MANS_OK || rans.out_bytes[i] != n || v.raw[k] != n) return kMergeRefused;
                    stream[k] = static_cast<const std::uint8_t*>(rans.out_ptrs[i]);
                    break;
                }
            }
            // Bits past the stream's end must be clear (get_sub_blob).
            if ((bits[k] % 8) && (stream[k][n - 1] >> (bits[k] % 8))) return kMergeRefused;
        }
        merge_plane(t, stream, sig, fresh, len, *split, plane);
        deposit_plane(t, plane, nw, with_plane_bit(0, b, planes, coding, 1), words);
        advance_significance(t, plane, sig, fresh, nw);
    }
    return kMerged;
}

// The words of level l's codes from planes [0, kept) (words[0..codes),
// device memory). level: the stored bytes of those planes, as in the
// archive (from plane_range_begin(l, 0)), on the device.
template <typename Exec>
Errc device_decode_level(Exec& ex, const Header& h, unsigned l, unsigned kept, const std::uint8_t* level,
                         std::uint32_t* words) {
    const LevelMeta& m = h.level[l];
    const std::uint64_t codes = m.codes, chunk = h.chunk_codes, count = h.chunks(l), segs = kept * count;
    const std::uint64_t longest = std::min<std::uint64_t>(chunk, codes);  // codes of the largest chunk
    const std::uint64_t max_stream = (longest + 7) / 8;
    const std::uint64_t begin = h.plane_range_begin(l, 0);
    const Coding coding = h.coding;
    const unsigned planes = m.planes;
    if (segs == 0) return Errc::ok;
    // 1. The segments, parsed.
    std::vector<std::uint64_t> at_host(static_cast<std::size_t>(segs));
    std::vector<std::uint32_t> size_host(static_cast<std::size_t>(segs));
    for (unsigned b = 0; b < kept; ++b)
        for (std::uint64_t ch = 0; ch < count; ++ch) {
            const std::size_t si = h.segment_index(l, b, ch);
            at_host[static_cast<std::size_t>(b * count + ch)] = h.segment_offset[si] - begin;
            size_host[static_cast<std::size_t>(b * count + ch)] = h.segments[si].stored;
        }
    std::uint64_t* seg_at = ex.template alloc<std::uint64_t>(segs);
    std::uint32_t* seg_size = ex.template alloc<std::uint32_t>(segs);
    ex.to_device(seg_at, at_host.data(), segs * 8);
    ex.to_device(seg_size, size_host.data(), segs * 4);
    SegmentStreams* views = ex.template alloc<SegmentStreams>(segs);
    std::uint64_t* rans_first = ex.template alloc<std::uint64_t>(segs + 1);
    ex.threads(segs, [=] MANS_HD_LAMBDA(std::uint64_t s) {
        parse_plane_segment(level, seg_at[s], seg_size[s], max_stream, &views[s]);
        rans_first[s] = views[s].ok ? views[s].rans : 0;
    });
    // The rANS streams listed (a scan of the counts on the host) ...
    std::vector<std::uint64_t> first(static_cast<std::size_t>(segs));
    ex.to_host(first.data(), rans_first, segs * 8);
    const std::uint64_t streams = scan_tile_bases(first.data(), segs);
    MANS_RETURN_IF(streams > 0xffffffffu, Errc::backend_unavailable);  // SegmentStreams::item is 32 bits
    ex.to_device(rans_first, first.data(), segs * 8);
    mans_backend_chunk_batch rans{};
    rans.struct_size = sizeof rans;
    rans.chunks = streams;
    const void** in_ptrs = ex.template alloc<const void*>(streams + 1);
    std::size_t* in_bytes = ex.template alloc<std::size_t>(streams + 1);
    void** out_ptrs = ex.template alloc<void*>(streams + 1);
    std::uint64_t* out_at = ex.template alloc<std::uint64_t>(streams + 1);
    ex.threads(segs, [=] MANS_HD_LAMBDA(std::uint64_t s) {
        SegmentStreams& v = views[s];
        if (!v.ok) return;  // refused: none of its streams is decoded
        std::uint64_t i = rans_first[s];
        for (unsigned k = 0; k < kPlaneStreams; ++k) {
            if (static_cast<Method>(v.method[k]) != Method::mans_rans) continue;
            v.item[k] = static_cast<std::uint32_t>(i);
            in_ptrs[i] = level + v.at[k];
            in_bytes[i] = v.stored[k];
            out_at[i] = v.raw[k];
            ++i;
        }
    });
    // ... and decoded into one area, each at its claimed size.
    std::vector<std::uint64_t> out_host(static_cast<std::size_t>(streams));
    if (streams) ex.to_host(out_host.data(), out_at, streams * 8);
    std::uint64_t largest = 1;
    for (std::uint64_t v : out_host) largest = std::max(largest, v);
    const std::uint64_t decoded = scan_tile_bases(out_host.data(), streams);
    if (streams) ex.to_device(out_at, out_host.data(), streams * 8);
    std::uint8_t* out_area = ex.template alloc<std::uint8_t>(decoded + 1);
    ex.threads(streams, [=] MANS_HD_LAMBDA(std::uint64_t i) { out_ptrs[i] = out_area + out_at[i]; });
    rans.in_ptrs = in_ptrs;
    rans.in_bytes = in_bytes;
    rans.out_ptrs = out_ptrs;
    rans.out_capacity = largest;
    rans.max_block_bytes = largest;
    rans.out_bytes = ex.template alloc<std::size_t>(streams + 1);
    rans.statuses = ex.template alloc<std::int32_t>(streams + 1);
    if (streams) MANS_RETURN_IF_ERROR(ex.rans_decode(&rans));
    // 3. A team per chunk: its planes into its words.
    const std::uint64_t nw = plane_word_count(longest), stride = max_stream + 8;
    std::uint64_t* bits = ex.template alloc<std::uint64_t>(3 * nw * count);
    std::uint8_t* area = ex.template alloc<std::uint8_t>(kPlaneStreams * stride * count);
    std::uint8_t* zeros = ex.template alloc<std::uint8_t>(stride);
    const std::vector<std::uint8_t> zero_host(static_cast<std::size_t>(stride), 0);
    ex.to_device(zeros, zero_host.data(), zero_host.size());
    std::uint32_t* failed = ex.template alloc<std::uint32_t>(1);
    const std::uint32_t none = 0;
    ex.to_device(failed, &none, 4);
    ex.teams(count, [=] MANS_HD_LAMBDA(const typename Exec::Team& t, TeamScratch* sc, std::uint64_t ch) {
        const std::uint64_t len = codes - ch * chunk < chunk ? codes - ch * chunk : chunk;
        std::uint64_t* mine = bits + 3 * nw * ch;
        const MergeResult r = merge_chunk_planes(t, level, views, seg_size, count, ch, kept, planes, coding, rans,
                                                 zeros, area + kPlaneStreams * stride * ch, stride, mine, mine + nw,
                                                 mine + 2 * nw, len, &sc->split, words + ch * chunk);
        if (r != kMerged && t.leads()) hd_atomic_or_u32(failed, r);
    });
    std::uint32_t any = 0;
    ex.to_host(&any, failed, 4);
    // A frame the batch cannot take: this executor cannot do the job
    // (automatic leaves it to the CPU).
    if (any & kMergeUnsupported) return Errc::backend_unavailable;
    return any ? Errc::corrupt_block : Errc::ok;
}

// The values of a retrieval that read planes [0, kept[l]) of each level l:
// level_bytes[l] holds those planes' stored bytes (device memory, as in
// the archive from plane_range_begin(l, 0); unused when kept[l] is 0), base
// the archive's decoded base. out: n values of T, device memory. The
// bytes the CPU's Reader returns for the same planes.
template <typename T, typename Exec>
Errc device_reconstruct(Exec& ex, const Header& h, const BaseData& base,
                        const std::vector<const std::uint8_t*>& level_bytes, const std::vector<std::uint32_t>& kept,
                        T* out) {
    namespace dd = device_encoder_detail;
    const Grid& g = h.grid;
    const std::uint64_t n = g.count;
    MANS_RETURN_IF(level_bytes.size() != h.levels || kept.size() != h.levels, Errc::invalid_argument);
    if (n == 0) return Errc::ok;
    const BlockGrid blocks = BlockGrid::make(g);
    // The base as decode_base leaves it (a module gets it across the ABI).
    MANS_RETURN_IF(base.kind_bits.size() != h.levels, Errc::invalid_argument);
    for (const auto& k : base.kind_bits)
        MANS_RETURN_IF(!k.empty() && k.size() != (blocks.count + 7) / 8, Errc::invalid_argument);
    MANS_RETURN_IF(!base.anchor_value.empty() && base.anchor_value.size() != sizeof(T), Errc::invalid_argument);
    for (std::size_t i = 0; i < base.outlier_index.size(); ++i)
        MANS_RETURN_IF(base.outlier_index[i] == 0 || base.outlier_index[i] >= n ||
                           (i && base.outlier_index[i] <= base.outlier_index[i - 1]),
                       Errc::invalid_argument);
    const Coding coding = h.coding;
    // The work values (the anchor, the outliers' stored values) and the
    // bitmaps of masked points and outliers.
    double* work = ex.template alloc<double>(n);
    const std::uint64_t mask_bytes = (n + 7) / 8, words32 = (n + 31) / 32;
    const std::uint8_t* mask = nullptr;
    if (!base.mask_bits.empty()) {
        MANS_RETURN_IF(base.mask_bits.size() != mask_bytes, Errc::invalid_argument);
        std::uint8_t* m = ex.template alloc<std::uint8_t>(mask_bytes);
        ex.to_device(m, base.mask_bits.data(), mask_bytes);
        mask = m;
    }
    const std::uint64_t outliers = base.outlier_index.size();
    std::uint32_t* outlier_words = ex.template alloc<std::uint32_t>(words32);
    {
        const std::vector<std::uint32_t> zeros(static_cast<std::size_t>(words32), 0);
        ex.to_device(outlier_words, zeros.data(), words32 * 4);
    }
    std::uint64_t* outlier_index = ex.template alloc<std::uint64_t>(outliers + 1);
    T* outlier_values = ex.template alloc<T>(outliers + 1);
    if (outliers) {
        MANS_RETURN_IF(base.outlier_values.size() != outliers * sizeof(T), Errc::invalid_argument);
        ex.to_device(outlier_index, base.outlier_index.data(), outliers * 8);
        ex.to_device(outlier_values, base.outlier_values.data(), outliers * sizeof(T));
    }
    ex.threads(outliers, [=] MANS_HD_LAMBDA(std::uint64_t i) {
        const std::uint64_t idx = outlier_index[i];
        hd_atomic_or_u32(outlier_words + idx / 32, 1u << (idx % 32));
        work[idx] = static_cast<double>(outlier_values[i]);
    });
    {
        double anchor = 0;
        if (!base.anchor_value.empty()) anchor = static_cast<double>(load_le<T>(base.anchor_value.data()));
        ex.to_device(work, &anchor, sizeof anchor);
    }
    const std::uint8_t* outlier_bits = reinterpret_cast<const std::uint8_t*>(outlier_words);
    std::uint64_t most_codes = 0;
    for (unsigned l = 0; l < h.levels; ++l)
        if (kept[l]) most_codes = std::max(most_codes, h.level[l].codes);
    std::uint32_t* words = ex.template alloc<std::uint32_t>(most_codes + 1);
    std::uint8_t* kind_dev = ex.template alloc<std::uint8_t>((blocks.count + 7) / 8 + 1);
    for (unsigned l = 0; l < h.levels; ++l) {
        const std::size_t level_mark = ex.mark();
        const LevelMeta& m = h.level[l];
        MANS_RETURN_IF(kept[l] > m.planes, Errc::invalid_argument);
        if (kept[l]) MANS_RETURN_IF_ERROR(device_decode_level(ex, h, l, kept[l], level_bytes[l], words));
        const std::uint32_t* codes = kept[l] ? words : nullptr;
        if (!base.kind_bits[l].empty()) ex.to_device(kind_dev, base.kind_bits[l].data(), base.kind_bits[l].size());
        const KindMode kinds = m.kinds;
        const double step = m.step;
        const std::uint64_t u = level_unit(h.levels, l);
        for (const Pass& p : level_passes(g, u, m.scheme))
            for (const Box& b : p.boxes) {
                ex.threads(b.size(), [=] MANS_HD_LAMBDA(std::uint64_t k) {
                    std::uint64_t c[kMaxRank], idx = 0;
                    box_point(g, b, k, c, &idx);
                    const Kind kind = level_point_kind(kinds, kind_dev, blocks, c);
                    const double pred = predict_point(work, idx, c, g.n, g.stride, g.rank, b.axes, u, kind);
                    const bool outlier = bitmap_bit(outlier_bits, idx), masked = bitmap_bit(mask, idx);
                    const double q = codes && !outlier && !masked
                                         ? static_cast<double>(decode_word(codes[b.first_code + k], coding))
                                         : 0.0;
                    work[idx] = decode_point(outlier, outlier ? work[idx] : 0.0, masked, pred, step, q);
                });
            }
        ex.release(level_mark);
    }
    // The values as T, then those kept exactly: masked (in point order),
    // outliers, the anchor.
    ex.threads(n, [=] MANS_HD_LAMBDA(std::uint64_t i) { out[i] = to_element<T>(work[i]); });
    if (mask) {
        std::uint64_t count = 0;
        const std::uint64_t* index = dd::list_bitmap(ex, mask, mask_bytes, DeviceRanges{}.list, &count);
        MANS_RETURN_IF(base.masked_values.size() != count * sizeof(T), Errc::invalid_argument);
        T* values = ex.template alloc<T>(count + 1);
        if (count) ex.to_device(values, base.masked_values.data(), count * sizeof(T));
        ex.threads(count, [=] MANS_HD_LAMBDA(std::uint64_t k) { out[index[k]] = values[k]; });
    }
    ex.threads(outliers, [=] MANS_HD_LAMBDA(std::uint64_t i) { out[outlier_index[i]] = outlier_values[i]; });
    if (!base.anchor_value.empty()) ex.to_device(out, base.anchor_value.data(), sizeof(T));
    return Errc::ok;
}

}  // namespace mans::detail::prism
