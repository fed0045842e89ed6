// sweep.hpp - every predicted point, level by level, with a double kept only
// where a later prediction reads it. The encoder (quantization) and the
// reader (reconstruction) both run on it, so their arithmetic is the same.
//
// Memory: every level but the finest predicts points of the 2-lattice (all
// coordinates even), so those levels run on the half grid g2 (dims
// ceil(n/2)): the same points in the same order with the same neighbours
// (c + k*u < n iff c/2 + k*u/2 < ceil(n/2)), in one array of N / 2^rank
// doubles. The finest level (u = 1) is swept in batches of rows of the row
// axis (the first axis longer than 1), holding a ring of rows only. With the
// passes of FORMAT.md 4.3 at u = 1, a point reads
//   - points of its own row and of the 2-lattice, and
//   - if its row is odd and it interpolates along the row axis, the even
//     rows at distance 1 and 3;
// and a box of the level either covers all rows (scheme 0, after its first
// pass; those points read their own row only) or every other row (step 2).
// So even-row boxes run a few rows ahead of the odd-row and all-row boxes.
// Points of one pass never read each other, and every point is computed
// from the same values as in the plain order: the result is bit-identical
// for any batch size and thread count.
#pragma once

#include <omp.h>
#if defined(__linux__)
#include <sys/mman.h>
#include <unistd.h>
#endif

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <vector>

#include "core/status.hpp"
#include "prism/base.hpp"
#include "prism/level_codes.hpp"
#include "prism/traverse.hpp"

namespace mans::detail::prism {

// Codes per parallel step, and the most points per batch of the finest
// level. Never changes a byte; a test lowers it so that small grids run
// many steps, batches and ring wraps.
inline std::atomic<std::uint64_t>& sweep_step_codes() {
    static std::atomic<std::uint64_t> codes{std::uint64_t{1} << 21};
    return codes;
}

// Hands the whole pages inside [begin, end) back to the system: their
// contents are not needed again (Linux; elsewhere nothing happens).
// Returns where the released pages end (where the next call may start).
inline const double* release_pages(const double* begin, const double* end) {
#if defined(__linux__)
    static const std::uintptr_t page = static_cast<std::uintptr_t>(sysconf(_SC_PAGESIZE));
    const std::uintptr_t a = (reinterpret_cast<std::uintptr_t>(begin) + page - 1) / page * page;
    const std::uintptr_t b = reinterpret_cast<std::uintptr_t>(end) / page * page;
    if (b <= a) return begin;
    madvise(reinterpret_cast<void*>(a), b - a, MADV_DONTNEED);
    return reinterpret_cast<const double*>(b);
#else
    (void)end;
    return begin;
#endif
}

// Points of a run predicted and visited together (the finest level).
inline constexpr std::uint64_t kSweepRunPoints = 64;

// How the sweep predicts a level (scheme and stencil kinds).
struct LevelForm {
    Scheme scheme = Scheme::seq_forward;
    KindMode kinds = KindMode::all_cubic;
    const std::vector<std::uint8_t>* kind_bits = nullptr;  // per_block only
};

// Rows of the finest level held by the sweep: row t at row(t), R values each.
struct RowRing {
    const double* base = nullptr;
    std::uint64_t mask = 0, R = 0;
    const double* row(std::uint64_t t) const { return base + (t & mask) * R; }
};

// Ops (a class of the encoder or the reader) provides:
//   double anchor()                      work value of point 0
//   LevelForm begin_level(l)             called before level l is swept
//   StepJobs begin_step(l, ranges)       before a parallel step over these codes:
//                                        the jobs to run in it
//   void job(j)                          job j (thread-safe; chunk coding or decoding)
//   double visit(l, idx, code, pred)     work value of point idx (thread-safe)
//   void visit_run(l, first, di, code, m, pred, work)
//                                        work[i * di] = visit(l, first + i * di, code + i,
//                                        pred[i]) for i < m <= kSweepRunPoints
//   Errc end_step(l, ranges)             after the step
//   Errc end_level(l)
//   void rows_done(r0, r1, ring)         rows [r0, r1) are final (in order)
// A step is one parallel region (jobs, then points), so that threads meet
// at as few barriers as possible.
template <typename Ops>
class Sweep {
public:
    Sweep(const Grid& g, unsigned levels, int threads, Ops& ops)
        : g_(g), L_(levels), threads_(threads), ops_(ops), step_codes_(std::max<std::uint64_t>(1, sweep_step_codes())) {}

