// test_prism_pass_order.cpp - PRISM's prediction and quantization in the
// order a GPU runs them: every level on the full grid (no half grid, no row
// ring), each pass's boxes in tiles of kTilePoints points, tiles and the
// points inside them in reverse order, each point on its own from
// box_point, predict_point and encode_point (the MANS_HD functions a tile
// kernel runs: tests/gpu/hd_compile_check.cu). The result must be the CPU
// encoder's: the same outliers as its archive's base, and, at every
// regular point, the work value whose rounding a full retrieval returns.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

#include "core/byte_io.hpp"
#include "mans/prism.hpp"
#include "prism/archive.hpp"
#include "prism/base.hpp"
#include "prism/point_math.hpp"
#include "prism/traverse.hpp"
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

// Replays the encoder on the full grid in GPU order; counts the points
// whose work value (rounded to T) differs from the retrieval and the
// outliers that differ from the archive's.
template <typename T>
void replay(const mans_test::Bytes& raw, const mans_test::Bytes& archive, const T* retrieved) {
    dp::Header h;
    REQUIRE(dp::parse_header(archive.data(), static_cast<std::size_t>(archive.size()), archive.size(), &h) == Errc::ok);
    dp::BaseData base;
    REQUIRE(dp::decode_base(archive.data() + h.header_bytes, static_cast<std::size_t>(h.base_bytes), h, &base) ==
            Errc::ok);
    const dp::Grid& g = h.grid;
    const dp::BlockGrid blocks = dp::BlockGrid::make(g);
    auto x = [&](std::uint64_t i) { return static_cast<double>(mans::detail::load_le<T>(raw.data() + i * sizeof(T))); };
    auto masked = [&](std::uint64_t i) {
        return !base.mask_bits.empty() && (base.mask_bits[static_cast<std::size_t>(i / 8)] >> (i % 8) & 1);
    };
    std::vector<double> work(static_cast<std::size_t>(g.count), 0.0);
    work[0] = masked(0) ? 0.0 : x(0);
    std::vector<std::uint64_t> outliers;
    std::uint64_t tiles_run = 0;
    for (unsigned l = 0; l < h.levels; ++l) {
        const dp::LevelMeta& m = h.level[l];
        const std::uint64_t u = dp::level_unit(h.levels, l);
        for (const dp::Pass& p : dp::level_passes(g, u, m.scheme))
            for (const dp::Box& b : p.boxes) {
                const std::uint64_t n = b.size(), tiles = (n + dp::kTilePoints - 1) / dp::kTilePoints;
                for (std::uint64_t t = tiles; t-- > 0;) {  // any order: points of a pass never read each other
                    ++tiles_run;
                    const std::uint64_t last = std::min(n, (t + 1) * dp::kTilePoints);
                    for (std::uint64_t k = last; k-- > t * dp::kTilePoints;) {
                        std::uint64_t c[dp::kMaxRank], idx = 0;
                        dp::box_point(g, b, k, c, &idx);
                        const dp::Kind kind = dp::point_kind(m.kinds, base.kind_bits[l], blocks, c);
                        const double pred = dp::predict_point(work.data(), idx, c, g.n, g.stride, g.rank, b.axes, u, kind);
                        const bool is_masked = masked(idx);
                        const dp::EncodedPoint e =
                            dp::encode_point<T>(is_masked ? 0.0 : x(idx), is_masked, pred, m.step, m.eb, h.abs_bound);
                        if (e.outlier) outliers.push_back(idx);
                        work[static_cast<std::size_t>(idx)] = e.work;
                    }
                }
            }
    }
    std::sort(outliers.begin(), outliers.end());
    CHECK(outliers == base.outlier_index);
    std::uint64_t differ = 0, regular = 0;
    for (std::uint64_t i = 1; i < g.count; ++i) {
        if (masked(i) || std::binary_search(outliers.begin(), outliers.end(), i)) continue;
        ++regular;
        const T mine = dp::to_element<T>(work[static_cast<std::size_t>(i)]);
        if (std::memcmp(&mine, retrieved + i, sizeof(T)) != 0) ++differ;
    }
    INFO(regular << " regular points, " << outliers.size() << " outliers, " << tiles_run << " tiles");
    CHECK(regular > g.count / 2);
    CHECK(differ == 0);
}

}  // namespace

TEST_CASE("PRISM in GPU order: tiles of each pass in any order give the CPU encoder's values", "[prism][pass_order]") {
    using mans::prism::FloatType;
    const FieldCase cases[] = {
        {"echam5_t_17x96x192.f32", FloatType::f32, 3, {17, 96, 192, 0}, 1e-4},
        {"levitus_temp_20x180x360.f32", FloatType::f32, 3, {20, 180, 360, 0}, 1e-5},  // 44 % fill
        {"cosmo_hsurf_438x450.f32", FloatType::f32, 2, {438, 450, 0, 0}, 1e-3},
        {"sdo_aia171_128x128.f64", FloatType::f64, 2, {128, 128, 0, 0}, 1e-6},
    };
    for (const FieldCase& f : cases)
        for (auto coding : {mans::prism::PlaneCoding::negabinary, mans::prism::PlaneCoding::sign_magnitude}) {
            INFO(f.file << " rel " << f.rel << " coding " << static_cast<int>(coding));
            const std::string path = mans_test::find_data_file(f.file);
            if (path.empty()) {
                WARN("skipped: " << f.file << " not found");
                continue;
            }
            const mans_test::Bytes raw = mans_test::read_file(path);
            mans::prism::CompressConfig cfg;
            cfg.type = f.type;
            cfg.rank = f.rank;
            for (unsigned a = 0; a < f.rank; ++a) cfg.dims[a] = f.dims[a];
            cfg.mode = mans::prism::ErrorMode::relative;
            cfg.error_bound = f.rel;
            cfg.planes = coding;
            mans_test::Bytes archive;
            REQUIRE(mans::prism::compress(raw.data(), raw.size(), cfg, &archive) == Errc::ok);
            mans::prism::Reader r;
            REQUIRE(mans::prism::Reader::open(mans::prism::memory_source(archive.data(), archive.size()), &r) == Errc::ok);
            mans::prism::Retrieval full;
            REQUIRE(r.retrieve(mans::prism::Target::full(), &full) == Errc::ok);
            if (f.type == FloatType::f32) replay<float>(raw, archive, full.as<float>());
            else replay<double>(raw, archive, full.as<double>());
        }
}
