// test_prism_pass_order.cpp - PRISM's prediction and quantization in the
// order a GPU runs them: every level on the full grid (no half grid, no row
// ring), each pass's boxes in tiles of kTilePoints points, tiles and the
// points inside them in reverse order, each point on its own from
// box_point, predict_point and encode_point (the MANS_HD functions a tile
// kernel runs: tests/gpu/hd_compile_check.cu). The result must be the CPU
// encoder's: the same outliers as its archive's base, and, at every
// regular point, the work value whose rounding a full retrieval returns.
// The reader is replayed the same way (decode_point) from the replayed
// codes cut to the planes a coarse retrieval reads: its values must be
// that retrieval's.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "core/bitmap_hd.hpp"
#include "core/byte_io.hpp"
#include "core/scan_hd.hpp"
#include "mans/prism.hpp"
#include "prism/archive.hpp"
#include "prism/base.hpp"
#include "prism/encode_plan.hpp"
#include "prism/error_stats_hd.hpp"
#include "prism/mask_hd.hpp"
#include "prism/point_math.hpp"
#include "prism/selection_hd.hpp"
#include "prism/traverse.hpp"
#include "prism_hd_steps.hpp"
#include "test_support.hpp"

namespace dp = mans::detail::prism;
using mans::Errc;

namespace {

struct FieldCase {
    const char* file;
    mans::prism::FloatType type;
    unsigned rank;
    std::uint64_t dims[4];
    double rel;
};

// The archive's header and base, and the field's values.
template <typename T>
struct Replay {
    Replay(const mans_test::Bytes& raw_, const mans_test::Bytes& archive) : raw(raw_) {
        REQUIRE(dp::parse_header(archive.data(), static_cast<std::size_t>(archive.size()), archive.size(), &h) ==
                Errc::ok);
        REQUIRE(dp::decode_base(archive.data() + h.header_bytes, static_cast<std::size_t>(h.base_bytes), h, &base) ==
                Errc::ok);
        blocks = dp::BlockGrid::make(h.grid);
    }
    double x(std::uint64_t i) const { return static_cast<double>(mans::detail::load_le<T>(raw.data() + i * sizeof(T))); }
    bool masked(std::uint64_t i) const {
        return !base.mask_bits.empty() && (base.mask_bits[static_cast<std::size_t>(i / 8)] >> (i % 8) & 1);
    }
    bool outlier(std::uint64_t i) const {
        return std::binary_search(base.outlier_index.begin(), base.outlier_index.end(), i);
    }

    // fn(l, code index, idx, pred) -> work value, for every predicted
    // point in GPU order: levels and passes in order, each pass's boxes,
    // their tiles and the points inside them in reverse.
    template <typename Fn>
    std::vector<double> sweep(Fn&& fn) {
        const dp::Grid& g = h.grid;
        std::vector<double> work(static_cast<std::size_t>(g.count), 0.0);
        work[0] = masked(0) ? 0.0 : x(0);  // the anchor
        for (unsigned l = 0; l < h.levels; ++l) {
            const dp::LevelMeta& m = h.level[l];
            const std::uint64_t u = dp::level_unit(h.levels, l);
            for (const dp::Pass& p : dp::level_passes(g, u, m.scheme))
                mans_test::for_pass_points(
                    g, p, 1, [&](const dp::Box& b, std::uint64_t k, const std::uint64_t* c, std::uint64_t idx) {
                        const dp::Kind kind = dp::point_kind(m.kinds, base.kind_bits[l], blocks, c);
                        const double pred =
                            dp::predict_point(work.data(), idx, c, g.n, g.stride, g.rank, b.axes, u, kind);
                        work[static_cast<std::size_t>(idx)] = fn(l, b.first_code + k, idx, pred);
                    });
        }
        return work;
    }

    // Points whose work value, rounded to T, differs from the retrieval's
    // (masked points and outliers take stored values there).
    std::uint64_t differences(const std::vector<double>& work, const T* retrieved, std::uint64_t* regular) const {
        std::uint64_t differ = 0;
        *regular = 0;
        for (std::uint64_t i = 1; i < h.grid.count; ++i) {
            if (masked(i) || outlier(i)) continue;
            ++*regular;
            const T mine = dp::to_element<T>(work[static_cast<std::size_t>(i)]);
            if (std::memcmp(&mine, retrieved + i, sizeof(T)) != 0) ++differ;
        }
        return differ;
    }

