// test_prism_level_assembly_hd.cpp - a level's part of the archive from
// its coded chunks (prism/level_assembly_hd.hpp), the steps a GPU runs:
// the plane count, the segment offsets by the tiled scan (core/scan_hd.hpp),
// the segments placed and the planes' checksums by teams of 32 (LoopTeams,
// reversed), the truncation tables. They must give what the CPU's
// LevelEncoder::finish gives for the same codes: plane count, tables,
// segment sizes, bytes and checksums, on levels of codes from real fields
// (chunks of different plane counts, so empty planes above a chunk's own)
// and synthetic levels, in both codings.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "prism/archive.hpp"
#include "prism/level_assembly_hd.hpp"
#include "prism/level_codes.hpp"
#include "prism/plane_coding.hpp"
#include "prism/truncation_stats_hd.hpp"
#include "prism_hd_steps.hpp"
#include "test_support.hpp"

namespace d = mans::detail;
namespace dp = mans::detail::prism;

namespace {

// One chunk as a chunk coder leaves it, and the bytes it points to.
struct HeldChunk {
    std::vector<std::vector<std::uint8_t>> seg;
    std::vector<std::uint8_t> after_zero_plane;
};

// The chunks as the CPU's chunk coder leaves them (level_codes.cpp's
// code_chunk), assembled by the HD steps.
mans_test::AssembledLevel gpu_level(const std::vector<std::int32_t>& q, std::uint32_t chunk_codes, dp::Coding c,
                                    std::uint64_t tile) {
    const std::uint64_t n = q.size(), nchunks = (n + chunk_codes - 1) / chunk_codes;
    std::vector<HeldChunk> held(nchunks);
    std::vector<dp::CodedChunk> coded(nchunks);
    for (std::uint64_t ch = 0; ch < nchunks; ++ch) {
        const std::uint64_t first = ch * chunk_codes, len = std::min<std::uint64_t>(chunk_codes, n - first);
        std::vector<std::uint32_t> words(len);
        std::uint32_t any = 0;
        for (std::uint64_t j = 0; j < len; ++j) any |= words[j] = dp::encode_code(q[first + j], c);
        dp::CodedChunk& k = coded[ch];
        k.planes = dp::planes_for(any, c);
        dp::TruncationPartial partial[dp::kMaxPlanes + 1], stats[dp::kMaxPlanes + 1];
        dp::truncation_stats(d::SoloTeam{}, q.data() + first, words.data(), len, k.planes, c, partial, stats);
        for (unsigned dd = 0; dd <= k.planes; ++dd)
            k.max_err[dd] = stats[dd].max_err, k.sum_sq[dd] = stats[dd].sum_sq.to_double();
        const bool two_forms = c == dp::Coding::sign_magnitude && k.planes >= 2;
        dp::encode_plane_chunks(words.data(), len, k.planes, c, &held[ch].seg,
                                two_forms ? &held[ch].after_zero_plane : nullptr);
        for (unsigned b = 0; b < k.planes; ++b)
            k.seg[b] = held[ch].seg[b].data(), k.seg_bytes[b] = static_cast<std::uint32_t>(held[ch].seg[b].size());
        k.after_zero_plane = held[ch].after_zero_plane.data();
        k.after_zero_plane_bytes = static_cast<std::uint32_t>(held[ch].after_zero_plane.size());
    }
    return mans_test::assemble_level(coded, c, tile);
}

void check_level(const std::vector<std::int32_t>& q, std::uint32_t chunk_codes, dp::Coding c, std::uint64_t tile,
                 unsigned* levels_with_gaps) {
    const mans_test::CpuLevel cpu = mans_test::cpu_level(q, chunk_codes, c);
    mans_test::check_same_level(gpu_level(q, chunk_codes, c, tile), cpu);
    // Count levels whose chunks have different plane counts (a gap above some).
    const std::uint64_t nchunks = (q.size() + chunk_codes - 1) / chunk_codes;
    bool gap = false;
    for (std::uint64_t ch = 0; ch < nchunks && !gap; ++ch) {
        std::uint32_t any = 0;
        for (std::uint64_t j = ch * chunk_codes; j < std::min<std::uint64_t>(q.size(), (ch + 1) * chunk_codes); ++j)
            any |= dp::encode_code(q[j], c);
        gap = dp::planes_for(any, c) != cpu.meta.planes;
    }
    *levels_with_gaps += gap;
}

}  // namespace