    Errc run() {
        if (g_.count == 0) return Errc::ok;
        std::uint64_t half[kMaxRank] = {1, 1, 1, 1};
        for (unsigned a = 0; a < g_.rank; ++a) half[a] = (g_.n[a] + 1) / 2, up_[a] = 2 * g_.stride[a];
        g2_ = Grid::make(g_.rank, half);
        blocks_ = BlockGrid::make(g_);
        w2_.assign(static_cast<std::size_t>(g2_.count), 0.0);
        w2_[0] = ops_.anchor();
        for (unsigned l = 0; l + 1 < L_; ++l) MANS_RETURN_IF_ERROR(coarse_level(l));
        return finest_level();
    }

private:
    // Codes [k0, k1) of a box, in its raster order.
    struct Item {
        Box box;
        std::uint64_t k0 = 0, k1 = 0;
    };

    Kind kind_at(const LevelForm& f, const std::uint64_t* c, unsigned shift) const {
        if (f.kinds != KindMode::per_block) return f.kinds == KindMode::all_cubic ? Kind::cubic : Kind::linear;
        std::uint64_t full[kMaxRank] = {0, 0, 0, 0};
        for (unsigned a = 0; a < g_.rank; ++a) full[a] = c[a] << shift;
        return point_kind(f.kinds, *f.kind_bits, blocks_, full);
    }

    // One parallel step: fn(box, k, c, idx, m) for every run of points of
    // the items (traverse.hpp's visit_box_runs).
    template <typename F>
    Errc step(unsigned l, const Grid& g, const std::vector<Item>& items, F&& fn) {
        std::vector<CodeRange> ranges;
        std::vector<std::uint64_t> first_tile;  // prefix sums of tiles per item
        std::uint64_t tiles = 0;
        for (const Item& it : items) {
            ranges.push_back({it.box.first_code + it.k0, it.box.first_code + it.k1});
            first_tile.push_back(tiles);
            tiles += (it.k1 - it.k0 + kTilePoints - 1) / kTilePoints;
        }
        if (tiles == 0) return Errc::ok;
        const StepJobs jobs = ops_.begin_step(l, ranges);
        const std::int64_t urgent = static_cast<std::int64_t>(jobs.urgent), total = static_cast<std::int64_t>(jobs.total);
#pragma omp parallel num_threads(threads_) if (tiles > 1 || total > 1)
        {
            if (urgent) {
#pragma omp for schedule(dynamic)
                for (std::int64_t j = 0; j < urgent; ++j) ops_.job(static_cast<std::size_t>(j));
            }
#pragma omp for schedule(dynamic) nowait
            for (std::int64_t j = urgent; j < total; ++j) ops_.job(static_cast<std::size_t>(j));
#pragma omp for schedule(dynamic, 4)
            for (std::int64_t t = 0; t < static_cast<std::int64_t>(tiles); ++t) {
                const std::size_t i = static_cast<std::size_t>(
                    std::upper_bound(first_tile.begin(), first_tile.end(), static_cast<std::uint64_t>(t)) -
                    first_tile.begin() - 1);
                const Item& it = items[i];
                const std::uint64_t first = it.k0 + (static_cast<std::uint64_t>(t) - first_tile[i]) * kTilePoints;
                const std::uint64_t last = std::min(it.k1, first + kTilePoints);
                visit_box_runs(g, it.box, first, last, [&](std::uint64_t k, const std::uint64_t* c, std::uint64_t idx,
                                                           std::uint64_t m) { fn(it.box, k, c, idx, m); });
            }
        }
        return ops_.end_step(l, ranges);
    }