    const mans_test::Bytes& raw;
    dp::Header h;
    dp::BaseData base;
    dp::BlockGrid blocks;
};

// What the selection replays chose, over the whole test (so that it can
// tell that every kind of choice was compared).
struct SelectionSeen {
    unsigned levels = 0, per_block = 0, schemes[dp::kSchemeCount] = {};
    // Finest levels the CPU sweep predicts by runs of points (one kind for
    // the level, a leading axis longer than 1) whose rows hold more than
    // two of its 64-point batches.
    unsigned long_run_levels = 0;
};
SelectionSeen g_selection_seen;

// The open-loop choice of every level's scheme and kinds in GPU order
// (selection_hd.hpp): the sampled tiles of every pass under every scheme,
// boxes, tiles and points in reverse, each point on its own from box_point
// and the original values as a plain array (a GPU's device copy). The sums
// must choose the archive's scheme, kind mode and per-block kinds.
template <typename T>
void check_selection(const Replay<T>& rp) {
    const dp::Header& h = rp.h;
    const dp::Grid& g = h.grid;
    std::vector<T> values(static_cast<std::size_t>(g.count));
    std::memcpy(values.data(), rp.raw.data(), values.size() * sizeof(T));
    const std::uint8_t* mask = rp.base.mask_bits.empty() ? nullptr : rp.base.mask_bits.data();
    const std::uint64_t nb = rp.blocks.count;
    const unsigned schemes = g.rank == 1 ? 1 : dp::kSchemeCount;
    for (unsigned l = 0; l < h.levels; ++l) {
        INFO("selection of level " << l);
        const dp::LevelMeta& m = h.level[l];
        const std::uint64_t u = dp::level_unit(h.levels, l), stride = dp::selection_tile_stride(m.codes);
        const double inv = m.eb > 0 ? 1.0 / m.eb : 1.0;
        std::vector<std::uint64_t> sums(static_cast<std::size_t>(schemes * 2 * nb), 0);
        for (unsigned s = 0; s < schemes; ++s)
            for (const dp::Pass& p : dp::level_passes(g, u, static_cast<dp::Scheme>(s)))
                mans_test::for_pass_points(
                    g, p, stride, [&](const dp::Box& b, std::uint64_t, const std::uint64_t* c, std::uint64_t idx) {
                        std::uint64_t lin = 0, cub = 0;
                        if (!dp::selection_point_costs(values.data(), mask, g, b, c, idx, u, inv, &lin, &cub)) return;
                        const std::uint64_t blk = rp.blocks.block_of(c);
                        sums[static_cast<std::size_t>((2 * s) * nb + blk)] += lin;
                        sums[static_cast<std::size_t>((2 * s + 1) * nb + blk)] += cub;
                    });
        std::vector<std::uint8_t> bits(static_cast<std::size_t>((nb + 7) / 8), 0xA5);
        const dp::SelectionChoice choice = dp::choose_selection(sums.data(), nb, schemes, bits.data());
        CHECK(choice.scheme == m.scheme);
        CHECK(choice.mode == m.kinds);
        if (m.kinds == dp::KindMode::per_block) CHECK(bits == rp.base.kind_bits[l]);
        ++g_selection_seen.levels;
        g_selection_seen.per_block += m.kinds == dp::KindMode::per_block;
        bool leading_axis = false;
        for (unsigned a = 0; a + 1 < g.rank; ++a) leading_axis |= g.n[a] > 1;
        g_selection_seen.long_run_levels += l + 1 == h.levels && m.kinds != dp::KindMode::per_block && leading_axis &&
                                            g.n[g.rank - 1] > 2 * 2 * 64;
        ++g_selection_seen.schemes[static_cast<unsigned>(m.scheme)];
    }
}

// The mask and the fill detection in GPU order (mask_hd.hpp): ranges of
// `tile` points computed last to first, merged by tree_merge. They must
// give the archive's fill values, masked count, value range (bit for bit)
// and mask bits. caller_fills: the fill values the compression was given.
template <typename T>
void check_mask(const Replay<T>& rp, const std::vector<double>& caller_fills, std::uint64_t tile) {
    INFO("mask in tiles of " << tile << " points");
    const dp::Header& h = rp.h;
    const std::uint64_t n = h.grid.count, tiles = (n + tile - 1) / tile;
    std::vector<T> x(static_cast<std::size_t>(n));
    std::memcpy(x.data(), rp.raw.data(), x.size() * sizeof(T));
    const auto each_tile = [&](auto&& fn) {
        std::vector<decltype(fn(std::uint64_t{0}, std::uint64_t{0}))> part(static_cast<std::size_t>(tiles));
        for (std::uint64_t t = tiles; t-- > 0;) part[static_cast<std::size_t>(t)] = fn(t * tile, std::min(n, (t + 1) * tile));
        return mans_test::tree_merge(part);
    };
    mans::prism::CompressConfig cfg;  // what the fill choice reads of it
    cfg.fill_values = caller_fills;
    const std::vector<T> fills = dp::choose_fill_values<T>(
        cfg, n, [&] { return each_tile([&](std::uint64_t a, std::uint64_t b) { return dp::finite_range(x.data(), a, b); }); },
        [&](double cand) {
            return each_tile([&](std::uint64_t a, std::uint64_t b) { return dp::fill_evidence(x.data(), a, b, cand); });
        });
    REQUIRE(fills.size() == h.fill_values.size());
    for (std::size_t k = 0; k < fills.size(); ++k) CHECK(dp::same_value_bits(fills[k], static_cast<T>(h.fill_values[k])));
    std::vector<std::uint8_t> mask(static_cast<std::size_t>((n + 7) / 8), 0xA5);
    const dp::MaskPartial m = each_tile([&](std::uint64_t a, std::uint64_t b) {
        return dp::mask_range<T>(x.data(), n, fills.data(), static_cast<unsigned>(fills.size()), a / 8, (b + 7) / 8,
                                 mask.data());
    });
    CHECK(m.masked == h.masked_count);
    const double lo = m.masked == n ? 0 : m.kept.lo, hi = m.masked == n ? 0 : m.kept.hi;
    CHECK(std::memcmp(&lo, &h.value_min, sizeof lo) == 0);
    CHECK(std::memcmp(&hi, &h.value_max, sizeof hi) == 0);
    if (h.masked_count) CHECK(mask == rp.base.mask_bits);
}

// The header's error statistics from the work values of a sweep in GPU
// form (error_stats_hd.hpp): each block of kErrorStatPoints points on its
// own, blocks last to first, then merged in block order.
template <typename T>
void check_error_stats(const Replay<T>& rp, const std::vector<double>& work,
                       const std::vector<std::uint8_t>& outlier_bits) {
    const dp::Header& h = rp.h;
    const std::uint64_t n = h.grid.count, blocks = (n + dp::kErrorStatPoints - 1) / dp::kErrorStatPoints;
    std::vector<dp::ErrorStats> part(static_cast<std::size_t>(blocks));
    for (std::uint64_t k = blocks; k-- > 0;)
        for (std::uint64_t i = k * dp::kErrorStatPoints; i < std::min(n, (k + 1) * dp::kErrorStatPoints); ++i) {
            const bool exact = i == 0 || rp.masked(i) || dp::bitmap_bit(outlier_bits.data(), i);
            dp::add_point_error<T>(&part[static_cast<std::size_t>(k)], work[static_cast<std::size_t>(i)],
                                   exact ? 0.0 : rp.x(i), exact);
        }
    dp::ErrorStats all;
    for (const dp::ErrorStats& b : part) dp::merge_error_stats(&all, b);
    CHECK(all.full_max == h.full_max_error);
    CHECK(all.work_max == h.work_max_error);
    CHECK(all.abs_max == h.max_abs_work);
    const double counted = static_cast<double>(n - h.masked_count);
    CHECK(std::min(all.full_sq / counted, std::numeric_limits<double>::max()) == h.full_mse);
    CHECK(std::min(all.work_sq / counted, std::numeric_limits<double>::max()) == h.work_mse);
}

mans::prism::Retrieval retrieve(const mans_test::Bytes& archive, const mans::prism::Target& target,
                                std::vector<std::uint32_t>* planes) {
    mans::prism::Reader r;
    REQUIRE(mans::prism::Reader::open(mans::prism::memory_source(archive.data(), archive.size()), &r) == Errc::ok);
    mans::prism::Retrieval out;
    REQUIRE(r.retrieve(target, &out) == Errc::ok);
    *planes = out.stats().planes;
    return out;
}

template <typename T>
void replay(const mans_test::Bytes& raw, const mans_test::Bytes& archive, double archive_rel, bool special,
            const std::vector<double>& caller_fills) {
    Replay<T> rp(raw, archive);
    const dp::Header& h = rp.h;
    for (std::uint64_t tile : {std::uint64_t{8}, std::uint64_t{4096}}) check_mask(rp, caller_fills, tile);
    check_selection(rp);
    if (special) {  // the synthetic fields: masked points and outliers must be there
        CHECK(h.masked_count > 0);
        CHECK(h.outlier_count > 0);
    }
    std::vector<std::uint32_t> planes;

    // The encoder: its codes, per level in code order, and outliers.
    std::vector<std::vector<std::int32_t>> codes(h.levels);
    for (unsigned l = 0; l < h.levels; ++l) codes[l].assign(static_cast<std::size_t>(h.level[l].codes), 0);
    std::vector<std::uint64_t> outliers;
    const std::vector<double> work = rp.sweep([&](unsigned l, std::uint64_t code, std::uint64_t idx, double pred) {
        const dp::LevelMeta& m = h.level[l];
        const bool is_masked = rp.masked(idx);
        const dp::EncodedPoint e =
            dp::encode_point<T>(is_masked ? 0.0 : rp.x(idx), is_masked, pred, m.step, m.eb, h.abs_bound);
        if (e.outlier) outliers.push_back(idx);
        codes[l][static_cast<std::size_t>(code)] = e.code;
        return e.work;
    });
    std::sort(outliers.begin(), outliers.end());
    CHECK(outliers == rp.base.outlier_index);
    // The base's lists and the header's statistics as a GPU makes them.
    std::vector<std::uint8_t> outlier_bits(static_cast<std::size_t>((h.grid.count + 7) / 8), 0);
    for (std::uint64_t i : outliers) outlier_bits[static_cast<std::size_t>(i / 8)] |= static_cast<std::uint8_t>(1u << (i % 8));
    for (std::uint64_t range : {std::uint64_t{1}, std::uint64_t{5}, std::uint64_t{4096}}) {
        CHECK(mans_test::list_bits(outlier_bits, range) == rp.base.outlier_index);
        if (h.masked_count) {
            std::vector<std::uint8_t> values;
            for (std::uint64_t i : mans_test::list_bits(rp.base.mask_bits, range))
                values.insert(values.end(), rp.raw.begin() + i * sizeof(T), rp.raw.begin() + (i + 1) * sizeof(T));
            CHECK(values == rp.base.masked_values);
        }
    }
    check_error_stats(rp, work, outlier_bits);
    std::uint64_t regular = 0;
    const mans::prism::Retrieval full = retrieve(archive, mans::prism::Target::full(), &planes);
    CHECK(rp.differences(work, full.as<T>(), &regular) == 0);
    INFO(regular << " regular points, " << outliers.size() << " outliers");
    CHECK(regular > h.grid.count / 2);

    // The reader at coarser bounds: each code cut to the planes it reads.
    for (double rel : {1e-1, 1e-2, 1e-3}) {
        if (rel <= archive_rel) continue;
        INFO("retrieval at rel " << rel);
        const mans::prism::Retrieval coarse = retrieve(archive, mans::prism::Target::rel(rel), &planes);
        REQUIRE(planes.size() == h.levels);
        bool cut = false;
        for (unsigned l = 0; l < h.levels; ++l) cut |= planes[l] < h.level[l].planes;
        CHECK(cut);  // a retrieval that reads every plane would test nothing new
        const std::vector<double> back = rp.sweep([&](unsigned l, std::uint64_t code, std::uint64_t idx, double pred) {
            const dp::LevelMeta& m = h.level[l];
            std::uint32_t have = 0;  // the planes read of this level
            for (unsigned b = 0; b < planes[l]; ++b) have = dp::with_plane_bit(have, b, m.planes, h.coding, 1);
            const std::uint32_t word = dp::encode_code(codes[l][static_cast<std::size_t>(code)], h.coding) & have;
            const bool is_outlier = rp.outlier(idx);
            const double stored = is_outlier ? rp.x(idx) : 0.0;
            return dp::decode_point(is_outlier, stored, rp.masked(idx), pred, m.step,
                                    static_cast<double>(dp::decode_word(word, h.coding)));
        });
        CHECK(rp.differences(back, coarse.as<T>(), &regular) == 0);
    }
}

void compress_and_replay(const mans_test::Bytes& raw, mans::prism::FloatType type, unsigned rank,
                         const std::uint64_t* dims, double rel, mans::prism::PlaneCoding coding, bool fill) {
    mans::prism::CompressConfig cfg;
    cfg.type = type;
    cfg.rank = rank;
    for (unsigned a = 0; a < rank; ++a) cfg.dims[a] = dims[a];
    cfg.mode = mans::prism::ErrorMode::relative;
    cfg.error_bound = rel;
    cfg.planes = coding;
    if (fill) cfg.fill_values = {-1e10};
    mans_test::Bytes archive;
    REQUIRE(mans::prism::compress(raw.data(), raw.size(), cfg, &archive) == Errc::ok);
    if (type == mans::prism::FloatType::f32) replay<float>(raw, archive, rel, fill, cfg.fill_values);
    else replay<double>(raw, archive, rel, fill, cfg.fill_values);
}

// rows x len values, smooth along a row and across rows, a NaN at every
// nan_every-th point (0: none).
template <typename T>
mans_test::Bytes smooth_rows(std::uint64_t rows, std::uint64_t len, std::uint64_t nan_every) {
    mans_test::Bytes raw(rows * len * sizeof(T));
    for (std::uint64_t i = 0; i < rows * len; ++i) {
        T v = static_cast<T>(100 * std::sin(static_cast<double>(i % len) / 25) * std::cos(static_cast<double>(i / len) / 2));
        if (nan_every && i % nan_every == 5) v = std::numeric_limits<T>::quiet_NaN();
        std::memcpy(raw.data() + i * sizeof(T), &v, sizeof v);
    }
    return raw;
}

}  // namespace

