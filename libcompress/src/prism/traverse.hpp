// traverse.hpp - visiting the points of a pass in parallel tiles.
//
// A tile is a fixed range of kTilePoints consecutive points of a box (in
// raster order); tiles are independent, so the thread count never changes
// a result, and a GPU maps one thread block to one tile.
#pragma once

#include <algorithm>
#include <cstdint>

#include "core/hd.hpp"
#include "prism/geometry.hpp"

namespace mans::detail::prism {

inline constexpr std::uint64_t kTilePoints = 4096;

// Coordinates c and element index of point k < b.size() of box b (raster
// order, fastest axis last): where a thread of a GPU tile starts, and
// where the CPU's walk over a range starts. b must not be empty (a count
// of 0 would divide by zero); callers skip empty boxes.
MANS_HD void box_point(const Grid& g, const Box& b, std::uint64_t k, std::uint64_t* c, std::uint64_t* idx) {
    std::uint64_t rem = k, at = 0;
    for (unsigned a = kMaxRank; a-- > 0;) {
        if (a >= g.rank) {
            c[a] = 0;
            continue;
        }
        c[a] = b.start[a] + rem % b.count[a] * b.step[a];
        rem /= b.count[a];
        at += c[a] * g.stride[a];
    }
    *idx = at;
}

// fn(k, c, idx, m) for the runs of points [first, last) of box b: points
// k .. k + m - 1 that differ only along the fastest axis f = g.rank - 1,
// point k + i at coordinate c[f] + i * b.step[f] and element index
// idx + i * b.step[f] * g.stride[f]: the points in raster order (fastest
// axis last), a row of the box (or its part in the range) at a time.
template <typename F>
inline void visit_box_runs(const Grid& g, const Box& b, std::uint64_t first, std::uint64_t last, F&& fn) {
    const unsigned r = g.rank, f = r - 1;
    std::uint64_t ci[kMaxRank] = {0, 0, 0, 0};
    std::uint64_t c[kMaxRank] = {0, 0, 0, 0};
    std::uint64_t idx = 0;
    box_point(g, b, first, c, &idx);
    for (unsigned a = 0; a < r; ++a) ci[a] = (c[a] - b.start[a]) / b.step[a];
    for (std::uint64_t k = first; k < last;) {
        const std::uint64_t m = std::min(b.count[f] - ci[f], last - k);
        fn(k, static_cast<const std::uint64_t*>(c), idx, m);
        k += m;
        if (k == last) break;
        idx -= (c[f] - b.start[f]) * g.stride[f];  // back to the row's start, then the next row
        c[f] = b.start[f];
        ci[f] = 0;
        for (unsigned a = f; a-- > 0;) {
            if (++ci[a] < b.count[a]) {
                c[a] += b.step[a];
                idx += b.step[a] * g.stride[a];
                break;
            }
            idx -= (c[a] - b.start[a]) * g.stride[a];
            c[a] = b.start[a];
            ci[a] = 0;
        }
    }
}

// fn(k + i, c', idx') for each point of a run of visit_box_runs, one at a
// time (c' is c with the fastest axis advanced).
template <typename F>
inline void for_run_points(const Grid& g, const Box& b, std::uint64_t k, const std::uint64_t* c, std::uint64_t idx,
                           std::uint64_t m, F&& fn) {
    const unsigned f = g.rank - 1;
    std::uint64_t cp[kMaxRank] = {c[0], c[1], c[2], c[3]};
    for (std::uint64_t i = 0; i < m; ++i, cp[f] += b.step[f], idx += b.step[f] * g.stride[f])
        fn(k + i, static_cast<const std::uint64_t*>(cp), idx);
}

// fn(k, c, idx) for points k in [first, last) of box b: k is the point's
// rank within the box, c its coordinates, idx its element index.
template <typename F>
inline void visit_box_range(const Grid& g, const Box& b, std::uint64_t first, std::uint64_t last, F&& fn) {
    visit_box_runs(g, b, first, last, [&](std::uint64_t k, const std::uint64_t* c, std::uint64_t idx, std::uint64_t m) {
        for_run_points(g, b, k, c, idx, m, fn);
    });
}

// fn(box, k, c, idx, m) over every run of visit_box_runs of a pass; tiles
// run in parallel. `tile_stride` > 1 visits every tile_stride-th tile only
// (sampling).
template <typename F>
inline void for_each_pass_run(const Grid& g, const Pass& p, int threads, F&& fn, std::uint64_t tile_stride = 1) {
    for (const Box& b : p.boxes) {
        const std::uint64_t n = b.size();
        if (n == 0) continue;
        const std::int64_t tiles = static_cast<std::int64_t>((n + kTilePoints - 1) / kTilePoints);
#pragma omp parallel for num_threads(threads) schedule(static) if (tiles > 1)
        for (std::int64_t t = 0; t < tiles; ++t) {
            if (static_cast<std::uint64_t>(t) % tile_stride) continue;
            const std::uint64_t first = static_cast<std::uint64_t>(t) * kTilePoints;
            const std::uint64_t last = std::min(n, first + kTilePoints);
            visit_box_runs(g, b, first, last, [&](std::uint64_t k, const std::uint64_t* c, std::uint64_t idx,
                                                  std::uint64_t m) { fn(b, k, c, idx, m); });
        }
    }
}

}  // namespace mans::detail::prism
