// geometry.hpp - PRISM grid, interpolation levels, passes and stencils.
//
// The grid is interpolated globally (no tiles): level u (u = 2^j) predicts
// the points of the u-lattice that are not on the 2u-lattice, in a fixed
// sequence of passes. Every point of a pass depends only on points of earlier
// passes, so a pass is one data-parallel step: any split of its boxes into
// tiles (OpenMP chunks here, thread blocks on a GPU) writes the same bytes.
// docs/FORMAT.md section 4.3 is normative.
#pragma once

#include <cstdint>
#include <vector>

#include "core/hd.hpp"

namespace mans::detail::prism {

inline constexpr unsigned kMaxRank = 4;

struct Grid {
    unsigned rank = 0;
    std::uint64_t n[kMaxRank] = {1, 1, 1, 1};       // slowest to fastest
    std::uint64_t stride[kMaxRank] = {0, 0, 0, 0};  // elements
    std::uint64_t count = 0;

    static Grid make(unsigned rank, const std::uint64_t* dims) {
        Grid g;
        g.rank = rank;
        g.count = 1;
        for (unsigned a = 0; a < rank; ++a) g.n[a] = dims[a], g.count *= dims[a];
        std::uint64_t s = 1;
        for (unsigned a = rank; a-- > 0;) g.stride[a] = s, s *= g.n[a];
        return g;
    }
    std::uint64_t max_extent() const {
        std::uint64_t m = 1;
        for (unsigned a = 0; a < rank; ++a) m = n[a] > m ? n[a] : m;
        return m;
    }
};

// Number of interpolation levels: the anchor lattice 2^levels covers the
// largest extent, so the only anchor is the origin.
inline unsigned level_count(const Grid& g) {
    unsigned L = 0;
    while ((std::uint64_t{1} << L) < g.max_extent()) ++L;
    return L;
}

// How the points of one level are split into passes (stored per level).
enum class Scheme : std::uint8_t {
    seq_forward = 0,  // one pass per axis, slowest axis first, 1D stencil along it
    seq_reverse = 1,  // fastest axis first
    multi_dim = 2,    // pass k: points with k+1 odd coordinates, mean of their 1D stencils
};
inline constexpr unsigned kSchemeCount = 3;

// Stencil family of a point (per level, or per block of a level).
enum class Kind : std::uint8_t { linear = 0, cubic = 1 };

// A box of lattice points: coordinate start + i*step, i < count, on each axis.
struct Box {
    std::uint64_t start[kMaxRank] = {0, 0, 0, 0};
    std::uint64_t step[kMaxRank] = {1, 1, 1, 1};
    std::uint64_t count[kMaxRank] = {1, 1, 1, 1};
    unsigned axes = 0;            // bit a set: interpolate along axis a
    std::uint64_t first_code = 0; // code index of the box's first point within its level
    MANS_HD std::uint64_t size() const { return count[0] * count[1] * count[2] * count[3]; }
};

struct Pass {
    std::vector<Box> boxes;
};

inline std::uint64_t lattice_count(std::uint64_t n, std::uint64_t start, std::uint64_t step) {
    return n > start ? (n - 1 - start) / step + 1 : 0;
}

// Passes of the level with unit u (u >= 1) under `scheme`, with first_code set.
inline std::vector<Pass> level_passes(const Grid& g, std::uint64_t u, Scheme scheme) {
    std::vector<Pass> passes;
    const unsigned r = g.rank;
    auto make_box = [&](unsigned odd_axes, unsigned fine_axes) {
        Box b;
        for (unsigned a = 0; a < r; ++a) {
            if (odd_axes >> a & 1) b.start[a] = u, b.step[a] = 2 * u;
            else if (fine_axes >> a & 1) b.start[a] = 0, b.step[a] = u;
            else b.start[a] = 0, b.step[a] = 2 * u;
            b.count[a] = lattice_count(g.n[a], b.start[a], b.step[a]);
        }
        return b;
    };
    if (scheme == Scheme::multi_dim) {
        for (unsigned k = 1; k <= r; ++k) {
            Pass p;
            for (unsigned mask = 1; mask < (1u << r); ++mask) {
                if (static_cast<unsigned>(__builtin_popcount(mask)) != k) continue;
                Box b = make_box(mask, 0);
                b.axes = mask;
                p.boxes.push_back(b);
            }
            passes.push_back(p);
        }
    } else {
        unsigned done = 0;
        for (unsigned k = 0; k < r; ++k) {
            const unsigned a = scheme == Scheme::seq_forward ? k : r - 1 - k;
            Pass p;
            Box b = make_box(1u << a, done);
            b.axes = 1u << a;
            p.boxes.push_back(b);
            passes.push_back(p);
            done |= 1u << a;
        }
    }
    std::uint64_t code = 0;
    for (Pass& p : passes)
        for (Box& b : p.boxes) b.first_code = code, code += b.size();
    return passes;
}

inline std::uint64_t level_code_count(const Grid& g, std::uint64_t u) {
    std::uint64_t c = 0;
    for (const Pass& p : level_passes(g, u, Scheme::seq_forward))
        for (const Box& b : p.boxes) c += b.size();
    return c;
}

// interp_1d's stencils where every neighbour exists.
MANS_HD double cubic_interior(double m3, double m1, double p1, double p3) {
    return (-m3 + 9.0 * m1 + 9.0 * p1 - p3) * 0.0625;
}
MANS_HD double linear_interior(double m1, double p1) { return (m1 + p1) * 0.5; }

// 1D prediction of the point at coordinate c (an odd multiple of u) along an
// axis of extent n and element stride s, from already reconstructed values.
// The weights and their evaluation order are part of the format.
// V is pointer-like: a double*, or UnalignedValues<T> over the raw input.
template <typename V>
MANS_HD double interp_1d(V v, std::uint64_t c, std::uint64_t u, std::uint64_t n,
                         std::uint64_t s, Kind kind) {
    const double m1 = static_cast<double>(v[-static_cast<std::int64_t>(u * s)]);
    if (c + u >= n) return m1;  // data edge: copy
    const double p1 = static_cast<double>(v[u * s]);
    if (kind == Kind::cubic) {
        const bool has_m3 = c >= 3 * u;
        const bool has_p3 = c + 3 * u < n;
        if (has_m3 && has_p3) {
            const double m3 = static_cast<double>(v[-static_cast<std::int64_t>(3 * u * s)]);
            const double p3 = static_cast<double>(v[3 * u * s]);
            return cubic_interior(m3, m1, p1, p3);
        }
        if (has_p3) return (3.0 * m1 + 6.0 * p1 - static_cast<double>(v[3 * u * s])) * 0.125;
        if (has_m3)
            return (-static_cast<double>(v[-static_cast<std::int64_t>(3 * u * s)]) + 6.0 * m1 + 3.0 * p1) * 0.125;
    }
    return linear_interior(m1, p1);
}

// Whether interp_1d at coordinate c uses the interior stencil of `kind`
// (all its neighbours exist).
MANS_HD bool interp_interior(std::uint64_t c, std::uint64_t u, std::uint64_t n, Kind kind) {
    return kind == Kind::cubic ? c >= 3 * u && c + 3 * u < n : c + u < n;
}

// The points i0 <= i < i1 of a run with coordinates c0 + i * dc (dc > 0,
// i < m) where interp_interior holds.
struct RunSpan {
    std::uint64_t i0, i1;
};
inline RunSpan interior_span(std::uint64_t c0, std::uint64_t dc, std::uint64_t m, std::uint64_t u, std::uint64_t n,
                             Kind kind) {
    const std::uint64_t before = kind == Kind::cubic ? 3 * u : 0;  // c >= before
    const std::uint64_t after = kind == Kind::cubic ? 3 * u : u;    // c + after < n
    const std::uint64_t i0 = c0 >= before ? 0 : (before - c0 + dc - 1) / dc;
    const std::uint64_t i1 = n > after + c0 ? (n - after - c0 + dc - 1) / dc : 0;  // c0 + i*dc < n - after
    const std::uint64_t lo = i0 < m ? i0 : m, hi = i1 < m ? i1 : m;
    return {lo, hi < lo ? lo : hi};
}

// sum[i] += interp_1d's interior stencil of `kind` at the m points whose
// neighbours at -3u, -u, +u, +3u along the axis are m3[i * di], m1[i * di],
// p1[i * di] and p3[i * di] (m3 and p3 unread for linear): the same
// arithmetic as interp_1d, without its per-point tests (the caller has
// checked interp_interior for every point).
template <typename V>
inline void add_interior_stencils(V m3, V m1, V p1, V p3, std::uint64_t di, std::uint64_t m, Kind kind, double* sum) {
    if (kind == Kind::cubic) {
        for (std::uint64_t i = 0; i < m; ++i) {
            const std::int64_t k = static_cast<std::int64_t>(i * di);
            sum[i] += cubic_interior(static_cast<double>(m3[k]), static_cast<double>(m1[k]), static_cast<double>(p1[k]),
                                     static_cast<double>(p3[k]));
        }
    } else {
        for (std::uint64_t i = 0; i < m; ++i) {
            const std::int64_t k = static_cast<std::int64_t>(i * di);
            sum[i] += linear_interior(static_cast<double>(m1[k]), static_cast<double>(p1[k]));
        }
    }
}

// sum[i] += interp_1d(here + i * di, c0 + i * dc, u, n, s, kind) for the m
// points of a run on the CPU (dc = 0 along an axis the run does not move
// on): interior points by add_interior_stencils, the few at the grid's
// edges by interp_1d. The same values as interp_1d point by point. V: a
// double* (the sweep's work values) or UnalignedValues (the selection's
// input values).
template <typename V>
inline void add_run_stencils(V here, std::uint64_t di, std::uint64_t c0, std::uint64_t dc, std::uint64_t m,
                             std::uint64_t u, std::uint64_t n, std::uint64_t s, Kind kind, double* sum) {
    const RunSpan in = dc ? interior_span(c0, dc, m, u, n, kind)
                          : interp_interior(c0, u, n, kind) ? RunSpan{0, m} : RunSpan{m, m};
    for (std::uint64_t i = 0; i < in.i0; ++i) sum[i] += interp_1d(here + i * di, c0 + i * dc, u, n, s, kind);
    if (in.i1 > in.i0) {  // only then are the neighbours' addresses inside the values
        const V at = here + in.i0 * di;
        const bool cubic = kind == Kind::cubic;  // linear reads +-u*s only
        add_interior_stencils(cubic ? at - 3 * u * s : at, at - u * s, at + u * s, cubic ? at + 3 * u * s : at, di,
                              in.i1 - in.i0, kind, sum + in.i0);
    }
    for (std::uint64_t i = in.i1; i < m; ++i) sum[i] += interp_1d(here + i * di, c0 + i * dc, u, n, s, kind);
}

// sum[i] (zeroed first) += add_run_stencils along each axis of `axes`, in
// increasing axis order as predict_point sums them, for the m points of a
// run along the fastest axis: coordinates c, except c_last + i * dc on the
// last axis. Returns the number of axes (predict_point's divisor).
template <typename V>
inline unsigned add_run_predictions(V here, std::uint64_t di, const Grid& g, unsigned axes, const std::uint64_t* c,
                                    std::uint64_t c_last, std::uint64_t dc, std::uint64_t m, std::uint64_t u,
                                    Kind kind, double* sum) {
    const unsigned F = g.rank - 1;
    for (std::uint64_t i = 0; i < m; ++i) sum[i] = 0;
    unsigned cnt = 0;
    for (unsigned a = 0; a < g.rank; ++a) {
        if (!(axes >> a & 1)) continue;
        add_run_stencils(here, di, a == F ? c_last : c[a], a == F ? dc : 0, m, u, g.n[a], g.stride[a], kind, sum);
        ++cnt;
    }
    return cnt;
}

// Largest L1 norm of the weights a kind uses (the per-pass error gain).
inline double kind_gain(Kind k) { return k == Kind::cubic ? 1.25 : 1.0; }

// Prediction of point `idx` with coordinates `c` from the 1D stencils along
// `axes` (mean when several). The sum runs over increasing axis.
template <typename V>
MANS_HD double predict_point(V work, std::uint64_t idx, const std::uint64_t* c,
                             const std::uint64_t* n, const std::uint64_t* stride, unsigned rank,
                             unsigned axes, std::uint64_t u, Kind kind) {
    double sum = 0;
    unsigned k = 0;
    for (unsigned a = 0; a < rank; ++a) {
        if (!(axes >> a & 1)) continue;
        sum += interp_1d(work + idx, c[a], u, n[a], stride[a], kind);
        ++k;
    }
    return k == 1 ? sum : sum / static_cast<double>(k);
}

// Read-only view of element values at any alignment (the caller's input).
template <typename T>
struct UnalignedValues {
    const std::uint8_t* p;
    T operator[](std::int64_t i) const {
        T v;
        __builtin_memcpy(&v, p + i * static_cast<std::int64_t>(sizeof(T)), sizeof(T));
        return v;
    }
    UnalignedValues operator+(std::uint64_t k) const { return {p + k * sizeof(T)}; }
    UnalignedValues operator-(std::uint64_t k) const { return {p - k * sizeof(T)}; }
};

// Interpolation blocks: the unit of the per-block linear/cubic choice.
inline std::uint64_t block_edge(unsigned rank) {
    switch (rank) {
        case 1: return 4096;
        case 2: return 128;
        case 3: return 32;
        default: return 16;
    }
}

struct BlockGrid {
    unsigned rank = 0;
    std::uint64_t edge = 1;
    std::uint64_t nb[kMaxRank] = {1, 1, 1, 1};
    std::uint64_t count = 1;
    static BlockGrid make(const Grid& g) {
        BlockGrid b;
        b.rank = g.rank;
        b.edge = block_edge(g.rank);
        b.count = 1;
        for (unsigned a = 0; a < g.rank; ++a) b.nb[a] = (g.n[a] + b.edge - 1) / b.edge, b.count *= b.nb[a];
        return b;
    }
    MANS_HD std::uint64_t block_of(const std::uint64_t* c) const {
        std::uint64_t id = 0;
        for (unsigned a = 0; a < rank; ++a) id = id * nb[a] + c[a] / edge;
        return id;
    }
};

// Stencil kind of the point at coordinates c (of the full grid) in a level
// with one kind per block: bit b of `bits` set = cubic for block b.
MANS_HD Kind block_kind(const std::uint8_t* bits, const BlockGrid& blocks, const std::uint64_t* c) {
    const std::uint64_t b = blocks.block_of(c);
    return (bits[b / 8] >> (b % 8) & 1) ? Kind::cubic : Kind::linear;
}

// Level index i (0 = coarsest) to its unit u.
inline std::uint64_t level_unit(unsigned levels, unsigned i) { return std::uint64_t{1} << (levels - 1 - i); }

}  // namespace mans::detail::prism