    // A level of unit u >= 2, on the half grid: steps of step_codes_ codes.
    Errc coarse_level(unsigned l) {
        const LevelForm f = ops_.begin_level(l);
        const std::uint64_t u2 = level_unit(L_, l) / 2;
        double* w = w2_.data();
        auto point = [&](const Box& b, std::uint64_t k, const std::uint64_t* c, std::uint64_t i2) {
            std::uint64_t idx = 0;
            for (unsigned a = 0; a < g2_.rank; ++a) idx += c[a] * up_[a];
            const double pred = predict_point(w, i2, c, g2_.n, g2_.stride, g2_.rank, b.axes, u2, kind_at(f, c, 1));
            w[i2] = ops_.visit(l, idx, b.first_code + k, pred);
        };
        // A run of n points along the fastest axis F: as in finest_level,
        // the predictions of up to kSweepRunPoints points axis by axis
        // (add_run_stencils; the same sums in the same order as
        // predict_point), then the visits. Point by point with per-block
        // stencil kinds.
        const unsigned F = g2_.rank - 1;
        auto run = [&](const Box& b, std::uint64_t k, const std::uint64_t* c, std::uint64_t i2, std::uint64_t n) {
            if (f.kinds == KindMode::per_block) {
                for_run_points(g2_, b, k, c, i2, n,
                               [&](std::uint64_t kp, const std::uint64_t* cp, std::uint64_t ip) { point(b, kp, cp, ip); });
                return;
            }
            const Kind kind = kind_at(f, c, 1);
            const std::uint64_t dc = b.step[F], di = dc * g2_.stride[F], d_idx = dc * up_[F];
            std::uint64_t idx = 0;
            for (unsigned a = 0; a < g2_.rank; ++a) idx += c[a] * up_[a];
            double sum[kSweepRunPoints];
            for (std::uint64_t off = 0; off < n; off += kSweepRunPoints) {
                const std::uint64_t m = std::min(kSweepRunPoints, n - off);
                double* here = w + i2 + off * di;
                const unsigned cnt = add_run_predictions(here, di, g2_, b.axes, c, c[F] + off * dc, dc, m, u2, kind, sum);
                if (cnt != 1)
                    for (std::uint64_t i = 0; i < m; ++i) sum[i] /= static_cast<double>(cnt);
                for (std::uint64_t i = 0; i < m; ++i)
                    here[i * di] = ops_.visit(l, idx + (off + i) * d_idx, b.first_code + k + off + i, sum[i]);
            }
        };
        for (const Pass& p : level_passes(g2_, u2, f.scheme)) {
            std::vector<Item> items;
            std::uint64_t pending = 0;
            for (const Box& b : p.boxes) {
                const std::uint64_t n = b.size();
                for (std::uint64_t k0 = 0; k0 < n;) {
                    const std::uint64_t k1 = std::min(n, k0 + (step_codes_ - pending));
                    items.push_back({b, k0, k1});
                    pending += k1 - k0;
                    k0 = k1;
                    if (pending == step_codes_) {
                        MANS_RETURN_IF_ERROR(step(l, g2_, items, run));
                        items.clear();
                        pending = 0;
                    }
                }
            }
            MANS_RETURN_IF_ERROR(step(l, g2_, items, run));
        }
        return ops_.end_level(l);
    }

    // The 2-lattice values of even rows [r0, r1) into the ring.
    void copy_even_rows(std::uint64_t r0, std::uint64_t r1, double* ring, std::uint64_t mask, std::uint64_t R) {
        const unsigned A = axis_;
        Box b;  // the g2 rows r0/2 .. (r1-1)/2
        for (unsigned a = 0; a < g2_.rank; ++a) b.count[a] = g2_.n[a];
        b.start[A] = (r0 + 1) / 2;
        b.count[A] = r1 > 2 * b.start[A] ? (r1 - 2 * b.start[A] + 1) / 2 : 0;
        const std::uint64_t n = b.size();
        if (n == 0) return;
        const std::int64_t tiles = static_cast<std::int64_t>((n + kTilePoints - 1) / kTilePoints);
        const double* w = w2_.data();
#pragma omp parallel for num_threads(threads_) schedule(static) if (tiles > 1)
        for (std::int64_t t = 0; t < tiles; ++t) {
            const std::uint64_t first = static_cast<std::uint64_t>(t) * kTilePoints;
            visit_box_range(g2_, b, first, std::min(n, first + kTilePoints),
                            [&](std::uint64_t, const std::uint64_t* c, std::uint64_t i2) {
                                std::uint64_t in_row = 0;
                                for (unsigned a = A + 1; a < g2_.rank; ++a) in_row += c[a] * up_[a];
                                ring[((2 * c[A]) & mask) * R + in_row] = w[i2];
                            });
        }
    }