TEST_CASE("PRISM in GPU order: tiles of each pass in any order give the CPU encoder's and reader's values",
          "[prism][pass_order][one_thread]") {
    using mans::prism::FloatType;
    const FieldCase cases[] = {
        {"echam5_t_17x96x192.f32", FloatType::f32, 3, {17, 96, 192, 0}, 1e-4},
        {"levitus_temp_20x180x360.f32", FloatType::f32, 3, {20, 180, 360, 0}, 1e-5},  // 44 % fill
        {"cosmo_hsurf_438x450.f32", FloatType::f32, 2, {438, 450, 0, 0}, 1e-3},
        {"sdo_aia171_128x128.f64", FloatType::f64, 2, {128, 128, 0, 0}, 1e-6},
    };
    for (auto coding : {mans::prism::PlaneCoding::negabinary, mans::prism::PlaneCoding::sign_magnitude}) {
        INFO("coding " << static_cast<int>(coding));
        {
            INFO("synthetic f32 23x31x37 with NaN, Inf, fill and spikes");
            const std::uint64_t dims[] = {23, 31, 37};
            compress_and_replay(mans_test::special_field<float>(dims, 3, 5e3), FloatType::f32, 3, dims, 1e-4, coding, true);
        }
        {
            INFO("synthetic f64 4x5x6x7 with NaN, Inf, fill and spikes");
            const std::uint64_t dims[] = {4, 5, 6, 7};
            compress_and_replay(mans_test::special_field<double>(dims, 4, 1e9), FloatType::f64, 4, dims, 1e-12, coding, true);
        }
        {
            // Rows of 300 and 517 points: the CPU sweep predicts a row in
            // several batches of 64 (sweep.hpp), whatever data is present.
            INFO("synthetic smooth f32 3x5x300 with NaN");
            const std::uint64_t dims[] = {3, 5, 300};
            compress_and_replay(smooth_rows<float>(3 * 5, 300, 211), FloatType::f32, 3, dims, 1e-5, coding, false);
        }
        {
            INFO("synthetic smooth f64 9x517");
            const std::uint64_t dims[] = {9, 517};
            compress_and_replay(smooth_rows<double>(9, 517, 0), FloatType::f64, 2, dims, 1e-6, coding, false);
        }
        {
            INFO("synthetic f32 40x50 whose smallest value is zero of both signs, -0 first, and a netCDF fill");
            const std::uint64_t dims[] = {40, 50};
            mans_test::Bytes raw(40 * 50 * sizeof(float));
            for (std::uint64_t i = 0; i < 40 * 50; ++i) {
                float v = i % 5 == 0 ? ((i / 5) % 2 ? 0.0f : -0.0f) : 1.0f + std::sin(static_cast<float>(i) / 7);
                if (i % 401 == 3) v = 9.96921e36f;
                std::memcpy(raw.data() + i * sizeof(float), &v, sizeof v);
            }
            compress_and_replay(raw, FloatType::f32, 2, dims, 1e-3, coding, false);
        }
        for (const FieldCase& f : cases) {
            INFO(f.file << " rel " << f.rel);
            const std::string path = mans_test::find_data_file(f.file);
            if (path.empty()) {
                WARN("skipped: " << f.file << " not found");
                continue;
            }
            compress_and_replay(mans_test::read_file(path), f.type, f.rank, f.dims, f.rel, coding, false);
        }
    }
    // The selection replays compared every kind of choice.
    const SelectionSeen& seen = g_selection_seen;
    INFO(seen.levels << " levels: " << seen.per_block << " per block; schemes " << seen.schemes[0] << ", "
                     << seen.schemes[1] << ", " << seen.schemes[2]);
    CHECK(seen.per_block > 0);
    CHECK(seen.per_block < seen.levels);
    CHECK(seen.long_run_levels > 0);
    for (unsigned k = 0; k < dp::kSchemeCount; ++k) CHECK(seen.schemes[k] > 0);
}

