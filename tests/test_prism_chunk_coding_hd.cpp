// test_prism_chunk_coding_hd.cpp - a batch of a level's chunks coded by the
// HD steps (prism/chunk_coding_hd.hpp) as a GPU runs them: the chunk steps
// by teams (one thread, 32 ranks reversed, 64 ranks; chunks in reverse
// order), the forms' scan in tiles, the lossless stage by
// stream_batch_hd.hpp's steps with the device chunk encoder's rANS
// candidates, all on a workspace and outputs full of garbage. Every chunk
// must be what the CPU's chunk coder makes of it (level_codes.cpp: plane
// count, truncation statistics, encode_plane_chunks' segments and the
// after-zero-plane form), and the level assembled from the chunks
// (level_assembly_hd.hpp) must be LevelEncoder::finish's, byte for byte.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "core/scan_hd.hpp"
#include "core/team.hpp"
#include "prism/archive.hpp"  // kChunkCodes
#include "prism/chunk_coding_hd.hpp"
#include "prism/plane_coding.hpp"
#include "prism_hd_steps.hpp"
#include "test_support.hpp"

namespace d = mans::detail;
namespace dp = mans::detail::prism;

namespace {

using mans_test::TeamPlay;
using mans_test::with_team;

using mans_test::CodedBatch;
using mans_test::code_batch;

std::vector<std::uint8_t> bytes_of(const std::uint8_t* p, std::uint32_t n) { return {p, p + n}; }

// Every chunk is the CPU's, then the level is LevelEncoder::finish's.
void check_batch(const std::vector<std::int32_t>& q, std::uint32_t chunk_codes, dp::Coding c, TeamPlay play,
                 std::uint64_t tile, bool exact_forms, unsigned* after_zero_forms) {
    INFO(q.size() << " codes in chunks of " << chunk_codes << ", coding " << static_cast<int>(c) << ", team "
                  << play.size << (play.reverse ? " reversed" : "") << ", tile " << tile
                  << (exact_forms ? ", exact forms" : ""));
    CodedBatch batch;
    code_batch(q, chunk_codes, c, play, tile, exact_forms, &batch);
    std::uint64_t forms = 0;
    for (std::uint64_t ch = 0; ch < batch.chunks.size(); ++ch) {
        INFO("chunk " << ch);
        const std::uint64_t first = ch * chunk_codes, len = std::min<std::uint64_t>(chunk_codes, q.size() - first);
        std::vector<std::uint32_t> words(len);
        std::uint32_t any = 0;
        for (std::uint64_t j = 0; j < len; ++j) any |= words[j] = dp::encode_code(q[first + j], c);
        const unsigned planes = dp::planes_for(any, c);
        const dp::CodedChunk& k = batch.chunks[ch];
        REQUIRE(k.planes == planes);
        dp::TruncationPartial partial[dp::kMaxPlanes + 1], stats[dp::kMaxPlanes + 1];
        dp::truncation_stats(d::SoloTeam{}, q.data() + first, words.data(), len, planes, c, partial, stats);
        for (unsigned dd = 0; dd <= planes; ++dd) {
            CHECK(k.max_err[dd] == stats[dd].max_err);
            CHECK(k.sum_sq[dd] == stats[dd].sum_sq.to_double());
        }
        const bool two_forms = c == dp::Coding::sign_magnitude && planes >= 2;
        std::vector<std::vector<std::uint8_t>> seg;
        std::vector<std::uint8_t> after_zero;
        dp::encode_plane_chunks(words.data(), len, planes, c, &seg, two_forms ? &after_zero : nullptr);
        for (unsigned b = 0; b < planes; ++b) {
            INFO("plane " << b);
            CHECK(bytes_of(k.seg[b], k.seg_bytes[b]) == seg[b]);
            CHECK(k.seg_bytes[b] <= dp::plane_segment_capacity(len));
        }
        for (unsigned b = planes; b < dp::kMaxPlanes; ++b) CHECK(k.seg_bytes[b] == 0);
        CHECK(bytes_of(k.after_zero_plane, k.after_zero_plane_bytes) == after_zero);
        *after_zero_forms += !after_zero.empty();
        forms += dp::chunk_plane_forms(planes, c);
    }
    CHECK(batch.forms == forms);
    mans_test::check_same_level(mans_test::assemble_level(batch.chunks, c, tile), mans_test::cpu_level(q, chunk_codes, c));
}

const TeamPlay kSolo{1, false}, kWarp{32, true}, kWarpForward{32, false}, kWave{64, false}, kWaveReversed{64, true};

}  // namespace

TEST_CASE("chunk coding: the HD steps give the CPU's chunks and level on real fields", "[prism][chunk_hd][one_thread]") {
    unsigned levels = 0, after_zero = 0;
    const char* fields[] = {"levitus_temp_20x180x360.f32", "echam5_t_17x96x192.f32", "stageiv_precip_23x118x87.f32",
                            "cosmo_hsurf_438x450.f32"};
    for (dp::Coding c : {dp::Coding::negabinary, dp::Coding::sign_magnitude})
        for (const char* name : fields)
            for (double rel : {1e-2, 1e-5}) {
                const std::vector<std::int32_t> q = mans_test::real_field_codes(name, rel, 120000);
                if (q.empty()) continue;
                INFO(name << " rel " << rel);
                const TeamPlay plays[] = {kSolo, kWarp, kWaveReversed};
                check_batch(q, 8192, c, plays[levels % 3], 3, levels % 4 == 0, &after_zero);
                ++levels;
            }
    // Full-size chunks (kChunkCodes) and a short last one, by a warp.
    const std::vector<std::int32_t> q = mans_test::real_field_codes("levitus_temp_20x180x360.f32", 1e-4, 300000);
    if (!q.empty()) {
        for (dp::Coding c : {dp::Coding::negabinary, dp::Coding::sign_magnitude})
            check_batch(q, dp::kChunkCodes, c, kWarp, 1, false, &after_zero);
        levels += 2;
    }
    if (levels < 8) WARN("shared data missing: " << levels << " real levels checked");
    CHECK(levels >= 8);
    CHECK(after_zero > 0);  // sign-magnitude chunks below the level's planes were coded in both forms
}

