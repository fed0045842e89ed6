// chunk_coding_hd.hpp - a batch of a level's bitplane chunks coded as
// MANS_HD steps: what LevelEncoder::code_chunk does for one chunk on the
// CPU (level_codes.cpp: representation words, plane count, truncation
// statistics, encode_plane_chunks), so that a GPU codes many chunks per
// launch and leaves the CodedChunks that level_assembly_hd.hpp turns into
// the level's part of the archive. The CPU tests run the steps in loops
// (tests/test_prism_chunk_coding_hd.cpp):
//
//   1. chunk_words          for every chunk, by a team: the codes'
//      representation words (encode_code), the chunk's plane count P_c
//      from their OR, its truncation statistics (truncation_stats);
//   2. the forms' first index  an exclusive scan of chunk_forms over the
//      chunks (core/scan_hd.hpp) into form_first (count + 1 entries), then
//      set_form_count with the total;
//   3. split_chunk_planes   for every chunk, by a team: its planes
//      transposed, then plane by plane (significance runs from plane to
//      plane) the five context streams of each of its forms into the
//      forms' stream slots;
//   4. the lossless stage   stream_batch_hd.hpp's steps over the batch's
//      streams (cc.batch: five per form);
//   5. write_chunk_segments for every chunk, by a team (a rank per form):
//      each form's segment into its segment slot, and the chunk's segment
//      pointers.
//
// A form is what one plane chunk's segment is coded from: plane b of the
// chunk for b < P_c, and in sign-magnitude with P_c >= 2 also plane 1 as
// if an all-zero plane came before it (level_codes.hpp), last. A plane
// with no set bit has streams of 0 bytes and no segment, as
// encode_plane_chunks leaves it.
//
// The workspace (chunk_coding_layout) is sized for a number of forms:
// count * kMaxChunkForms never runs short; a caller that reads the scan's
// total back can allocate the form part for it alone (two-part binding).
#pragma once

#include <cstddef>
#include <cstdint>

#include "core/hd.hpp"
#include "core/team.hpp"
#include "prism/codes.hpp"
#include "prism/level_assembly_hd.hpp"  // CodedChunk
#include "prism/plane_split_hd.hpp"
#include "prism/stream_batch_hd.hpp"
#include "prism/truncation_stats_hd.hpp"

