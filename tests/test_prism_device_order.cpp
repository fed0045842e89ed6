// test_prism_device_order.cpp - a whole PRISM archive made from the MANS_HD
// steps in the order and form a GPU encoder runs them, which must be the
// CPU encoder's archive byte for byte. It is the composition a GPU module
// has to implement, written out on the CPU:
//
//   mask and fill detection   mask_hd.hpp, ranges last to first, tree merge
//   header fields, bounds     encode_plan.hpp (host arithmetic)
//   per level:
//     scheme and kinds        selection_hd.hpp, sampled tiles in reverse
//     prediction, codes       every pass on the full grid, boxes, tiles and
//                             points in reverse (point_math.hpp)
//     bitplane chunks         chunk_coding_hd.hpp + stream_batch_hd.hpp +
//                             the device chunk encoder (code_batch)
//     the level's bytes       level_assembly_hd.hpp (assemble_level)
//   error statistics          error_stats_hd.hpp, blocks last to first
//   base lists                core/bitmap_hd.hpp, counted ranges + scan
//   base and header bytes     encode_base, write_archive (host)
#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "core/bitmap_hd.hpp"
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

namespace d = mans::detail;
namespace dp = mans::detail::prism;
using mans::Errc;

namespace {

// fn(first, last) for the ranges of `range` points of [0, n), last first,
// tree-merged.
template <typename Fn>
auto over_ranges(std::uint64_t n, std::uint64_t range, Fn&& fn) {
    const std::uint64_t ranges = (n + range - 1) / range;
    std::vector<decltype(fn(std::uint64_t{0}, std::uint64_t{0}))> part(static_cast<std::size_t>(ranges));
    for (std::uint64_t r = ranges; r-- > 0;) part[static_cast<std::size_t>(r)] = fn(r * range, std::min(n, (r + 1) * range));
    return mans_test::tree_merge(part);
}

void set_bit(std::vector<std::uint8_t>* bits, std::uint64_t i) {
    (*bits)[static_cast<std::size_t>(i / 8)] |= static_cast<std::uint8_t>(1u << (i % 8));
}

template <typename T>
mans_test::Bytes device_order_compress(const mans_test::Bytes& raw, const mans::prism::CompressConfig& cfg,
                                       mans_test::TeamPlay play) {
    const dp::Grid g = dp::Grid::make(cfg.rank, cfg.dims);
    const std::uint64_t n = g.count;
    std::vector<T> x(static_cast<std::size_t>(n));  // the device copy of the values
    std::memcpy(x.data(), raw.data(), raw.size());
    dp::Header h;
    dp::start_header(&h, g, cfg);

    // Mask and fill detection.
    std::vector<T> fills;
    for (double f : cfg.fill_values) fills.push_back(static_cast<T>(f));
    if (cfg.detect_fill && n) {
        const dp::ValueRange finite =
            over_ranges(n, 4096, [&](std::uint64_t a, std::uint64_t b) { return dp::finite_range(x.data(), a, b); });
        for (double cand : {finite.lo, finite.hi}) {
            if (!dp::fill_candidate(cand)) continue;
            const dp::FillEvidence e = over_ranges(
                n, 4096, [&](std::uint64_t a, std::uint64_t b) { return dp::fill_evidence(x.data(), a, b, cand); });
            const T c = static_cast<T>(cand);
            if (dp::accept_fill(cand, e) &&
                std::none_of(fills.begin(), fills.end(), [&](T f) { return dp::same_value_bits(f, c); }))
                fills.push_back(c);
        }
    }
    std::vector<std::uint8_t> mask(static_cast<std::size_t>((n + 7) / 8), 0xA5);
    const dp::MaskPartial masked = over_ranges(n, 4096, [&](std::uint64_t a, std::uint64_t b) {
        return dp::mask_range<T>(x.data(), n, fills.data(), static_cast<unsigned>(fills.size()), a / 8, (b + 7) / 8,
                                 mask.data());
    });
    double cast_slack = 0;
    REQUIRE(dp::set_value_range(&h, cfg, masked, std::vector<double>(fills.begin(), fills.end()), &cast_slack) ==
            Errc::ok);
    const std::uint8_t* mask_bits = masked.masked ? mask.data() : nullptr;
    const auto is_masked = [&](std::uint64_t i) { return dp::bitmap_bit(mask_bits, i); };

    // The levels, coarse to fine, on the full grid.
    const dp::BlockGrid blocks = dp::BlockGrid::make(g);
    const unsigned schemes = g.rank == 1 ? 1 : dp::kSchemeCount;
    std::vector<double> work(static_cast<std::size_t>(n), 0.0);
    if (n) work[0] = is_masked(0) ? 0.0 : static_cast<double>(x[0]);  // the anchor
    std::vector<std::uint8_t> outliers(static_cast<std::size_t>((n + 7) / 8), 0);
    dp::BaseData base;
    base.kind_bits.resize(h.levels);
    std::vector<std::vector<std::uint8_t>> level_bytes;
    for (unsigned l = 0; l < h.levels; ++l) {
        dp::plan_level(&h, cfg, l, cast_slack);
        dp::LevelMeta& m = h.level[l];
        const std::uint64_t u = dp::level_unit(h.levels, l);
        // Scheme and kinds.
        std::vector<std::uint64_t> sums(static_cast<std::size_t>(schemes * 2 * blocks.count), 0);
        const double inv = m.eb > 0 ? 1.0 / m.eb : 1.0;
        for (unsigned s = 0; s < schemes; ++s)
            for (const dp::Pass& p : dp::level_passes(g, u, static_cast<dp::Scheme>(s)))
                mans_test::for_pass_points(g, p, dp::selection_tile_stride(m.codes),
                                [&](const dp::Box& b, std::uint64_t, const std::uint64_t* c, std::uint64_t idx) {
                                    std::uint64_t lin = 0, cub = 0;
                                    if (!dp::selection_point_costs(x.data(), mask_bits, g, b, c, idx, u, inv, &lin, &cub))
                                        return;
                                    const std::uint64_t blk = blocks.block_of(c);
                                    sums[static_cast<std::size_t>(2 * s * blocks.count + blk)] += lin;
                                    sums[static_cast<std::size_t>((2 * s + 1) * blocks.count + blk)] += cub;
                                });
        std::vector<std::uint8_t> kind_bits(static_cast<std::size_t>((blocks.count + 7) / 8), 0);
        const dp::SelectionChoice choice = dp::choose_selection(sums.data(), blocks.count, schemes, kind_bits.data());
        m.scheme = choice.scheme;
        m.kinds = choice.mode;
        if (m.kinds == dp::KindMode::per_block) base.kind_bits[l] = kind_bits;
        // Prediction and quantization, closed loop on the work values.
        std::vector<std::int32_t> codes(static_cast<std::size_t>(m.codes), 0);
        for (const dp::Pass& p : dp::level_passes(g, u, m.scheme))
            mans_test::for_pass_points(g, p, 1, [&](const dp::Box& b, std::uint64_t k, const std::uint64_t* c, std::uint64_t idx) {
                const dp::Kind kind = dp::point_kind(m.kinds, base.kind_bits[l], blocks, c);
                const double pred = dp::predict_point(work.data(), idx, c, g.n, g.stride, g.rank, b.axes, u, kind);
                const bool mk = is_masked(idx);
                const dp::EncodedPoint e =
                    dp::encode_point<T>(mk ? 0.0 : static_cast<double>(x[idx]), mk, pred, m.step, m.eb, h.abs_bound);
                codes[static_cast<std::size_t>(b.first_code + k)] = e.code;
                if (e.outlier) set_bit(&outliers, idx);
                work[static_cast<std::size_t>(idx)] = e.work;
            });
        // The level's chunks and its part of the archive.
        mans_test::CodedBatch batch;
        mans_test::code_batch(codes, h.chunk_codes, h.coding, play, 5, true, &batch);
        const mans_test::AssembledLevel a = mans_test::assemble_level(batch.chunks, h.coding, 3);
        m.planes = static_cast<std::uint8_t>(a.planes);
        m.max_err = a.max_err;
        m.sum_sq = a.sum_sq;
        for (std::size_t s = 0; s + 1 < a.offsets.size(); ++s)
            h.segments.push_back(dp::Segment{static_cast<std::uint32_t>(a.offsets[s + 1] - a.offsets[s])});
        h.plane_checksum.insert(h.plane_checksum.end(), a.checksums.begin(), a.checksums.end());
        level_bytes.push_back(a.bytes);
    }

    // Error statistics of the full reconstruction.
    const std::uint64_t stat_blocks = (n + dp::kErrorStatPoints - 1) / dp::kErrorStatPoints;
    std::vector<dp::ErrorStats> part(static_cast<std::size_t>(stat_blocks));
    for (std::uint64_t k = stat_blocks; k-- > 0;)
        for (std::uint64_t i = k * dp::kErrorStatPoints; i < std::min(n, (k + 1) * dp::kErrorStatPoints); ++i) {
            const bool exact = i == 0 || is_masked(i) || dp::bitmap_bit(outliers.data(), i);
            dp::add_point_error<T>(&part[static_cast<std::size_t>(k)], work[static_cast<std::size_t>(i)],
                                   exact ? 0.0 : static_cast<double>(x[static_cast<std::size_t>(i)]), exact);
        }
    dp::ErrorStats all;
    for (const dp::ErrorStats& b : part) dp::merge_error_stats(&all, b);
    dp::finish_error_stats(&h, all);

    // The base: kinds, mask and masked values, outliers, anchor.
    const auto values_at = [&](const std::vector<std::uint64_t>& index) {
        std::vector<std::uint8_t> v;
        for (std::uint64_t i : index) v.insert(v.end(), raw.begin() + i * sizeof(T), raw.begin() + (i + 1) * sizeof(T));
        return v;
    };
    if (h.masked_count) {
        base.mask_bits = mask;
        base.masked_values = values_at(mans_test::list_bits(mask, 7));
    }
    base.outlier_index = mans_test::list_bits(outliers, 7);
    base.outlier_values = values_at(base.outlier_index);
    h.outlier_count = base.outlier_index.size();
    if (n && !is_masked(0)) base.anchor_value.assign(raw.begin(), raw.begin() + sizeof(T));
    mans_test::Bytes archive;
    REQUIRE(dp::write_archive(&h, dp::encode_base(base, sizeof(T)), &level_bytes, &archive) == Errc::ok);
    return archive;
}

struct Case {
    std::string what;
    mans_test::Bytes raw;
    mans::prism::FloatType type;
    unsigned rank;
    std::uint64_t dims[4];
    double rel;
    std::vector<double> fills;
};

void check_case(const Case& k, mans::prism::PlaneCoding coding, mans_test::TeamPlay play) {
    INFO(k.what << " rel " << k.rel << ", coding " << static_cast<int>(coding) << ", team " << play.size);
    mans::prism::CompressConfig cfg;
    cfg.type = k.type;
    cfg.rank = k.rank;
    for (unsigned a = 0; a < k.rank; ++a) cfg.dims[a] = k.dims[a];
    cfg.mode = mans::prism::ErrorMode::relative;
    cfg.error_bound = k.rel;
    cfg.planes = coding;
    cfg.fill_values = k.fills;
    cfg.threads = 2;
    mans_test::Bytes cpu;
    REQUIRE(mans::prism::compress(k.raw.data(), k.raw.size(), cfg, &cpu) == Errc::ok);
    const mans_test::Bytes gpu = k.type == mans::prism::FloatType::f32 ? device_order_compress<float>(k.raw, cfg, play)
                                                                       : device_order_compress<double>(k.raw, cfg, play);
    REQUIRE(gpu.size() == cpu.size());
    std::size_t first_diff = 0;
    while (first_diff < cpu.size() && cpu[first_diff] == gpu[first_diff]) ++first_diff;
    INFO("first differing byte " << first_diff << " of " << cpu.size());
    CHECK(gpu == cpu);
}

}  // namespace

