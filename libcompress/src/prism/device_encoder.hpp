// device_encoder.hpp - PRISM compression as a GPU runs it: the MANS_HD
// steps (mask_hd.hpp, selection_hd.hpp, point_math.hpp, chunk_coding_hd.hpp,
// stream_batch_hd.hpp, level_assembly_hd.hpp, error_stats_hd.hpp,
// core/bitmap_hd.hpp) over an executor, with the host arithmetic of
// encode_plan.hpp in between. The same code runs on the CPU with a host
// executor that plays warps as LoopTeams (tests/test_prism_device_order.cpp,
// which checks that the archive is mans::prism::compress's, byte for byte),
// and in a GPU module with an executor that launches kernels.
//
// An Exec provides (device memory on a GPU):
//   using Team                              the team type of teams()
//   using Transpose                         how a team transposes a chunk's
//                                           words (LoopTranspose, or a
//                                           warp's ballots)
//   template <typename U> U* alloc(std::uint64_t n)
//                                           n elements, contents undefined,
//                                           freed with the executor
//   std::size_t mark()                      the allocations so far
//   void release(std::size_t mark)          frees those made since mark
//                                           (once the launches using them
//                                           are done)
//   void to_host(void* dst, const void* src, std::size_t bytes)
//   void to_device(void* dst, const void* src, std::size_t bytes)
//   template <typename F> void threads(std::uint64_t n, F fn)
//                                           fn(i) for every i < n, in any
//                                           order (a thread each)
//   template <typename F> void teams(std::uint64_t n, F fn)
//                                           fn(team, scratch, i) for every
//                                           i < n, a Team each, scratch a
//                                           TeamScratch the team shares
//   Errc rans_candidates(const StreamBatch& b, mans_backend_chunk_batch* out)
//                                           the device chunk encoder over
//                                           b's candidates (in_bytes =
//                                           b.rans_in; out's arrays live
//                                           until the next call)
// The functions given to threads() and teams() are MANS_HD_LAMBDA lambdas
// that capture device pointers and plain values by copy.
//
// Memory on the device: the values, a work array of n doubles (the full
// grid: no half grid, no ring), the codes of one level, the mask and the
// outlier bitmaps, and one level's chunk-coding workspace, its form part
// sized to the forms there are, with the rANS candidates' slots (released
// after each level). What comes back
// to the host is small (partial sums, the choice's sums, counts and lists)
// except the level bytes and the base's values.
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <vector>

#include "backend_module.hpp"
#include "core/bitmap_hd.hpp"
#include "core/frame_hd.hpp"  // stream_bound
#include "core/scan_hd.hpp"
#include "core/status.hpp"
#include "core/team.hpp"
#include "prism/archive.hpp"
#include "prism/base.hpp"
#include "prism/chunk_coding_hd.hpp"
#include "prism/encode_plan.hpp"
#include "prism/error_stats_hd.hpp"
#include "prism/level_assembly_hd.hpp"
#include "prism/mask_hd.hpp"
#include "prism/point_math.hpp"
#include "prism/selection_hd.hpp"
#include "prism/stream_batch_hd.hpp"
#include "prism/traverse.hpp"
#include "mapping/chunk_batch.hpp"

#if defined(__CUDACC__) || defined(__HIPCC__)
#define MANS_HD_LAMBDA __host__ __device__
#else
#define MANS_HD_LAMBDA
#endif