namespace mans::detail::prism {

inline constexpr unsigned kMaxChunkForms = kMaxPlanes + 1;

// Forms of a chunk of `planes` planes.
MANS_HD unsigned chunk_plane_forms(unsigned planes, Coding c) {
    return planes + (c == Coding::sign_magnitude && planes >= 2 ? 1u : 0u);
}

// The largest segment of a plane chunk of len codes: its five streams hold
// the plane's len bits (every code is in one context), so at most
// len / 8 + 5 bytes; no payload is larger than its stream (raw always
// competes, pick_method); plus the method word and five varints.
MANS_HD std::size_t plane_segment_capacity(std::uint64_t len) {
    return 2 + kPlaneStreams * (kMaxVarintBytes + 1) + static_cast<std::size_t>(len / 8);
}

// Where each array of a batch's workspace starts (16-byte aligned), for
// `chunks` chunks of at most max_len codes and at most max_forms forms.
// The workspace has two parts: the chunk part (words to `failed`, offsets
// from its start, chunk_bytes long), which does not depend on max_forms,
// and the form part (has_bits on, offsets from its start, form_bytes
// long). They may be one buffer (the form part at chunk_bytes) or two,
// the form part allocated once step 2 has counted the forms.
struct ChunkCodingLayout {
    std::uint64_t chunks = 0, max_len = 0, max_forms = 0;
    std::uint64_t nw = 0;      // plane words of the longest chunk
    std::uint64_t stride = 0;  // words of a stream buffer (stream_word_count)
    std::size_t segment_capacity = 0, work_stride = 0;
    std::size_t words = 0, plane_bits = 0, sig = 0, partials = 0, stats = 0, form_first = 0, tile_sums = 0, failed = 0;
    std::size_t has_bits = 0, streams = 0, segments = 0;
    // The stream batch's arrays (five entries per form).
    std::size_t src = 0, bytes = 0, work = 0, all_zero = 0, rze_bytes = 0, rans_in = 0, method = 0, payload = 0,
                size = 0;
    std::size_t chunk_bytes = 0, form_bytes = 0, total = 0;  // total: both parts in one buffer
};

MANS_HD ChunkCodingLayout chunk_coding_layout(std::uint64_t chunks, std::uint64_t max_len, std::uint64_t max_forms) {
    ChunkCodingLayout l;
    l.chunks = chunks;
    l.max_len = max_len;
    l.max_forms = max_forms;
    l.nw = plane_word_count(max_len);
    l.stride = stream_word_count(max_len);
    l.segment_capacity = (plane_segment_capacity(max_len) + 15) & ~std::size_t{15};
    l.work_stride = stream_work_bytes(static_cast<std::size_t>((max_len + 7) / 8));
    std::size_t at = 0;
    const auto reserve = [&](std::uint64_t bytes) {
        const std::size_t here = at;
        at = (at + static_cast<std::size_t>(bytes) + 15) & ~std::size_t{15};
        return here;
    };
    const std::uint64_t streams = max_forms * kPlaneStreams;
    l.words = reserve(chunks * max_len * 4);
    l.plane_bits = reserve(chunks * kMaxPlanes * l.nw * 8);
    l.sig = reserve(chunks * 3 * l.nw * 8);  // sig, fresh and an all-zero fresh
    l.partials = reserve(chunks * kMaxTeamSize * (kMaxPlanes + 1) * sizeof(TruncationPartial));
    l.stats = reserve(chunks * (kMaxPlanes + 1) * sizeof(TruncationPartial));
    l.form_first = reserve((chunks + 1) * 8);
    l.tile_sums = reserve((chunks + 1) * 8);
    l.failed = reserve(4);
    l.chunk_bytes = at;
    at = 0;  // the form part
    l.has_bits = reserve(max_forms);
    l.streams = reserve(streams * l.stride * 4);
    l.segments = reserve(max_forms * l.segment_capacity);
    l.src = reserve(streams * sizeof(const std::uint8_t*));
    l.bytes = reserve(streams * sizeof(std::size_t));
    l.work = reserve(streams * l.work_stride);
    l.all_zero = reserve(streams);
    l.rze_bytes = reserve(streams * sizeof(std::size_t));
    l.rans_in = reserve(streams * sizeof(std::size_t));
    l.method = reserve(streams * sizeof(Method));
    l.payload = reserve(streams * sizeof(const std::uint8_t*));
    l.size = reserve(streams * sizeof(std::size_t));
    l.form_bytes = at;
    l.total = l.chunk_bytes + l.form_bytes;
    return l;
}

// A batch being coded: the chunks (codes[ch][0..len[ch]), device pointers
// on a GPU), what the steps leave (out: one CodedChunk per chunk, pointing
// into the segment slots) and the workspace's arrays.
struct ChunkCoding {
    Coding coding;
    std::uint64_t count;
    const std::int32_t* const* codes;
    const std::uint64_t* len;
    CodedChunk* out;
    std::uint64_t max_len, max_forms, nw, stride;
    std::size_t segment_capacity;
    std::uint32_t* words;     // max_len per chunk
    std::uint64_t* plane_bits;  // kMaxPlanes * nw per chunk: the transposed planes
    std::uint64_t* sig;       // 3 * nw per chunk
    TruncationPartial* partials;  // kMaxTeamSize * (kMaxPlanes + 1) per chunk
    TruncationPartial* stats;     // kMaxPlanes + 1 per chunk
    std::uint64_t* form_first;    // count + 1 (step 2)
    std::uint64_t* tile_sums;     // count + 1: step 2's tile sums
    std::uint32_t* failed;        // nonzero: a chunk longer than max_len, or a segment that did not
                                  // fit its slot (never: tested bound); the caller zeroes it first
    std::uint8_t* has_bits;       // per form
    std::uint32_t* streams;       // kPlaneStreams * stride words per form
    std::uint8_t* segments;       // segment_capacity bytes per form
    const std::uint8_t** stream_src;  // the batch's src and bytes, writable
    std::size_t* stream_bytes;
    StreamBatch batch;  // five streams per form; count from set_form_count
};

// The arrays of a workspace of two parts: chunk_temp (chunk_bytes) and
// form_temp (form_bytes).
inline ChunkCoding bind_chunk_coding(const ChunkCodingLayout& l, std::uint8_t* chunk_temp, std::uint8_t* form_temp,
                                     Coding c, const std::int32_t* const* codes, const std::uint64_t* len,
                                     CodedChunk* out) {
    std::uint8_t* const temp = chunk_temp;
    std::uint8_t* const form = form_temp;
    ChunkCoding cc{};
    cc.coding = c;
    cc.count = l.chunks;
    cc.codes = codes;
    cc.len = len;
    cc.out = out;
    cc.max_len = l.max_len;
    cc.max_forms = l.max_forms;
    cc.nw = l.nw;
    cc.stride = l.stride;
    cc.segment_capacity = l.segment_capacity;
    cc.words = reinterpret_cast<std::uint32_t*>(temp + l.words);
    cc.plane_bits = reinterpret_cast<std::uint64_t*>(temp + l.plane_bits);
    cc.sig = reinterpret_cast<std::uint64_t*>(temp + l.sig);
    cc.partials = reinterpret_cast<TruncationPartial*>(temp + l.partials);
    cc.stats = reinterpret_cast<TruncationPartial*>(temp + l.stats);
    cc.form_first = reinterpret_cast<std::uint64_t*>(temp + l.form_first);
    cc.tile_sums = reinterpret_cast<std::uint64_t*>(temp + l.tile_sums);
    cc.failed = reinterpret_cast<std::uint32_t*>(temp + l.failed);
    cc.has_bits = form + l.has_bits;
    cc.streams = reinterpret_cast<std::uint32_t*>(form + l.streams);
    cc.segments = form + l.segments;
    cc.stream_src = reinterpret_cast<const std::uint8_t**>(form + l.src);
    cc.stream_bytes = reinterpret_cast<std::size_t*>(form + l.bytes);
    StreamBatch& b = cc.batch;
    b.count = 0;
    b.width = 1;         // as encode_plane_chunks codes a stream: bytes,
    b.try_rans = true;   // rANS allowed
    b.src = cc.stream_src;
    b.bytes = cc.stream_bytes;
    b.work = form + l.work;
    b.work_stride = l.work_stride;
    b.all_zero = form + l.all_zero;
    b.rze_bytes = reinterpret_cast<std::size_t*>(form + l.rze_bytes);
    b.rans_in = reinterpret_cast<std::size_t*>(form + l.rans_in);
    b.method = reinterpret_cast<Method*>(form + l.method);
    b.payload = reinterpret_cast<const std::uint8_t**>(form + l.payload);
    b.size = reinterpret_cast<std::size_t*>(form + l.size);
    return cc;
}

// Both parts in one buffer of l.total bytes.
inline ChunkCoding bind_chunk_coding(const ChunkCodingLayout& l, std::uint8_t* temp, Coding c,
                                     const std::int32_t* const* codes, const std::uint64_t* len, CodedChunk* out) {
    return bind_chunk_coding(l, temp, temp + l.chunk_bytes, c, codes, len, out);
}

// Step 2's values: the forms of chunk ch (after step 1).
MANS_HD std::uint64_t chunk_forms(const ChunkCoding& cc, std::uint64_t ch) {
    return chunk_plane_forms(cc.out[ch].planes, cc.coding);
}

// After step 2: the batch's streams; false (nothing set) when the forms
// do not fit the workspace.
MANS_HD bool set_form_count(ChunkCoding* cc, std::uint64_t forms) {
    if (forms > cc->max_forms) return false;
    cc->batch.count = forms * kPlaneStreams;
    return true;
}

// The codes of chunk ch that the steps code: all of them, or none when
// the chunk is longer than the slots (max_len), which step 1 reports.
MANS_HD std::uint64_t coded_len(const ChunkCoding& cc, std::uint64_t ch) {
    return cc.len[ch] <= cc.max_len ? cc.len[ch] : 0;
}

// Step 1 for chunk ch. A chunk longer than the slots sets *failed and is
// coded as empty.
template <typename Team>
MANS_HD void chunk_words(const Team& team, const ChunkCoding& cc, std::uint64_t ch) {
    const std::int32_t* q = cc.codes[ch];
    const bool fits = cc.len[ch] <= cc.max_len;
    const std::uint64_t n = coded_len(cc, ch);
    std::uint32_t* words = cc.words + ch * cc.max_len;
    const std::uint32_t any = team_or(team, [&](unsigned r) {
        std::uint32_t a = 0;
        for (std::uint64_t j = r; j < n; j += team.size()) a |= words[j] = encode_code(q[j], cc.coding);
        return a;
    });
    const unsigned planes = planes_for(any, cc.coding);
    TruncationPartial* stats = cc.stats + ch * (kMaxPlanes + 1);
    truncation_stats(team, q, words, n, planes, cc.coding, cc.partials + ch * kMaxTeamSize * (kMaxPlanes + 1), stats);
    if (!team.leads()) return;
    CodedChunk& c = cc.out[ch];
    c.planes = planes;
    for (unsigned d = 0; d <= planes; ++d) c.max_err[d] = stats[d].max_err, c.sum_sq[d] = stats[d].sum_sq.to_double();
    for (unsigned b = 0; b < kMaxPlanes; ++b) c.seg[b] = nullptr, c.seg_bytes[b] = 0;
    c.after_zero_plane = nullptr;
    c.after_zero_plane_bytes = 0;
    if (!fits) team.or_word(cc.failed, 1);
}

// Form f's streams from a plane and the significance before it.
template <typename Team, typename Gather>
MANS_HD void split_form(const Team& team, const ChunkCoding& cc, std::uint64_t f, const std::uint64_t* plane,
                        const std::uint64_t* sig, const std::uint64_t* fresh, std::uint64_t len,
                        PlaneSplitScratch* scratch, const Gather& gather) {
    std::uint32_t* streams = cc.streams + f * kPlaneStreams * cc.stride;
    std::uint64_t bits[kPlaneStreams] = {};
    const bool has = plane_has_bits(team, plane, plane_word_count(len));
    if (has) split_plane(team, plane, sig, fresh, len, scratch, streams, bits, gather);
    if (!team.leads()) return;
    cc.has_bits[f] = has ? 1 : 0;
    const std::uint64_t stride = stream_word_count(len);  // split_plane's, for this chunk's length
    for (unsigned k = 0; k < kPlaneStreams; ++k) {
        cc.stream_src[f * kPlaneStreams + k] = reinterpret_cast<const std::uint8_t*>(streams + k * stride);
        cc.stream_bytes[f * kPlaneStreams + k] = static_cast<std::size_t>((bits[k] + 7) / 8);
    }
}

// How step 3 transposes a chunk's words into planes: transpose_planes
// (any team); a warp passes one that calls transpose_planes_by_ballot with
// its ballot (the same words, tests/test_prism_planes_hd.cpp).
struct LoopTranspose {
    template <typename Team>
    MANS_HD void operator()(const Team& team, const std::uint32_t* words, std::uint64_t len, unsigned planes,
                            Coding c, std::uint64_t* bits) const {
        transpose_planes(team, words, len, planes, c, bits);
    }
};

// Step 3 for chunk ch. scratch: the team's shared PlaneSplitScratch.
template <typename Team, typename Gather = LoopBitGather, typename Transpose = LoopTranspose>
MANS_HD void split_chunk_planes(const Team& team, const ChunkCoding& cc, std::uint64_t ch,
                                PlaneSplitScratch* scratch, const Gather& gather = Gather{},
                                const Transpose& transpose = Transpose{}) {
    const std::uint64_t n = coded_len(cc, ch);
    const std::uint64_t nw = plane_word_count(n);
    const unsigned planes = cc.out[ch].planes;
    std::uint64_t* bits = cc.plane_bits + ch * kMaxPlanes * cc.nw;
    std::uint64_t* sig = cc.sig + ch * 3 * cc.nw;
    std::uint64_t* fresh = sig + cc.nw;
    std::uint64_t* none = fresh + cc.nw;  // no code fresh: below an all-zero plane
    transpose(team, cc.words + ch * cc.max_len, n, planes, cc.coding, bits);
    team.for_ranks([&](unsigned r) {
        for (std::uint64_t w = r; w < nw; w += team.size()) sig[w] = fresh[w] = none[w] = 0;
    });
    const std::uint64_t first = cc.form_first[ch];
    const bool two_forms = chunk_plane_forms(planes, cc.coding) > planes;
    for (unsigned b = 0; b < planes; ++b) {
        const std::uint64_t* plane = bits + static_cast<std::uint64_t>(b) * nw;
        split_form(team, cc, first + b, plane, sig, fresh, n, scratch, gather);
        if (b == 1 && two_forms) split_form(team, cc, first + planes, plane, sig, none, n, scratch, gather);
        advance_significance(team, plane, sig, fresh, nw);
    }
}

// Step 5 for chunk ch, after the lossless stage chose every stream's
// method and payload.
template <typename Team>
MANS_HD void write_chunk_segments(const Team& team, const ChunkCoding& cc, std::uint64_t ch) {
    const std::uint64_t first = cc.form_first[ch], forms = cc.form_first[ch + 1] - first;
    CodedChunk& c = cc.out[ch];
    const unsigned planes = c.planes;
    const StreamBatch& b = cc.batch;
    team.for_ranks([&](unsigned r) {
        for (std::uint64_t i = r; i < forms; i += team.size()) {
            const std::uint64_t f = first + i, s = f * kPlaneStreams;
            std::uint8_t* seg = cc.segments + f * cc.segment_capacity;
            std::size_t bytes = 0;
            if (cc.has_bits[f]) {
                bytes = plane_segment_bytes(b.method + s, b.size + s);
                if (bytes > cc.segment_capacity) {  // cannot happen (plane_segment_capacity); never overrun
                    team.or_word(cc.failed, 1);
                    bytes = 0;
                } else {
                    write_plane_segment(b.method + s, b.payload + s, b.size + s, seg);
                }
            }
            if (i < planes) c.seg[i] = seg, c.seg_bytes[i] = static_cast<std::uint32_t>(bytes);
            else c.after_zero_plane = seg, c.after_zero_plane_bytes = static_cast<std::uint32_t>(bytes);
        }
    });
    team.fence_atomics();
}

}  // namespace mans::detail::prism