TEST_CASE("PRISM traverse: visit_box_runs and visit_box_range give box_point's points, in order, a row at a time",
          "[prism][pass_order]") {
    struct Point {
        std::uint64_t k, c[dp::kMaxRank], idx;
        bool operator==(const Point& o) const {
            return k == o.k && idx == o.idx && std::equal(c, c + dp::kMaxRank, o.c);
        }
    };
    const std::vector<std::vector<std::uint64_t>> shapes{{1},      {2},         {9},          {1, 1},      {5, 1},
                                                         {1, 7},   {6, 9},      {17, 4, 11},  {3, 1, 10},  {4, 5, 6, 7},
                                                         {2, 1, 3, 9}};
    unsigned runs_seen = 0, cut_runs = 0;
    for (const auto& dims : shapes) {
        const auto rank = static_cast<unsigned>(dims.size());
        const dp::Grid g = dp::Grid::make(rank, dims.data());
        for (std::uint64_t u : {1, 2, 4})
            for (unsigned s = 0; s < dp::kSchemeCount; ++s)
                for (const dp::Pass& p : dp::level_passes(g, u, static_cast<dp::Scheme>(s)))
                    for (const dp::Box& b : p.boxes) {
                        const std::uint64_t n = b.size();
                        if (n == 0) continue;
                        // The whole box, tiles of 7 points (cutting rows), and one point.
                        for (std::uint64_t tile : {n, std::uint64_t{7}, std::uint64_t{1}})
                            for (std::uint64_t first = 0; first < n; first += tile) {
                                const std::uint64_t last = std::min(n, first + tile);
                                INFO("rank " << rank << " u " << u << " scheme " << s << " points " << first << ".."
                                             << last);
                                std::vector<Point> want, got, ranged;
                                auto keep = [](std::vector<Point>* to) {
                                    return [to](std::uint64_t k, const std::uint64_t* c, std::uint64_t idx) {
                                        Point q{k, {c[0], c[1], c[2], c[3]}, idx};
                                        to->push_back(q);
                                    };
                                };
                                for (std::uint64_t k = first; k < last; ++k) {  // each on its own, as a GPU thread
                                    Point q{k, {}, 0};
                                    dp::box_point(g, b, k, q.c, &q.idx);
                                    want.push_back(q);
                                }
                                dp::visit_box_range(g, b, first, last, keep(&ranged));
                                dp::visit_box_runs(g, b, first, last,
                                                   [&](std::uint64_t k, const std::uint64_t* c, std::uint64_t idx,
                                                       std::uint64_t m) {
                                                       REQUIRE(m >= 1);
                                                       REQUIRE(m <= b.count[rank - 1]);
                                                       cut_runs += m < b.count[rank - 1];
                                                       ++runs_seen;
                                                       dp::for_run_points(g, b, k, c, idx, m, keep(&got));
                                                   });
                                REQUIRE(got == want);
                                REQUIRE(ranged == want);
                            }
                    }
    }
    CHECK(runs_seen > 1000);
    CHECK(cut_runs > 100);
}