TEST_CASE("chunk coding: the HD steps give the CPU's chunks and level on synthetic levels", "[prism][chunk_hd][one_thread]") {
    unsigned after_zero = 0;
    std::mt19937_64 rng(5);
    std::vector<std::int32_t> gaps(20000);  // small codes, one huge: chunks far below the level's planes
    for (auto& v : gaps) v = static_cast<std::int32_t>(rng() % 9) - 4;
    gaps[15000] = dp::kMaxCode - 5;
    std::vector<std::int32_t> sparse(9000, 0);  // empty planes inside chunks, all-positive chunks
    for (std::size_t i = 0; i < sparse.size(); i += 1 + rng() % 50) sparse[i] = static_cast<std::int32_t>(rng() % 3000);
    std::vector<std::int32_t> dense(5000);
    for (auto& v : dense) v = static_cast<std::int32_t>(rng() % (2 * dp::kMaxCode - 1)) - (dp::kMaxCode - 1);
    for (dp::Coding c : {dp::Coding::negabinary, dp::Coding::sign_magnitude})
        for (TeamPlay play : {kSolo, kWarp, kWarpForward, kWave, kWaveReversed})
            for (std::uint64_t tile : {1u, 4u, 64u}) {
                check_batch(gaps, 1024, c, play, tile, tile == 4, &after_zero);
                check_batch(sparse, 512, c, play, tile, tile == 1, &after_zero);
                check_batch(dense, 2048, c, play, tile, false, &after_zero);
                check_batch(std::vector<std::int32_t>(3000, 0), 1024, c, play, tile, tile == 64, &after_zero);
                check_batch(std::vector<std::int32_t>(1, -7), 1024, c, play, tile, false, &after_zero);
                check_batch(std::vector<std::int32_t>(63, 1), 64, c, play, tile, true, &after_zero);
                check_batch(std::vector<std::int32_t>(), 1024, c, play, tile, tile == 4, &after_zero);  // no chunks
            }
    CHECK(after_zero > 0);
}

TEST_CASE("chunk coding: workspace bounds", "[prism][chunk_hd]") {
    // The largest segment: five raw streams of 8m + 1 bits each (every one
    // rounded up by 7 bits), the plane's len = 40m + 5 bits in all.
    std::uint8_t v[d::kMaxVarintBytes];
    for (std::uint64_t m : {0u, 1u, 15u, 16u, 2047u, 3276u, 100000u}) {
        const std::uint64_t len = 40 * m + 5;
        std::size_t worst = 2;
        for (unsigned k = 0; k < dp::kPlaneStreams; ++k) worst += d::encode_varint(m + 1, v) + (m + 1);
        INFO("len " << len);
        CHECK(worst <= dp::plane_segment_capacity(len));
        CHECK(worst + 5 * (d::kMaxVarintBytes - d::encode_varint(m + 1, v)) == dp::plane_segment_capacity(len));
    }
    // The workspace grows with the forms only in its form part.
    const dp::ChunkCodingLayout a = dp::chunk_coding_layout(10, 4096, 10), b = dp::chunk_coding_layout(10, 4096, 320);
    CHECK(a.chunk_bytes == b.chunk_bytes);
    CHECK(a.failed == b.failed);
    CHECK(a.form_bytes < b.form_bytes);
    CHECK(a.total == a.chunk_bytes + a.form_bytes);
    CHECK(a.total % 16 == 0);
    // A chunk longer than the slots is reported and coded as empty.
    std::vector<std::int32_t> q(300, 5);
    const std::int32_t* codes[] = {q.data(), q.data() + 100};
    const std::uint64_t len[] = {100, 200};
    const dp::ChunkCodingLayout l = dp::chunk_coding_layout(2, 100, 2 * dp::kMaxChunkForms);
    std::vector<std::uint8_t> temp(l.total, 0xA5);
    std::vector<dp::CodedChunk> out(2);
    const dp::ChunkCoding cc = dp::bind_chunk_coding(l, temp.data(), dp::Coding::negabinary, codes, len, out.data());
    *cc.failed = 0;
    dp::chunk_words(d::SoloTeam{}, cc, 0);
    CHECK(*cc.failed == 0);
    CHECK(out[0].planes > 0);
    dp::chunk_words(d::SoloTeam{}, cc, 1);
    CHECK(*cc.failed != 0);
    CHECK(out[1].planes == 0);
}

TEST_CASE("chunk coding: teams of threads give the one thread's chunks", "[prism][chunk_hd][thread_team]") {
    // Real threads, as ThreadSanitizer can watch them: a member reading
    // what only the leader wrote before a barrier, or skipping a team call,
    // would show here and not with LoopTeams.
    std::mt19937_64 rng(5);
    std::vector<std::int32_t> q(2600);
    for (auto& v : q) v = rng() % 7 == 0 ? static_cast<std::int32_t>(rng() % 2001) - 1000 : static_cast<std::int32_t>(rng() % 5) - 2;
    q[2000] = 1 << 20;
    unsigned after_zero = 0;
    for (dp::Coding c : {dp::Coding::negabinary, dp::Coding::sign_magnitude})
        for (unsigned size : {3u, 8u, 32u}) check_batch(q, 1024, c, TeamPlay{size, false, true}, 2, false, &after_zero);
    CHECK(after_zero > 0);
}