    // Reads along the row axis (stride 1 in rows) through the ring.
    struct RingView {
        const double* base;
        std::uint64_t mask, R, row, in_row;
        double operator[](std::int64_t k) const {
            return base[((row + static_cast<std::uint64_t>(k)) & mask) * R + in_row];
        }
    };
    // The same reads with the ring offsets of rows row - 3 .. row + 3
    // computed once for a run of points on one row.
    struct RingRowsView {
        const double* base;
        const std::uint64_t* row_at;  // row_at[3 + k]: ((row + k) & mask) * R
        std::uint64_t in_row;
        double operator[](std::int64_t k) const { return base[row_at[3 + k] + in_row]; }
    };

    Errc finest_level() {
        unsigned A = 0;
        while (A + 1 < g_.rank && g_.n[A] == 1) ++A;
        axis_ = A;
        const std::uint64_t R = g_.stride[A], rows = g_.n[A];
        // Batches of S rows; the ring holds rows [done - 3, done + S + 3).
        // At most about N / 32 points per batch (a few % of memory) and a
        // step; at least 2 rows (the ring is a power of two >= 8 rows).
        const std::uint64_t batch = std::min(step_codes_, std::max(step_codes_ / 32, g_.count / 32));
        std::uint64_t K = 8;
        while (2 * K - 6 <= batch / R) K <<= 1;
        const std::uint64_t S = K - 6, mask = K - 1;
        std::vector<double> ring(static_cast<std::size_t>(std::min(K, rows) * R));
        double* ring_p = ring.data();
        const RowRing view{ring_p, mask, R};

        LevelForm f;
        std::vector<Pass> passes;
        const unsigned l = L_ - 1;
        if (L_ > 0) {
            f = ops_.begin_level(l);
            passes = level_passes(g_, 1, f.scheme);
        }
        const Grid& g = g_;
        auto point = [&](const Box& b, std::uint64_t k, const std::uint64_t* c, std::uint64_t idx) {
            const std::uint64_t row = c[A], in_row = idx - row * R;
            double* here = ring_p + (row & mask) * R + in_row;
            const Kind kind = kind_at(f, c, 0);
            double sum = 0;  // predict_point with the row axis read through the ring
            unsigned cnt = 0;
            for (unsigned a = 0; a < g.rank; ++a) {
                if (!(b.axes >> a & 1)) continue;
                if (a == A) sum += interp_1d(RingView{ring_p, mask, R, row, in_row}, row, 1, rows, 1, kind);
                else sum += interp_1d(here, c[a], 1, g.n[a], g.stride[a], kind);
                ++cnt;
            }
            const double pred = cnt == 1 ? sum : sum / static_cast<double>(cnt);
            *here = ops_.visit(l, idx, b.first_code + k, pred);
        };
        // A run of points along the fastest axis F: `point`'s predictions,
        // the axes' stencils each over the whole run (the same sums in the
        // same order), then the visits. Points of a pass never read each
        // other, so predicting a run before writing it changes nothing.
        // Point by point where the row axis is F (every axis before the last
        // has extent 1) or the stencil kind may change between points
        // (per-block kinds).
        const unsigned F = g.rank - 1;
        auto run = [&](const Box& b, std::uint64_t k, const std::uint64_t* c, std::uint64_t idx, std::uint64_t n) {
            if (F == A || f.kinds == KindMode::per_block) {
                for_run_points(g, b, k, c, idx, n,
                               [&](std::uint64_t kp, const std::uint64_t* cp, std::uint64_t ip) { point(b, kp, cp, ip); });
                return;
            }
            const Kind kind = kind_at(f, c, 0);
            const std::uint64_t di = b.step[F] * g.stride[F], row = c[A];
            std::uint64_t row_at[7];
            for (unsigned j = 0; j < 7; ++j) row_at[j] = ((row + j - 3) & mask) * R;
            double sum[kSweepRunPoints];
            for (std::uint64_t off = 0; off < n; off += kSweepRunPoints) {
                const std::uint64_t m = std::min(kSweepRunPoints, n - off);
                const std::uint64_t first = idx + off * di, in_row = first - row * R, cF = c[F] + off * b.step[F];
                double* here = ring_p + row_at[3] + in_row;
                for (std::uint64_t i = 0; i < m; ++i) sum[i] = 0;
                unsigned cnt = 0;
                for (unsigned a = 0; a < g.rank; ++a) {
                    if (!(b.axes >> a & 1)) continue;
                    ++cnt;
                    if (a != A) {
                        add_run_stencils(here, di, a == F ? cF : c[a], a == F ? b.step[F] : 0, m, 1, g.n[a],
                                         g.stride[a], kind, sum);
                    } else if (interp_interior(row, 1, rows, kind)) {  // the row axis, through the ring
                        // Rows +-3 only for cubic: for linear they may lie past the ring.
                        const double* at = ring_p + in_row;
                        const bool cubic = kind == Kind::cubic;
                        add_interior_stencils(at + row_at[cubic ? 0 : 2], at + row_at[2], at + row_at[4],
                                              at + row_at[cubic ? 6 : 4], di, m, kind, sum);
                    } else {
                        for (std::uint64_t i = 0; i < m; ++i)
                            sum[i] += interp_1d(RingRowsView{ring_p, row_at, in_row + i * di}, row, 1, rows, 1, kind);
                    }
                }
                if (cnt != 1)
                    for (std::uint64_t i = 0; i < m; ++i) sum[i] /= static_cast<double>(cnt);
                ops_.visit_run(l, first, di, b.first_code + k + off, m, sum, here);
            }
        };
        // The rows [r0, r1) of box b that lie on its lattice, as one item.
        auto rows_of = [&](const Box& b, std::uint64_t r0, std::uint64_t r1, std::vector<Item>* items) {
            const std::uint64_t n = b.size();
            if (n == 0) return;
            const std::uint64_t s = b.start[A], st = b.step[A], cnt = b.count[A];
            const std::uint64_t i0 = r0 > s ? (r0 - s + st - 1) / st : 0;
            const std::uint64_t i1 = r1 > s ? std::min(cnt, (r1 - s + st - 1) / st) : 0;
            if (i1 <= i0) return;
            const std::uint64_t inner = n / cnt;
            Item it;
            it.box = b;
            it.box.start[A] = s + i0 * st;
            it.box.count[A] = i1 - i0;
            it.box.first_code = b.first_code + i0 * inner;
            it.k1 = (i1 - i0) * inner;
            items->push_back(it);
        };
        auto even_box = [&](const Box& b) { return b.step[A] == 2 && b.start[A] % 2 == 0; };

        std::uint64_t done = 0, ahead_done = 0;
        const double* w2_free = w2_.data();  // pages of w2_ below are released
        while (done < rows) {
            const std::uint64_t hi = std::min(rows, done + S);
            const std::uint64_t ahead = std::min(rows, hi + 3);  // odd rows < hi read even rows < hi + 3
            copy_even_rows(ahead_done, ahead, ring_p, mask, R);
            for (const Pass& p : passes) {  // even rows first, in pass order
                std::vector<Item> items;
                for (const Box& b : p.boxes)
                    if (even_box(b)) rows_of(b, ahead_done, ahead, &items);
                MANS_RETURN_IF_ERROR(step(l, g, items, run));
            }
            ahead_done = ahead;
            // The 2-lattice rows below are in the ring now and never read
            // again: their memory goes to the output / the archive instead.
            w2_free = release_pages(w2_free, w2_.data() + (ahead_done + 1) / 2 * g2_.stride[A]);
            for (const Pass& p : passes) {  // then odd-row and all-row boxes over [done, hi)
                std::vector<Item> items;
                for (const Box& b : p.boxes)
                    if (!even_box(b)) rows_of(b, done, hi, &items);
                MANS_RETURN_IF_ERROR(step(l, g, items, run));
            }
            ops_.rows_done(done, hi, view);
            done = hi;
        }
        return L_ > 0 ? ops_.end_level(l) : Errc::ok;
    }

    const Grid& g_;
    const unsigned L_;
    const int threads_;
    Ops& ops_;
    const std::uint64_t step_codes_;
    Grid g2_;
    BlockGrid blocks_;
    std::uint64_t up_[kMaxRank] = {0, 0, 0, 0};  // g2 coordinate -> element index of g
    std::vector<double> w2_;                     // work values of the 2-lattice
    unsigned axis_ = 0;
};

}  // namespace mans::detail::prism
