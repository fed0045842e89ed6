// encode_plan.hpp - the PRISM encoder's host-side arithmetic, shared by
// every backend so that a GPU encoder fills the header as the CPU's does:
// the header's fields from the configuration and the mask's results, each
// level's bound, the error statistics' means, and the archive from its
// parts. The per-point and per-chunk work is MANS_HD code elsewhere
// (mask_hd.hpp, selection_hd.hpp, point_math.hpp, chunk_coding_hd.hpp,
// level_assembly_hd.hpp, error_stats_hd.hpp, core/bitmap_hd.hpp).
#pragma once

#include <cstdint>
#include <vector>

#include "mans/prism.hpp"
#include "prism/archive.hpp"
#include "prism/error_stats_hd.hpp"
#include "prism/mask_hd.hpp"

namespace mans::detail::prism {

// The fields that follow from the configuration alone: type, grid, bound
// mode, coding, requested bound, level count.
void start_header(Header* h, const Grid& g, const mans::prism::CompressConfig& cfg);

// The fill values in use: the caller's as T, then, when cfg.detect_fill
// and there are values, each extreme of the finite range (finite(), a
// ValueRange) that fill_candidate admits and accept_fill accepts on the
// evidence that evidence(cand) gathers, unless it is one already (bit for
// bit). The backends differ only in how they reduce the two.
template <typename T, typename Finite, typename Evidence>
std::vector<T> choose_fill_values(const mans::prism::CompressConfig& cfg, std::uint64_t n, Finite&& finite,
                                  Evidence&& evidence) {
    std::vector<T> fills;
    for (double f : cfg.fill_values) fills.push_back(static_cast<T>(f));
    if (!cfg.detect_fill || n == 0) return fills;
    const ValueRange range = finite();
    for (double cand : {range.lo, range.hi}) {
        if (!fill_candidate(cand) || !accept_fill(cand, evidence(cand))) continue;
        const T c = static_cast<T>(cand);
        bool known = false;
        for (T f : fills) known = known || same_value_bits(f, c);
        if (!known) fills.push_back(c);
    }
    return fills;
}

// The mask's results (masked count, the range of the values left, the fill
// values in use) into the header, then the absolute bound; returns the
// cast slack (half an ulp of the element type at the largest magnitude:
// the most that rounding a reconstruction to it adds), or
// invalid_argument when the bound is not finite.
Errc set_value_range(Header* h, const mans::prism::CompressConfig& cfg, const MaskPartial& m,
                     const std::vector<double>& fills, double* cast_slack);

// Level l's bound, step and code count (the level-wise bound of
// CompressConfig, leaving room for the cast slack).
void plan_level(Header* h, const mans::prism::CompressConfig& cfg, unsigned l, double cast_slack);

// The merged error statistics of every block into the header (maxima and
// the means over the points not masked).
void finish_error_stats(Header* h, const ErrorStats& all);

// The archive: header (write_header, with base_bytes and base_checksum
// set here) + base + the segments' bytes in order, checked by the reader's
// header parser. internal when the parts do not add up.
Errc write_archive(Header* h, const std::vector<std::uint8_t>& base,
                   std::vector<std::vector<std::uint8_t>>* segment_bytes, std::vector<std::uint8_t>* archive);

}  // namespace mans::detail::prism
