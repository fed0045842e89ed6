// level_assembly_hd.hpp - a level's part of the archive from its coded
// chunks, as MANS_HD steps that a GPU runs as kernels and the CPU tests
// run in loops (tests/test_prism_level_assembly_hd.cpp):
//
//   1. level_plane_count        once: P, the most planes of any chunk;
//   2. the segments' offsets    an exclusive scan (core/scan_hd.hpp) of
//      level_segment_bytes over the level's segments, plane by plane and
//      chunk by chunk (the archive's order, FORMAT.md 4);
//   3. place_level_segment      for every segment, by a team: its bytes at
//      its offset;
//   4. level_plane_checksum     for every plane, by a team: XXH3 of the
//      plane's bytes, which step 3 made contiguous (the CPU's streaming
//      XXH3 over the same bytes in the same order gives the same value);
//   5. level_truncation_entry   for every kept = 0..P: the header's
//      truncation tables, summed over the chunks in chunk order, as the
//      CPU sums them.
//
// A chunk is coded with its own plane count P_c <= P (level_codes.hpp);
// chunk_segment_for_plane says which of its segments is level plane b.
// LevelEncoder::finish runs it and dropped_digits too.
#pragma once

#include <cstddef>
#include <cstdint>

#include "core/hd.hpp"
#include "core/scan_hd.hpp"
#include "core/team.hpp"
#include "core/xxh3_hd.hpp"
#include "prism/codes.hpp"

namespace mans::detail::prism {

// chunk_segment_for_plane: none (the plane is empty in this chunk), or the
// sign-magnitude form of plane 1 below an empty plane.
inline constexpr int kNoSegment = -1;
inline constexpr int kAfterZeroPlaneSegment = -2;

// Which of a chunk's segments (0 .. chunk_planes - 1) is plane b of a level
// of level_planes planes. Negabinary: the chunk's planes are the level's
// last ones. Sign-magnitude: plane 0 (the sign) stays first and the
// magnitude planes are the last ones; the first magnitude plane below an
// empty one takes its after-zero-plane form.
MANS_HD int chunk_segment_for_plane(Coding c, unsigned level_planes, unsigned chunk_planes, unsigned b) {
    if (chunk_planes == 0) return kNoSegment;
    const unsigned gap = level_planes - chunk_planes;  // empty level planes above the chunk's own
    if (c == Coding::negabinary) return b >= gap ? static_cast<int>(b - gap) : kNoSegment;
    if (b == 0) return 0;
    if (b <= gap) return kNoSegment;
    return b - gap == 1 && gap > 0 ? kAfterZeroPlaneSegment : static_cast<int>(b - gap);
}

// Digits of a chunk's codes dropped when a reader keeps `kept` of the
// level's planes: a chunk with fewer digits loses all of them.
MANS_HD unsigned dropped_digits(unsigned level_planes, unsigned kept, unsigned chunk_planes) {
    const unsigned d = level_planes - kept;
    return d < chunk_planes ? d : chunk_planes;
}

// What the coder of one chunk left (device memory on a GPU): its segments
// and its truncation statistics by digits dropped (TruncationPartial's
// max_err and sum_sq.to_double(), truncation_stats_hd.hpp).
struct CodedChunk {
    unsigned planes = 0;  // P_c
    const std::uint8_t* seg[kMaxPlanes] = {};
    std::uint32_t seg_bytes[kMaxPlanes] = {};
    const std::uint8_t* after_zero_plane = nullptr;  // sign-magnitude, P_c >= 2
    std::uint32_t after_zero_plane_bytes = 0;
    double max_err[kMaxPlanes + 1] = {};
    double sum_sq[kMaxPlanes + 1] = {};
};

// A level being assembled. offsets has planes * chunk_count + 1 entries
// (from the scan): segment s = b * chunk_count + ch starts at offsets[s]
// bytes from the level's first byte in out.
struct LevelAssembly {
    Coding coding;
    unsigned planes;  // P, from level_plane_count
    std::uint64_t chunk_count;
    const CodedChunk* chunks;
    const std::uint64_t* offsets;
    std::uint8_t* out;
};

MANS_HD unsigned level_plane_count(const CodedChunk* chunks, std::uint64_t n) {
    unsigned p = 0;
    for (std::uint64_t ch = 0; ch < n; ++ch) p = chunks[ch].planes > p ? chunks[ch].planes : p;
    return p;
}

MANS_HD std::uint64_t level_segment_count(const LevelAssembly& a) { return a.planes * a.chunk_count; }

// The bytes of segment s (none: 0 bytes).
struct SegmentBytes {
    const std::uint8_t* data;
    std::uint32_t size;
};
MANS_HD SegmentBytes level_segment(const LevelAssembly& a, std::uint64_t s) {
    const CodedChunk& c = a.chunks[s % a.chunk_count];
    const int k = chunk_segment_for_plane(a.coding, a.planes, c.planes, static_cast<unsigned>(s / a.chunk_count));
    if (k == kNoSegment) return {nullptr, 0};
    if (k == kAfterZeroPlaneSegment) return {c.after_zero_plane, c.after_zero_plane_bytes};
    return {c.seg[k], c.seg_bytes[k]};
}

MANS_HD std::uint64_t level_segment_bytes(const LevelAssembly& a, std::uint64_t s) { return level_segment(a, s).size; }

template <typename Team>
MANS_HD void place_level_segment(const Team& team, const LevelAssembly& a, std::uint64_t s) {
    const SegmentBytes seg = level_segment(a, s);
    if (seg.size) team_copy(team, a.out + a.offsets[s], seg.data, seg.size);
}

// The plane's checksum as the header stores it (the low 32 bits of XXH3-64).
template <typename Team>
MANS_HD std::uint32_t level_plane_checksum(const Team& team, const LevelAssembly& a, unsigned b) {
    const std::uint64_t first = a.offsets[b * a.chunk_count], end = a.offsets[(b + 1) * a.chunk_count];
    return static_cast<std::uint32_t>(xxh3_64_team(team, a.out + first, static_cast<std::size_t>(end - first)));
}

// Entry `kept` of the level's truncation tables (before the header's
// rounding of sum_sq, encode_sum_sq): the largest code error of any chunk
// and the sum of the chunks' squared errors, added in chunk order.
MANS_HD void level_truncation_entry(const LevelAssembly& a, unsigned kept, double* max_err, double* sum_sq) {
    double m = 0, s = 0;
    for (std::uint64_t ch = 0; ch < a.chunk_count; ++ch) {
        const CodedChunk& c = a.chunks[ch];
        const unsigned d = dropped_digits(a.planes, kept, c.planes);
        m = c.max_err[d] > m ? c.max_err[d] : m;
        s += c.sum_sq[d];
    }
    *max_err = m;
    *sum_sq = s;
}

}  // namespace mans::detail::prism