TEST_CASE("PRISM archives from the HD steps in GPU order equal the CPU encoder's", "[prism][device_order][one_thread]") {
    using mans::prism::FloatType;
    std::vector<Case> cases;
    {
        const std::uint64_t d3[] = {23, 31, 37}, d4[] = {4, 5, 6, 7};
        cases.push_back({"synthetic f32 23x31x37 with NaN, Inf, fill and spikes",
                         mans_test::special_field<float>(d3, 3, 5e3), FloatType::f32, 3, {23, 31, 37, 0}, 1e-4, {-1e10}});
        cases.push_back({"synthetic f64 4x5x6x7 with NaN, Inf, fill and spikes",
                         mans_test::special_field<double>(d4, 4, 1e9), FloatType::f64, 4, {4, 5, 6, 7}, 1e-12, {-1e10}});
        const std::uint64_t d1[] = {30000};
        cases.push_back({"synthetic f32 1D of 30000", mans_test::special_field<float>(d1, 1, 50), FloatType::f32, 1,
                         {30000, 0, 0, 0}, 1e-3, {}});
    }
    const struct {
        const char* file;
        FloatType type;
        unsigned rank;
        std::uint64_t dims[4];
        double rel;
    } fields[] = {
        {"echam5_t_17x96x192.f32", FloatType::f32, 3, {17, 96, 192, 0}, 1e-4},
        {"levitus_temp_20x180x360.f32", FloatType::f32, 3, {20, 180, 360, 0}, 1e-5},  // 44 % fill, detected
        {"cosmo_hsurf_438x450.f32", FloatType::f32, 2, {438, 450, 0, 0}, 1e-3},
        {"stageiv_precip_23x118x87.f32", FloatType::f32, 3, {23, 118, 87, 0}, 1e-2},
        {"sdo_aia171_128x128.f64", FloatType::f64, 2, {128, 128, 0, 0}, 1e-6},
    };
    for (const auto& f : fields) {
        const std::string path = mans_test::find_data_file(f.file);
        if (path.empty()) {
            WARN("skipped: " << f.file << " not found");
            continue;
        }
        cases.push_back({f.file, mans_test::read_file(path), f.type, f.rank, {f.dims[0], f.dims[1], f.dims[2], f.dims[3]},
                         f.rel, {}});
    }
    CHECK(cases.size() >= 8);
    unsigned k = 0;
    for (const Case& c : cases)
        for (auto coding : {mans::prism::PlaneCoding::negabinary, mans::prism::PlaneCoding::sign_magnitude})
            check_case(c, coding, ++k % 3 == 0 ? mans_test::TeamPlay{32, true} : mans_test::TeamPlay{1, false});
}
