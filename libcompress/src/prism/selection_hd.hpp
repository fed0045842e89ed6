// selection_hd.hpp - the encoder's open-loop choice of a level's scheme
// and stencil kinds (encoder.cpp's select) as MANS_HD code, so that a GPU
// chooses as the CPU does:
//
//   1. for every scheme, every pass of the level under it, and every
//      sampled tile of each of its boxes (every selection_tile_stride-th
//      tile of kTilePoints points, traverse.hpp), every point:
//      selection_point_costs, whose two costs are added to its block's
//      sums; the sums are integers, so the order of the additions (a
//      GPU's 64-bit atomics, the CPU's threads) cannot change them;
//   2. choose_selection, once, from the sums.
//
// The costs are measured on the original values (open loop), so the
// choice of every level can run before any level is coded.
#pragma once

#include <cmath>
#include <cstdint>

#include "core/hd.hpp"
#include "prism/archive.hpp"  // KindMode
#include "prism/geometry.hpp"

namespace mans::detail::prism {

// Every how many tiles of a box one is sampled, for a level of
// level_points points: about 2^16 points per level and scheme.
MANS_HD std::uint64_t selection_tile_stride(std::uint64_t level_points) {
    const std::uint64_t s = level_points >> 16;
    return s ? s : 1;
}

// Bit i of a bitmap; none when the bitmap is absent (null).
MANS_HD bool bitmap_bit(const std::uint8_t* bits, std::uint64_t i) {
    return bits && (bits[i >> 3] >> (i & 7) & 1);
}

// Whether the point idx (coordinates c, in box b of a pass of the level
// with unit u) counts toward the choice, and its costs with each kind:
// |x - prediction| in units of the level's bound eb (inv_eb = 1 / eb), in
// sixteenths, capped at 1e4 (a NaN, inf - inf near DBL_MAX, counts as the
// cap). A masked point, or one whose stencils touch a masked value, does
// not count. data: the original values, data[i] of element i (a pointer
// on a GPU, UnalignedValues on the CPU).
template <typename V>
MANS_HD bool selection_point_costs(V data, const std::uint8_t* mask_bits, const Grid& g, const Box& b,
                                   const std::uint64_t* c, std::uint64_t idx, std::uint64_t u, double inv_eb,
                                   std::uint64_t* linear, std::uint64_t* cubic) {
    // Points of a level are not outliers yet and never the anchor.
    if (bitmap_bit(mask_bits, idx)) return false;
    for (unsigned a = 0; a < g.rank; ++a) {
        if (!(b.axes >> a & 1)) continue;
        const std::uint64_t st = g.stride[a];
        if (bitmap_bit(mask_bits, idx - u * st)) return false;
        if (c[a] + u < g.n[a] && bitmap_bit(mask_bits, idx + u * st)) return false;
        if (c[a] >= 3 * u && bitmap_bit(mask_bits, idx - 3 * u * st)) return false;
        if (c[a] + 3 * u < g.n[a] && bitmap_bit(mask_bits, idx + 3 * u * st)) return false;
    }
    const double xv = static_cast<double>(data[idx]);
    const auto cost = [&](Kind k) {
        double pred = 0;
        unsigned cnt = 0;
        for (unsigned a = 0; a < g.rank; ++a) {
            if (!(b.axes >> a & 1)) continue;
            pred += interp_1d(data + idx, c[a], u, g.n[a], g.stride[a], k);
            ++cnt;
        }
        const double e = ::fabs(xv - pred / cnt) * inv_eb;
        return static_cast<std::uint64_t>((e < 1e4 ? e : 1e4) * 16.0);
    };
    *linear = cost(Kind::linear);
    *cubic = cost(Kind::cubic);
    return true;
}

// selection_point_costs for the n points of a run of box b (the
// coordinates c and element index idx of its first point; then along the
// fastest axis with step b.step[F]) of a field WITHOUT masked points, added
// to lin[block] and cub[block] of each point's block: the predictions of
// up to 64 points at a time by add_run_stencils, the same values as point
// by point (the CPU encoder's select).
template <typename V>
inline void add_selection_run_costs(V data, const Grid& g, const Box& b, const BlockGrid& blocks,
                                    const std::uint64_t* c, std::uint64_t idx, std::uint64_t n, std::uint64_t u,
                                    double inv_eb, std::uint64_t* lin, std::uint64_t* cub) {
    constexpr std::uint64_t kChunk = 64;
    const unsigned F = g.rank - 1;
    const std::uint64_t dc = b.step[F], di = dc * g.stride[F];
    std::uint64_t c_row[kMaxRank] = {c[0], c[1], c[2], c[3]};
    c_row[F] = 0;
    const std::uint64_t row_block = blocks.block_of(c_row);  // the block of the row's coordinate 0
    double pred[2][kChunk];
    for (std::uint64_t off = 0; off < n; off += kChunk) {
        const std::uint64_t m = n - off < kChunk ? n - off : kChunk;
        const std::uint64_t cF = c[F] + off * dc;
        const V here = data + (idx + off * di);
        add_run_predictions(here, di, g, b.axes, c, cF, dc, m, u, Kind::linear, pred[0]);
        const unsigned cnt = add_run_predictions(here, di, g, b.axes, c, cF, dc, m, u, Kind::cubic, pred[1]);
        for (std::uint64_t i = 0; i < m; ++i) {
            const double xv = static_cast<double>(here[static_cast<std::int64_t>(i * di)]);
            const std::uint64_t block = row_block + (cF + i * dc) / blocks.edge;
            std::uint64_t cost[2];
            for (unsigned k = 0; k < 2; ++k) {  // as selection_point_costs
                const double e = ::fabs(xv - pred[k][i] / cnt) * inv_eb;
                cost[k] = static_cast<std::uint64_t>((e < 1e4 ? e : 1e4) * 16.0);
            }
            lin[block] += cost[0];
            cub[block] += cost[1];
        }
    }
}

// The stencil kind of the point at coordinates c (of the full grid) in a
// level of kind mode `mode`; bits: the per-block kinds (per_block only).
MANS_HD Kind level_point_kind(KindMode mode, const std::uint8_t* bits, const BlockGrid& blocks,
                              const std::uint64_t* c) {
    if (mode != KindMode::per_block) return mode == KindMode::all_cubic ? Kind::cubic : Kind::linear;
    return block_kind(bits, blocks, c);
}

struct SelectionChoice {
    Scheme scheme;
    KindMode mode;
};

// The choice from the sums of `schemes` schemes over nb blocks: sums[(s *
// 2 + k) * nb + block] for scheme s and kind k (0 linear, 1 cubic). Per
// scheme the cheaper kind for the whole level, or a kind per block when
// that pays for its nb bits by more than 1/32; the cheapest scheme, the
// first on ties. block_bits ((nb + 7) / 8 bytes) receives the per-block
// kinds (bit = cubic) when the mode is per_block, and is left alone
// otherwise.
MANS_HD SelectionChoice choose_selection(const std::uint64_t* sums, std::uint64_t nb, unsigned schemes,
                                         std::uint8_t* block_bits) {
    SelectionChoice best{Scheme::seq_forward, KindMode::all_cubic};
    std::uint64_t best_cost = ~std::uint64_t{0};
    for (unsigned s = 0; s < schemes; ++s) {
        const std::uint64_t* lin = sums + static_cast<std::uint64_t>(s) * 2 * nb;
        const std::uint64_t* cub = lin + nb;
        std::uint64_t sum_lin = 0, sum_cub = 0, sum_min = 0;
        for (std::uint64_t k = 0; k < nb; ++k)
            sum_lin += lin[k], sum_cub += cub[k], sum_min += cub[k] < lin[k] ? cub[k] : lin[k];
        SelectionChoice sel{static_cast<Scheme>(s), sum_cub <= sum_lin ? KindMode::all_cubic : KindMode::all_linear};
        std::uint64_t c = sum_lin < sum_cub ? sum_lin : sum_cub;
        if (nb > 1 && sum_min + nb < c - c / 32) {
            sel.mode = KindMode::per_block;
            c = sum_min + nb;
        }
        if (c < best_cost) best_cost = c, best = sel;
    }
    if (best.mode == KindMode::per_block) {
        const std::uint64_t* lin = sums + static_cast<std::uint64_t>(best.scheme) * 2 * nb;
        const std::uint64_t* cub = lin + nb;
        for (std::uint64_t i = 0; i < (nb + 7) / 8; ++i) block_bits[i] = 0;
        for (std::uint64_t k = 0; k < nb; ++k)
            if (cub[k] <= lin[k]) block_bits[k / 8] |= static_cast<std::uint8_t>(1u << (k % 8));
    }
    return best;
}

}  // namespace mans::detail::prism