TEST_CASE("level assembly: chunk_segment_for_plane and dropped_digits follow FORMAT.md 4.5", "[prism][level_hd]") {
    // The reading of the level's planes written out case by case: negabinary
    // chunks take the level's last planes; sign-magnitude keeps the sign
    // plane first, then the magnitude planes last, the first of them in its
    // after-zero-plane form when planes are empty above it.
    for (dp::Coding c : {dp::Coding::negabinary, dp::Coding::sign_magnitude})
        for (unsigned P = 0; P <= dp::kMaxPlanes; ++P)
            for (unsigned pc = 0; pc <= P; ++pc)
                for (unsigned b = 0; b < P; ++b) {
                    int expect = dp::kNoSegment;
                    const unsigned gap = P - pc;
                    if (pc > 0) {
                        if (c == dp::Coding::negabinary) {
                            if (b >= gap) expect = static_cast<int>(b - gap);
                        } else if (b == 0) {
                            expect = 0;
                        } else if (b == gap + 1 && gap > 0) {
                            expect = dp::kAfterZeroPlaneSegment;
                        } else if (b > gap) {
                            expect = static_cast<int>(b - gap);
                        }
                    }
                    INFO("coding " << static_cast<int>(c) << ", P " << P << ", P_c " << pc << ", b " << b);
                    REQUIRE(dp::chunk_segment_for_plane(c, P, pc, b) == expect);
                    REQUIRE(dp::dropped_digits(P, b, pc) == std::min(P - b, pc));
                }
}

TEST_CASE("level assembly: chunk_segment_for_plane and dropped_digits on worked examples", "[prism][level_hd]") {
    // By hand from FORMAT.md 4.5: a chunk of 3 planes in a level of 5.
    // Negabinary: the chunk's digits are the level's lowest, planes 2-4.
    const int none = dp::kNoSegment, after_zero = dp::kAfterZeroPlaneSegment;
    const int nega[] = {none, none, 0, 1, 2};
    // Sign-magnitude: the sign plane first; its two magnitude planes are
    // the level's last two, the first of them below an empty plane.
    const int sm[] = {0, none, none, after_zero, 2};
    for (unsigned b = 0; b < 5; ++b) {
        CHECK(dp::chunk_segment_for_plane(dp::Coding::negabinary, 5, 3, b) == nega[b]);
        CHECK(dp::chunk_segment_for_plane(dp::Coding::sign_magnitude, 5, 3, b) == sm[b]);
        CHECK(dp::chunk_segment_for_plane(dp::Coding::sign_magnitude, 5, 5, b) == static_cast<int>(b));  // no gap
        CHECK(dp::chunk_segment_for_plane(dp::Coding::negabinary, 5, 0, b) == none);  // an all-zero chunk
    }
    // One magnitude plane below one empty plane.
    CHECK(dp::chunk_segment_for_plane(dp::Coding::sign_magnitude, 3, 2, 1) == none);
    CHECK(dp::chunk_segment_for_plane(dp::Coding::sign_magnitude, 3, 2, 2) == after_zero);
    // Digits dropped keeping `kept` of 5 level planes, chunk of 3: none when
    // all are kept, then one per plane left out, at most the chunk's 3.
    const unsigned dropped[] = {3, 3, 3, 2, 1, 0};
    for (unsigned kept = 0; kept <= 5; ++kept) CHECK(dp::dropped_digits(5, kept, 3) == dropped[kept]);
    CHECK(dp::dropped_digits(5, 5, 0) == 0);
    CHECK(dp::dropped_digits(5, 0, 0) == 0);
}

TEST_CASE("level assembly: the HD steps give LevelEncoder::finish's level", "[prism][level_hd][one_thread]") {
    unsigned levels = 0, with_gaps = 0;
    const char* fields[] = {"levitus_temp_20x180x360.f32", "echam5_t_17x96x192.f32", "stageiv_precip_23x118x87.f32"};
    for (dp::Coding c : {dp::Coding::negabinary, dp::Coding::sign_magnitude}) {
        for (const char* name : fields)
            for (double rel : {1e-2, 1e-5}) {
                const std::vector<std::int32_t> q = mans_test::real_field_codes(name, rel, 200000);
                if (q.empty()) continue;
                INFO(name << " rel " << rel << ", coding " << static_cast<int>(c));
                check_level(q, 4096, c, 7, &with_gaps);
                ++levels;
            }
        // Synthetic: small codes with one huge one (the other chunks far
        // below the level's planes), all zero (no planes), a short last chunk,
        // one code, a chunk size that is the whole level.
        std::mt19937_64 rng(3);
        std::vector<std::int32_t> q(50000);
        for (auto& v : q) v = static_cast<std::int32_t>(rng() % 9) - 4;
        q[30000] = dp::kMaxCode - 5;
        for (std::uint64_t tile : {1u, 5u, 64u}) {
            INFO("synthetic, tile " << tile << ", coding " << static_cast<int>(c));
            check_level(q, 1024, c, tile, &with_gaps);
            check_level(std::vector<std::int32_t>(3000, 0), 1024, c, tile, &with_gaps);
            check_level(std::vector<std::int32_t>(1, -7), 1024, c, tile, &with_gaps);
            check_level(q, 65536, c, tile, &with_gaps);
            levels += 4;
        }
    }
    CHECK(levels >= 24);
    CHECK(with_gaps >= 6);  // empty planes above a chunk's own were assembled
}