namespace mans::detail::prism {

// What a team's step shares (a warp's shared memory on a GPU).
struct TeamScratch {
    std::uint64_t area[kTeamSharedWords];
    std::uint32_t hist[256];
    PlaneSplitScratch split;
};

// How finely the reductions split the work: points per range of the
// mask's reductions (a multiple of 8: whole mask bytes), bytes per range
// of the bitmap lists. Any sizes give the same archive (the tests use
// small ones).
struct DeviceRanges {
    std::uint64_t mask = 65536;
    std::uint64_t list = 4096;
};

namespace device_encoder_detail {

// Partials of ranges merged on the host in range order (the merges are
// associative, and in order they keep the earlier of equal minima).
template <typename Partial, typename Exec>
Partial merge_on_host(Exec& ex, const Partial* dev, std::uint64_t count) {
    std::vector<Partial> part(static_cast<std::size_t>(count));
    if (count) ex.to_host(part.data(), dev, count * sizeof(Partial));
    Partial all;
    for (const Partial& p : part) all.merge(p);
    return all;
}

// The set bits of a device bitmap of `bytes` bytes, listed on the device
// (counts, a scan on the host, lists); returns the list on the device and
// its length in *count.
template <typename Exec>
std::uint64_t* list_bitmap(Exec& ex, const std::uint8_t* bits, std::uint64_t bytes, std::uint64_t range,
                           std::uint64_t* count) {
    const std::uint64_t ranges = (bytes + range - 1) / range;
    std::uint64_t* at = ex.template alloc<std::uint64_t>(ranges + 1);
    ex.threads(ranges, [=] MANS_HD_LAMBDA(std::uint64_t r) {
        const std::uint64_t end = (r + 1) * range < bytes ? (r + 1) * range : bytes;
        at[r] = bitmap_count(bits, r * range, end);
    });
    std::vector<std::uint64_t> host(static_cast<std::size_t>(ranges));
    if (ranges) ex.to_host(host.data(), at, ranges * 8);
    const std::uint64_t total = scan_tile_bases(host.data(), ranges);  // counts to offsets
    if (ranges) ex.to_device(at, host.data(), ranges * 8);
    std::uint64_t* index = ex.template alloc<std::uint64_t>(total + 1);
    ex.threads(ranges, [=] MANS_HD_LAMBDA(std::uint64_t r) {
        const std::uint64_t end = (r + 1) * range < bytes ? (r + 1) * range : bytes;
        bitmap_list(bits, r * range, end, at[r], index);
    });
    *count = total;
    return index;
}

// The element bytes of the points of a device list, on the host.
template <typename T, typename Exec>
std::vector<std::uint8_t> values_at(Exec& ex, const T* x, const std::uint64_t* index, std::uint64_t count) {
    T* v = ex.template alloc<T>(count + 1);
    ex.threads(count, [=] MANS_HD_LAMBDA(std::uint64_t k) { v[k] = x[index[k]]; });
    std::vector<std::uint8_t> out(static_cast<std::size_t>(count * sizeof(T)));
    if (count) ex.to_host(out.data(), v, out.size());
    return out;
}

}  // namespace device_encoder_detail

// The mask and fill detection: the fill values in use (the caller's, then
// any detected), the mask bits on the device (*mask) and the counts.
template <typename T, typename Exec>
MaskPartial device_mask(Exec& ex, const T* x, std::uint64_t n, const mans::prism::CompressConfig& cfg,
                        std::uint64_t range, std::vector<T>* fills, std::uint8_t** mask) {
    namespace dd = device_encoder_detail;
    const std::uint64_t ranges = (n + range - 1) / range;
    ValueRange* finite = ex.template alloc<ValueRange>(ranges + 1);
    FillEvidence* evidence = ex.template alloc<FillEvidence>(ranges + 1);
    *fills = choose_fill_values<T>(
        cfg, n,
        [&] {
            ex.threads(ranges, [=] MANS_HD_LAMBDA(std::uint64_t r) {
                const std::uint64_t first = r * range;
                finite[r] = finite_range(x, first, first + range < n ? first + range : n);
            });
            return dd::merge_on_host(ex, finite, ranges);
        },
        [&](double cand) {
            ex.threads(ranges, [=] MANS_HD_LAMBDA(std::uint64_t r) {
                const std::uint64_t first = r * range;
                evidence[r] = fill_evidence(x, first, first + range < n ? first + range : n, cand);
            });
            return dd::merge_on_host(ex, evidence, ranges);
        });
    T* fill_dev = ex.template alloc<T>(fills->size() + 1);
    if (!fills->empty()) ex.to_device(fill_dev, fills->data(), fills->size() * sizeof(T));
    const unsigned nfill = static_cast<unsigned>(fills->size());
    std::uint8_t* bits = ex.template alloc<std::uint8_t>((n + 7) / 8 + 1);
    MaskPartial* part = ex.template alloc<MaskPartial>(ranges);
    ex.threads(ranges, [=] MANS_HD_LAMBDA(std::uint64_t r) {
        const std::uint64_t first = r * range;
        const std::uint64_t last = first + range < n ? first + range : n;
        part[r] = mask_range<T>(x, n, fill_dev, nfill, first / 8, (last + 7) / 8, bits);
    });
    *mask = bits;
    return dd::merge_on_host(ex, part, ranges);
}

// Level l's scheme and stencil kinds (m.scheme, m.kinds, and *kind_bits
// for per-block kinds), from the sums of the sampled points' costs.
template <typename T, typename Exec>
void device_select(Exec& ex, const T* x, const std::uint8_t* mask, const Grid& g, const BlockGrid& blocks,
                   std::uint64_t u, LevelMeta* m, std::vector<std::uint8_t>* kind_bits) {
    const unsigned schemes = g.rank == 1 ? 1 : kSchemeCount;
    const std::uint64_t nb = blocks.count, stride = selection_tile_stride(m->codes);
    const double inv = m->eb > 0 ? 1.0 / m->eb : 1.0;
    std::uint64_t* sums = ex.template alloc<std::uint64_t>(schemes * 2 * nb);
    const std::vector<std::uint64_t> zeros(static_cast<std::size_t>(schemes * 2 * nb), 0);
    ex.to_device(sums, zeros.data(), zeros.size() * 8);
    for (unsigned s = 0; s < schemes; ++s)
        for (const Pass& p : level_passes(g, u, static_cast<Scheme>(s)))
            for (const Box& b : p.boxes) {
                const std::uint64_t tiles = (b.size() + kTilePoints - 1) / kTilePoints;
                const std::uint64_t sampled = (tiles + stride - 1) / stride;  // tiles 0, stride, 2 stride, ...
                const std::uint64_t n = b.size();
                std::uint64_t* lin_sums = sums + 2 * s * nb;
                ex.threads(sampled * kTilePoints, [=] MANS_HD_LAMBDA(std::uint64_t j) {
                    const std::uint64_t k = (j / kTilePoints) * stride * kTilePoints + j % kTilePoints;
                    if (k >= n) return;
                    std::uint64_t c[kMaxRank], idx = 0, lin = 0, cub = 0;
                    box_point(g, b, k, c, &idx);
                    if (!selection_point_costs(x, mask, g, b, c, idx, u, inv, &lin, &cub)) return;
                    const std::uint64_t blk = blocks.block_of(c);
                    hd_atomic_add_u64(lin_sums + blk, lin);
                    hd_atomic_add_u64(lin_sums + nb + blk, cub);
                });
            }
    std::vector<std::uint64_t> host(zeros.size());
    ex.to_host(host.data(), sums, host.size() * 8);
    std::vector<std::uint8_t> bits(static_cast<std::size_t>((nb + 7) / 8), 0);
    const SelectionChoice choice = choose_selection(host.data(), nb, schemes, bits.data());
    m->scheme = choice.scheme;
    m->kinds = choice.mode;
    if (m->kinds == KindMode::per_block) *kind_bits = bits;
    else kind_bits->clear();
}

// Level l's prediction and quantization on the full grid, closed loop on
// the work values: codes[0..m.codes), outlier bits set, work values
// written. A pass's points never read each other, so a launch per box.
template <typename T, typename Exec>
void device_predict(Exec& ex, const T* x, const std::uint8_t* mask, const Grid& g, const BlockGrid& blocks,
                    std::uint64_t u, const LevelMeta& m, double abs_bound, const std::uint8_t* kind_bits,
                    double* work, std::int32_t* codes, std::uint32_t* outlier_words) {
    const KindMode kinds = m.kinds;
    const double step = m.step, eb = m.eb;
    for (const Pass& p : level_passes(g, u, m.scheme))
        for (const Box& b : p.boxes) {
            ex.threads(b.size(), [=] MANS_HD_LAMBDA(std::uint64_t k) {
                std::uint64_t c[kMaxRank], idx = 0;
                box_point(g, b, k, c, &idx);
                const Kind kind = level_point_kind(kinds, kind_bits, blocks, c);
                const double pred = predict_point(work, idx, c, g.n, g.stride, g.rank, b.axes, u, kind);
                const bool masked = bitmap_bit(mask, idx);
                const EncodedPoint e =
                    encode_point<T>(masked ? 0.0 : static_cast<double>(x[idx]), masked, pred, step, eb, abs_bound);
                codes[b.first_code + k] = e.code;
                if (e.outlier) hd_atomic_or_u32(outlier_words + idx / 32, 1u << (idx % 32));
                work[idx] = e.work;
            });
        }
}

// Blocks in flight for the rANS candidates: as many scratch slices as
// temp_budget bytes hold, at most max_blocks, at least one.
struct RansWave {
    std::uint64_t temp_budget, max_blocks;
};

// The device chunk encoder's batch (mapping/chunk_batch.hpp) over b's
// rANS candidates, in ex's memory: in_ptrs = b.src, in_bytes = b.rans_in,
// an output slot of stream_bound(largest stream) bytes per stream, and
// temp for the blocks in flight that `wave` allows, with slices sized for
// the largest stream (a few KiB), not for a 128 KiB block. An executor's
// rans_candidates binds it, then runs its encoder over it.
template <typename Exec>
Errc bind_rans_candidates(Exec& ex, const StreamBatch& b, RansWave wave, mans_backend_chunk_batch* a) {
    *a = mans_backend_chunk_batch{};
    a->struct_size = sizeof *a;
    const std::uint64_t count = b.count;
    std::vector<std::size_t> bytes(static_cast<std::size_t>(count));
    if (count) ex.to_host(bytes.data(), b.bytes, count * sizeof(std::size_t));
    std::size_t largest = 0;
    for (std::size_t v : bytes) largest = std::max(largest, v);
    const std::size_t cap = stream_bound(largest);
    MANS_RETURN_IF(cap == 0, Errc::internal);
    a->dtype = rans_dtype(b.width);
    a->block_elems = rans_block_elems(b.width);
    a->chunks = count;
    a->max_in_bytes = largest;
    a->out_capacity = cap;
    static_assert(sizeof(const void*) == sizeof(const std::uint8_t*), "in_ptrs reuse b.src");
    a->in_ptrs = reinterpret_cast<const void* const*>(b.src);
    a->in_bytes = b.rans_in;
    MANS_RETURN_IF(count && cap > ~std::uint64_t{0} / count, Errc::out_of_memory);
    std::uint8_t* out = ex.template alloc<std::uint8_t>(count * cap);
    void** ptrs = ex.template alloc<void*>(count);
    ex.threads(count, [=] MANS_HD_LAMBDA(std::uint64_t i) { ptrs[i] = out + i * cap; });
    a->out_ptrs = ptrs;
    a->out_bytes = ex.template alloc<std::size_t>(count);
    a->statuses = ex.template alloc<std::int32_t>(count);
    if (count == 0) return Errc::ok;  // nothing to code (a batch of all-zero chunks)
    const ChunkEncodeLayout fixed = chunk_encode_layout(b.width, a->block_elems, count, largest, 0);
    MANS_RETURN_IF(fixed.slice == 0, Errc::internal);
    std::uint64_t blocks = wave.temp_budget / fixed.slice;
    blocks = blocks > wave.max_blocks ? wave.max_blocks : blocks;
    const ChunkEncodeLayout l = chunk_encode_layout(b.width, a->block_elems, count, largest, blocks ? blocks : 1);
    MANS_RETURN_IF(l.total == 0, Errc::internal);
    a->temp = ex.template alloc<std::uint8_t>(l.total);
    a->temp_bytes = l.total;
    return Errc::ok;
}

// The level's codes as its part of the archive: plane count, tables,
// segment sizes and checksums into the header, the bytes appended to
// *bytes.
template <typename Exec>
Errc device_code_level(Exec& ex, const std::int32_t* codes, Header* h, unsigned l,
                       std::vector<std::vector<std::uint8_t>>* bytes) {
    LevelMeta& m = h->level[l];
    const std::uint64_t n = m.codes, chunk = h->chunk_codes, count = (n + chunk - 1) / chunk;
    const Coding coding = h->coding;
    // The chunks and the workspace (sized for the worst case of forms).
    std::vector<const std::int32_t*> ptr_host;
    std::vector<std::uint64_t> len_host;
    for (std::uint64_t ch = 0; ch < count; ++ch)
        ptr_host.push_back(codes + ch * chunk), len_host.push_back(std::min(chunk, n - ch * chunk));
    const std::int32_t** ptrs = ex.template alloc<const std::int32_t*>(count + 1);
    std::uint64_t* lens = ex.template alloc<std::uint64_t>(count + 1);
    if (count) ex.to_device(ptrs, ptr_host.data(), count * sizeof(void*)), ex.to_device(lens, len_host.data(), count * 8);
    CodedChunk* chunks = ex.template alloc<CodedChunk>(count + 1);
    const std::uint64_t max_len = std::min(chunk, n);
    // The chunk part now; the form part once the forms are counted.
    ChunkCodingLayout lay = chunk_coding_layout(count, max_len, 0);
    std::uint8_t* temp = ex.template alloc<std::uint8_t>(lay.chunk_bytes);
    ChunkCoding cc = bind_chunk_coding(lay, temp, ex.template alloc<std::uint8_t>(1), coding, ptrs, lens, chunks);
    const std::uint32_t zero = 0;
    ex.to_device(cc.failed, &zero, 4);
    // 1. words, plane counts, statistics; 2. the forms' scan (on the host).
    ex.teams(count, [=] MANS_HD_LAMBDA(const typename Exec::Team& t, TeamScratch*, std::uint64_t ch) {
        chunk_words(t, cc, ch);
    });
    std::vector<CodedChunk> host(static_cast<std::size_t>(count));
    if (count) ex.to_host(host.data(), chunks, count * sizeof(CodedChunk));
    std::vector<std::uint64_t> first(static_cast<std::size_t>(count + 1), 0);
    for (std::uint64_t ch = 0; ch < count; ++ch) first[ch + 1] = first[ch] + chunk_plane_forms(host[ch].planes, coding);
    ex.to_device(cc.form_first, first.data(), (count + 1) * 8);
    lay = chunk_coding_layout(count, max_len, first[count]);
    cc = bind_chunk_coding(lay, temp, ex.template alloc<std::uint8_t>(lay.form_bytes), coding, ptrs, lens, chunks);
    if (!set_form_count(&cc, first[count])) return Errc::internal;
    // 3. the planes' streams; 4. the lossless stage; 5. the segments.
    ex.teams(count, [=] MANS_HD_LAMBDA(const typename Exec::Team& t, TeamScratch* s, std::uint64_t ch) {
        split_chunk_planes(t, cc, ch, &s->split, LoopBitGather{}, typename Exec::Transpose{});
    });
    const StreamBatch batch = cc.batch;
    ex.teams(batch.count, [=] MANS_HD_LAMBDA(const typename Exec::Team& t, TeamScratch* s, std::uint64_t i) {
        screen_stream(t, batch, i, s->hist);
    });
    mans_backend_chunk_batch rans{};
    MANS_RETURN_IF_ERROR(ex.rans_candidates(batch, &rans));
    ex.threads(batch.count, [=] MANS_HD_LAMBDA(std::uint64_t i) { choose_stream(batch, rans, i); });
    ex.teams(count, [=] MANS_HD_LAMBDA(const typename Exec::Team& t, TeamScratch*, std::uint64_t ch) {
        write_chunk_segments(t, cc, ch);
    });
    std::uint32_t failed = 0;
    ex.to_host(&failed, cc.failed, 4);
    if (failed) return Errc::internal;
    // The level's assembly: offsets on the host from the chunks' segment
    // sizes, the bytes placed and the planes' checksums on the device.
    if (count) ex.to_host(host.data(), chunks, count * sizeof(CodedChunk));
    LevelAssembly a{coding, level_plane_count(host.data(), count), count, host.data(), nullptr, nullptr};
    const std::uint64_t segs = level_segment_count(a);
    std::vector<std::uint64_t> offsets(static_cast<std::size_t>(segs + 1), 0);
    for (std::uint64_t s = 0; s < segs; ++s) offsets[s + 1] = offsets[s] + level_segment_bytes(a, s);
    m.planes = static_cast<std::uint8_t>(a.planes);
    m.max_err.assign(a.planes + 1, 0);
    m.sum_sq.assign(a.planes + 1, 0);
    for (unsigned kept = 0; kept <= a.planes; ++kept) {
        level_truncation_entry(a, kept, &m.max_err[kept], &m.sum_sq[kept]);
        m.sum_sq[kept] = decode_sum_sq(encode_sum_sq(m.sum_sq[kept]));  // as stored
    }
    for (std::uint64_t s = 0; s < segs; ++s) h->segments.push_back(Segment{static_cast<std::uint32_t>(offsets[s + 1] - offsets[s])});
    std::uint64_t* off_dev = ex.template alloc<std::uint64_t>(segs + 1);
    ex.to_device(off_dev, offsets.data(), (segs + 1) * 8);
    std::uint8_t* out = ex.template alloc<std::uint8_t>(offsets[segs] + 1);
    const LevelAssembly da{coding, a.planes, count, chunks, off_dev, out};
    ex.teams(segs, [=] MANS_HD_LAMBDA(const typename Exec::Team& t, TeamScratch*, std::uint64_t s) {
        place_level_segment(t, da, s);
    });
    std::uint32_t* sums = ex.template alloc<std::uint32_t>(a.planes + 1);
    ex.teams(a.planes, [=] MANS_HD_LAMBDA(const typename Exec::Team& t, TeamScratch*, std::uint64_t b) {
        const std::uint32_t sum = level_plane_checksum(t, da, static_cast<unsigned>(b));
        if (t.leads()) sums[b] = sum;
    });
    std::vector<std::uint32_t> checksums(a.planes);
    if (a.planes) ex.to_host(checksums.data(), sums, a.planes * 4);
    h->plane_checksum.insert(h->plane_checksum.end(), checksums.begin(), checksums.end());
    std::vector<std::uint8_t> level(static_cast<std::size_t>(offsets[segs]));
    if (!level.empty()) ex.to_host(level.data(), out, level.size());
    bytes->push_back(std::move(level));
    return Errc::ok;
}

// The whole archive of the values x[0..n) (device memory), as
// mans::prism::compress writes it for cfg (validated by the caller).
// The archive's parts: its header (h, complete but for the base's size
// and checksum), the base's data and the levels' bytes, which
// write_archive(h, encode_base(base), levels) puts together.
template <typename T, typename Exec>
Errc device_compress_parts(Exec& ex, const T* x, const mans::prism::CompressConfig& cfg, Header* h_out,
                           BaseData* base_out, std::vector<std::vector<std::uint8_t>>* levels_out,
                           DeviceRanges ranges = DeviceRanges{}) {
    namespace dd = device_encoder_detail;
    const Grid g = Grid::make(cfg.rank, cfg.dims);
    const std::uint64_t n = g.count;
    Header& h = *h_out;
    h = Header{};
    start_header(&h, g, cfg);
    std::vector<T> fills;
    std::uint8_t* mask_all = nullptr;
    const MaskPartial masked = device_mask(ex, x, n, cfg, ranges.mask, &fills, &mask_all);
    double cast_slack = 0;
    MANS_RETURN_IF_ERROR(set_value_range(&h, cfg, masked, std::vector<double>(fills.begin(), fills.end()), &cast_slack));
    const std::uint8_t* mask = masked.masked ? mask_all : nullptr;

    const BlockGrid blocks = BlockGrid::make(g);
    double* work = ex.template alloc<double>(n + 1);
    if (n) {  // the anchor
        T x0{};
        bool m0 = false;
        ex.to_host(&x0, x, sizeof(T));
        if (mask) {
            std::uint8_t b0 = 0;
            ex.to_host(&b0, mask, 1);
            m0 = b0 & 1;
        }
        const double w0 = m0 ? 0.0 : static_cast<double>(x0);
        ex.to_device(work, &w0, sizeof w0);
    }
    const std::uint64_t words = (n + 31) / 32;
    std::uint32_t* outliers = ex.template alloc<std::uint32_t>(words + 1);
    const std::vector<std::uint32_t> zeros(static_cast<std::size_t>(words), 0);
    if (words) ex.to_device(outliers, zeros.data(), words * 4);
    BaseData& base = *base_out;
    base = BaseData{};
    base.kind_bits.resize(h.levels);
    std::vector<std::vector<std::uint8_t>>& level_bytes = *levels_out;
    level_bytes.clear();
    std::uint64_t most_codes = 0;
    for (unsigned l = 0; l < h.levels; ++l) most_codes = std::max(most_codes, level_code_count(g, level_unit(h.levels, l)));
    std::int32_t* codes = ex.template alloc<std::int32_t>(most_codes + 1);
    std::uint8_t* kind_dev = ex.template alloc<std::uint8_t>((blocks.count + 7) / 8 + 1);
    for (unsigned l = 0; l < h.levels; ++l) {
        // A level's workspace lives for the level only.
        const std::size_t level_mark = ex.mark();
        plan_level(&h, cfg, l, cast_slack);
        LevelMeta& m = h.level[l];
        const std::uint64_t u = level_unit(h.levels, l);
        device_select(ex, x, mask, g, blocks, u, &m, &base.kind_bits[l]);
        if (!base.kind_bits[l].empty()) ex.to_device(kind_dev, base.kind_bits[l].data(), base.kind_bits[l].size());
        device_predict(ex, x, mask, g, blocks, u, m, h.abs_bound, kind_dev, work, codes, outliers);
        MANS_RETURN_IF_ERROR(device_code_level(ex, codes, &h, l, &level_bytes));
        ex.release(level_mark);
    }

    // Error statistics by blocks, merged in block order on the host.
    const std::uint64_t stat_blocks = (n + kErrorStatPoints - 1) / kErrorStatPoints;
    ErrorStats* part = ex.template alloc<ErrorStats>(stat_blocks + 1);
    const std::uint8_t* outlier_bits = reinterpret_cast<const std::uint8_t*>(outliers);
    ex.threads(stat_blocks, [=] MANS_HD_LAMBDA(std::uint64_t k) {
        ErrorStats s;
        const std::uint64_t first = k * kErrorStatPoints;
        const std::uint64_t last = first + kErrorStatPoints < n ? first + kErrorStatPoints : n;
        for (std::uint64_t i = first; i < last; ++i) {
            const bool exact = i == 0 || bitmap_bit(mask, i) || bitmap_bit(outlier_bits, i);
            add_point_error<T>(&s, work[i], exact ? 0.0 : static_cast<double>(x[i]), exact);
        }
        part[k] = s;
    });
    ErrorStats all;
    {
        std::vector<ErrorStats> host(static_cast<std::size_t>(stat_blocks));
        if (stat_blocks) ex.to_host(host.data(), part, stat_blocks * sizeof(ErrorStats));
        for (const ErrorStats& s : host) merge_error_stats(&all, s);
    }
    finish_error_stats(&h, all);

    // The base: kinds (above), mask and masked values, outliers, anchor.
    const std::uint64_t mask_bytes = (n + 7) / 8;
    if (h.masked_count) {
        base.mask_bits.resize(static_cast<std::size_t>(mask_bytes));
        ex.to_host(base.mask_bits.data(), mask, mask_bytes);
        std::uint64_t count = 0;
        const std::uint64_t* index = dd::list_bitmap(ex, mask, mask_bytes, ranges.list, &count);
        base.masked_values = dd::values_at(ex, x, index, count);
    }
    std::uint64_t count = 0;
    const std::uint64_t* index = dd::list_bitmap(ex, outlier_bits, mask_bytes, ranges.list, &count);
    base.outlier_index.resize(static_cast<std::size_t>(count));
    if (count) ex.to_host(base.outlier_index.data(), index, count * 8);
    base.outlier_values = dd::values_at(ex, x, index, count);
    h.outlier_count = count;
    if (n && !(mask && (base.mask_bits[0] & 1))) {
        base.anchor_value.resize(sizeof(T));
        ex.to_host(base.anchor_value.data(), x, sizeof(T));
    }
    return Errc::ok;
}

// The archive of field x (device memory) as mans::prism::compress writes it.
template <typename T, typename Exec>
Errc device_compress(Exec& ex, const T* x, const mans::prism::CompressConfig& cfg, std::vector<std::uint8_t>* archive,
                     DeviceRanges ranges = DeviceRanges{}) {
    Header h;
    BaseData base;
    std::vector<std::vector<std::uint8_t>> levels;
    MANS_RETURN_IF_ERROR(device_compress_parts(ex, x, cfg, &h, &base, &levels, ranges));
    return write_archive(&h, encode_base(base, sizeof(T)), &levels, archive);
}

}  // namespace mans::detail::prism