namespace {

// Per-block selection sums of one level, scheme and pass over a field
// without masked points: point by point (selection_point_costs, as a GPU
// thread) and by the CPU encoder's runs (add_selection_run_costs) over
// tiles of `tile` points, which cut rows.
template <typename T>
void check_selection_runs(const std::vector<std::uint8_t>& raw, const dp::Grid& g, std::uint64_t u, double inv_eb,
                          std::uint64_t tile, unsigned* runs_seen) {
    const dp::BlockGrid blocks = dp::BlockGrid::make(g);
    const dp::UnalignedValues<T> data{raw.data()};
    for (unsigned s = 0; s < (g.rank == 1 ? 1u : dp::kSchemeCount); ++s)
        for (const dp::Pass& p : dp::level_passes(g, u, static_cast<dp::Scheme>(s)))
            for (const dp::Box& b : p.boxes) {
                const std::uint64_t n = b.size();
                std::vector<std::uint64_t> want(2 * blocks.count, 0), got(2 * blocks.count, 0);
                for (std::uint64_t k = 0; k < n; ++k) {
                    std::uint64_t c[dp::kMaxRank] = {}, idx = 0, lin = 0, cub = 0;
                    dp::box_point(g, b, k, c, &idx);
                    REQUIRE(dp::selection_point_costs(data, nullptr, g, b, c, idx, u, inv_eb, &lin, &cub));
                    want[blocks.block_of(c)] += lin;
                    want[blocks.count + blocks.block_of(c)] += cub;
                }
                for (std::uint64_t first = 0; first < n; first += tile)
                    dp::visit_box_runs(g, b, first, std::min(n, first + tile),
                                       [&](std::uint64_t, const std::uint64_t* c, std::uint64_t idx, std::uint64_t m) {
                                           dp::add_selection_run_costs(data, g, b, blocks, c, idx, m, u, inv_eb,
                                                                       got.data(), got.data() + blocks.count);
                                           ++*runs_seen;
                                       });
                INFO("scheme " << s << " u " << u << " tile " << tile << " box of " << n << " points");
                REQUIRE(got == want);
            }
}

}  // namespace

TEST_CASE("PRISM selection: the CPU encoder's run costs equal selection_point_costs point by point",
          "[prism][pass_order]") {
    const std::vector<std::vector<std::uint64_t>> shapes{{9},       {517},     {6, 9},    {9, 517},     {3, 5, 300},
                                                         {17, 4, 11}, {3, 1, 10}, {4, 5, 6, 7}, {2, 1, 3, 9}, {7, 70, 140}};
    unsigned runs = 0;
    for (const auto& dims : shapes) {
        const auto rank = static_cast<unsigned>(dims.size());
        const dp::Grid g = dp::Grid::make(rank, dims.data());
        INFO("rank " << rank << " last extent " << dims.back());
        // NaN, +-Inf, spikes and fill values (not masked here: every point counts).
        const auto f32 = mans_test::special_field<float>(dims.data(), rank, 5e3);
        const auto f64 = mans_test::special_field<double>(dims.data(), rank, 1e9);
        for (std::uint64_t u : {1, 2, 4, 8})
            for (std::uint64_t tile : {std::uint64_t{4096}, std::uint64_t{7}}) {
                check_selection_runs<float>(f32, g, u, 1.0 / 0.37, tile, &runs);
                check_selection_runs<double>(f64, g, u, 1e6, tile, &runs);
            }
    }
    const std::string path = mans_test::find_data_file("echam5_t_17x96x192.f32");
    if (path.empty()) {
        WARN("skipped the real field: echam5_t_17x96x192.f32 not found");
    } else {
        const std::uint64_t dims[] = {17, 96, 192};
        const dp::Grid g = dp::Grid::make(3, dims);
        const mans_test::Bytes raw = mans_test::read_file(path);
        for (std::uint64_t u : {1, 2}) check_selection_runs<float>(raw, g, u, 1.0 / 0.003, 4096, &runs);
    }
    CHECK(runs > 1000);
}

TEST_CASE("PRISM runs: add_run_stencils gives interp_1d's doubles bit for bit", "[prism][pass_order]") {
    // One axis of n values (stride s between them), NaN and +-Inf among
    // smooth ones; runs of m points from every start c0 (odd multiples of u
    // along the axis, or any c0 with dc = 0), for both kinds.
    std::uint64_t runs = 0, edge_points = 0;
    for (std::uint64_t s : {1, 3})
        for (std::uint64_t n : {1, 2, 5, 8, 13, 40, 131}) {
            std::vector<double> v(n * s);
            std::vector<float> f(n * s);
            for (std::uint64_t i = 0; i < v.size(); ++i) {
                v[i] = i % 17 == 9 ? std::nan("") : i % 23 == 4 ? (i & 1 ? HUGE_VAL : -HUGE_VAL)
                                                               : 1e3 * std::sin(0.37 * static_cast<double>(i)) + 1e-7 * i;
                f[i] = static_cast<float>(v[i]);
            }
            const dp::UnalignedValues<float> fv{reinterpret_cast<const std::uint8_t*>(f.data())};
            for (std::uint64_t u : {1, 2, 4, 8})
                for (std::uint64_t dc : {std::uint64_t{0}, 2 * u, 4 * u})
                    for (std::uint64_t c0 = u; c0 < n; c0 += 2 * u)
                        for (std::uint64_t m : {1, 2, 7, 64}) {
                            if (dc && c0 + (m - 1) * dc >= n) continue;  // the run stays on the axis
                            const std::uint64_t di = dc * s;
                            for (dp::Kind kind : {dp::Kind::linear, dp::Kind::cubic}) {
                                std::vector<double> want(m, 0.25), got(m, 0.25), want_f(m, 0.25), got_f(m, 0.25);
                                for (std::uint64_t i = 0; i < m; ++i) {
                                    const std::uint64_t c = c0 + i * dc;
                                    want[i] += dp::interp_1d(v.data() + c0 * s + i * di, c, u, n, s, kind);
                                    want_f[i] += dp::interp_1d(fv + (c0 * s + i * di), c, u, n, s, kind);
                                    edge_points += !dp::interp_interior(c, u, n, kind);
                                }
                                dp::add_run_stencils(v.data() + c0 * s, di, c0, dc, m, u, n, s, kind, got.data());
                                dp::add_run_stencils(fv + c0 * s, di, c0, dc, m, u, n, s, kind, got_f.data());
                                INFO("n " << n << " s " << s << " u " << u << " dc " << dc << " c0 " << c0 << " m " << m
                                          << " cubic " << (kind == dp::Kind::cubic));
                                REQUIRE(std::memcmp(got.data(), want.data(), m * sizeof(double)) == 0);
                                REQUIRE(std::memcmp(got_f.data(), want_f.data(), m * sizeof(double)) == 0);
                                ++runs;
                            }
                        }
        }
    CHECK(runs > 1000);
    CHECK(edge_points > 100);
}
