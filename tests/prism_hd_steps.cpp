// prism_hd_steps.cpp - see prism_hd_steps.hpp.
#include "prism_hd_steps.hpp"

#include <catch2/catch.hpp>

#include <algorithm>
#include <cstring>
#include <memory>

#include "core/bitmap_hd.hpp"
#include "core/scan_hd.hpp"
#include "core/team.hpp"
#include "mans/mans.hpp"
#include "mapping/chunk_batch.hpp"
#include "test_support.hpp"
#include "prism/level_codes.hpp"

namespace d = mans::detail;
namespace dp = mans::detail::prism;

namespace mans_test {

RansCandidates::RansCandidates(const dp::StreamBatch& b) {
    const std::uint64_t count = b.count;
    std::size_t largest = 0;
    for (std::uint64_t i = 0; i < count; ++i) largest = std::max(largest, b.bytes[i]);
    const unsigned esize = b.width;
    const std::size_t cap = mans::compress_bound(largest);
    out_.assign(count, std::vector<std::uint8_t>(cap));
    for (auto& o : out_) out_ptrs_.push_back(o.data());
    in_ptrs_.assign(b.src, b.src + count);
    out_bytes_.assign(count, 0);
    statuses_.assign(count, 1);
    a_.struct_size = sizeof a_;
    a_.dtype = dp::rans_dtype(b.width);
    a_.block_elems = dp::rans_block_elems(esize);
    a_.chunks = count;
    a_.max_in_bytes = largest;
    a_.out_capacity = cap;
    a_.in_ptrs = in_ptrs_.data();
    a_.in_bytes = b.rans_in;
    a_.out_ptrs = out_ptrs_.data();
    a_.out_bytes = out_bytes_.data();
    a_.statuses = statuses_.data();
    if (count == 0) return;  // nothing to code (a batch of all-zero chunks)
    const std::uint64_t wave = 3;
    const d::ChunkEncodeLayout l = d::chunk_encode_layout(esize, a_.block_elems, count, largest, wave);
    REQUIRE(l.total > 0);
    temp_.assign(l.total, 0xA5);
    a_.temp = temp_.data();
    a_.temp_bytes = temp_.size();
    std::uint64_t area[d::kTeamSharedWords];
    for (std::uint64_t item = l.wave_blocks; item-- > 0;)
        d::encode_chunk_blocks_strided_any(a_, l, item, d::LoopTeam{32, area, item % 2 == 1});
    for (std::uint64_t c = 0; c < count; ++c) d::finish_chunk_encode(a_, l, c);
    for (std::uint64_t g = 0; g < l.total_blocks; ++g) d::place_chunk_block(a_, l, g);
}

void code_batch(const std::vector<std::int32_t>& q, std::uint32_t chunk_codes, dp::Coding c, TeamPlay play,
                std::uint64_t tile, bool exact_forms, CodedBatch* out) {
    const std::uint64_t n = q.size(), count = (n + chunk_codes - 1) / chunk_codes;
    std::vector<const std::int32_t*> codes;
    std::vector<std::uint64_t> len;
    for (std::uint64_t ch = 0; ch < count; ++ch) {
        codes.push_back(q.data() + ch * chunk_codes);
        len.push_back(std::min<std::uint64_t>(chunk_codes, n - ch * chunk_codes));
    }
    const std::uint64_t max_len = std::min<std::uint64_t>(chunk_codes, n);
    const dp::ChunkCodingLayout l = dp::chunk_coding_layout(count, max_len, count * dp::kMaxChunkForms);
    out->temp.assign(l.total, 0xA5);
    out->chunks.resize(count);
    if (count) std::memset(static_cast<void*>(out->chunks.data()), 0xA5, count * sizeof(dp::CodedChunk));
    dp::ChunkCoding cc = dp::bind_chunk_coding(l, out->temp.data(), c, codes.data(), len.data(), out->chunks.data());
    *cc.failed = 0;  // the caller's part (a memset on a GPU)
    std::uint64_t area[d::kTeamSharedWords];
    std::fill(std::begin(area), std::end(area), 0xBADBADu);
    // 1. Words, plane counts, truncation statistics.
    for (std::uint64_t ch = count; ch-- > 0;) with_team(play, area, [&](const auto& t) { dp::chunk_words(t, cc, ch); });
    // 2. The forms' first index: tile sums (tiles in reverse), their scan, each chunk's.
    const auto forms_of = [&](std::uint64_t ch) { return dp::chunk_forms(cc, ch); };
    const std::uint64_t tiles = (count + tile - 1) / tile;
    for (std::uint64_t t = tiles; t-- > 0;) cc.tile_sums[t] = d::scan_tile_sum(forms_of, count, tile, t);
    const std::uint64_t forms = d::scan_tile_bases(cc.tile_sums, tiles);
    for (std::uint64_t ch = count; ch-- > 0;) cc.form_first[ch] = d::scan_item_offset(forms_of, tile, cc.tile_sums, ch);
    cc.form_first[count] = forms;
    out->forms = forms;
    if (exact_forms) {  // the chunk part stays; a form part of its own, for these forms
        const dp::ChunkCodingLayout e = dp::chunk_coding_layout(count, max_len, forms);
        REQUIRE(e.chunk_bytes == l.chunk_bytes);
        REQUIRE(e.form_bytes <= l.form_bytes);
        out->form_temp.assign(e.form_bytes + 1, 0xA5);
        cc = dp::bind_chunk_coding(e, out->temp.data(), out->form_temp.data(), c, codes.data(), len.data(),
                                   out->chunks.data());
    }
    REQUIRE(dp::set_form_count(&cc, forms));
    REQUIRE_FALSE(dp::set_form_count(&cc, cc.max_forms + 1));
    REQUIRE(cc.batch.count == forms * dp::kPlaneStreams);
    // 3. The planes' streams.
    dp::PlaneSplitScratch scratch;
    std::memset(&scratch, 0xA5, sizeof scratch);
    for (std::uint64_t ch = count; ch-- > 0;)
        with_team(play, area, [&](const auto& t) { dp::split_chunk_planes(t, cc, ch, &scratch); });
    // 4. The lossless stage.
    std::uint32_t hist[256];
    for (std::uint64_t i = cc.batch.count; i-- > 0;) {
        std::fill(std::begin(hist), std::end(hist), 0xDEADBEEFu);
        with_team(play, area, [&](const auto& t) { dp::screen_stream(t, cc.batch, i, hist); });
    }
    out->rans = std::make_unique<RansCandidates>(cc.batch);
    for (std::uint64_t i = 0; i < cc.batch.count; ++i) dp::choose_stream(cc.batch, out->rans->batch(), i);
    // 5. The segments.
    for (std::uint64_t ch = count; ch-- > 0;)
        with_team(play, area, [&](const auto& t) { dp::write_chunk_segments(t, cc, ch); });
    REQUIRE(*cc.failed == 0);
}

AssembledLevel assemble_level(const std::vector<dp::CodedChunk>& coded, dp::Coding c, std::uint64_t tile) {
    const std::uint64_t nchunks = coded.size();
    AssembledLevel g;
    g.planes = dp::level_plane_count(coded.data(), nchunks);
    dp::LevelAssembly a{c, g.planes, nchunks, coded.data(), nullptr, nullptr};
    const std::uint64_t segs = dp::level_segment_count(a);
    const auto size_of = [&](std::uint64_t s) { return dp::level_segment_bytes(a, s); };
    const std::uint64_t tiles = (segs + tile - 1) / tile;
    std::vector<std::uint64_t> bases(tiles + 1, 0xBADu);
    for (std::uint64_t t = tiles; t-- > 0;) bases[t] = d::scan_tile_sum(size_of, segs, tile, t);
    const std::uint64_t total = d::scan_tile_bases(bases.data(), tiles);
    g.offsets.assign(segs + 1, 0xBADu);
    for (std::uint64_t s = segs; s-- > 0;) g.offsets[s] = d::scan_item_offset(size_of, tile, bases.data(), s);
    g.offsets[segs] = total;
    g.bytes.assign(total, 0xA5);
    a.offsets = g.offsets.data();
    a.out = g.bytes.data();
    std::uint64_t area[d::kTeamSharedWords];
    const d::LoopTeam team{32, area, true};
    for (std::uint64_t s = segs; s-- > 0;) dp::place_level_segment(team, a, s);
    for (unsigned b = 0; b < g.planes; ++b) g.checksums.push_back(dp::level_plane_checksum(team, a, b));
    g.max_err.resize(g.planes + 1);
    g.sum_sq.resize(g.planes + 1);
    for (unsigned kept = g.planes + 1; kept-- > 0;) {
        dp::level_truncation_entry(a, kept, &g.max_err[kept], &g.sum_sq[kept]);
        g.sum_sq[kept] = dp::decode_sum_sq(dp::encode_sum_sq(g.sum_sq[kept]));  // as the header stores it
    }
    return g;
}

CpuLevel cpu_level(const std::vector<std::int32_t>& q, std::uint32_t chunk_codes, dp::Coding c) {
    CpuLevel r;
    dp::LevelEncoder enc(q.size(), chunk_codes, c);
    const std::vector<dp::CodeRange> all{{0, q.size()}};
    enc.prepare(all);
    for (std::uint64_t i = 0; i < q.size(); ++i) enc.code(i) = q[i];
    enc.commit(all);
    REQUIRE(enc.finish(&r.meta, &r.segments, &r.bytes, &r.checksums, 1) == mans::Errc::ok);
    return r;
}

void check_same_level(const AssembledLevel& gpu, const CpuLevel& cpu) {
    REQUIRE(gpu.planes == cpu.meta.planes);
    CHECK(gpu.max_err == cpu.meta.max_err);
    CHECK(gpu.sum_sq == cpu.meta.sum_sq);
    REQUIRE(gpu.offsets.size() == cpu.segments.size() + 1);
    std::vector<std::uint8_t> cpu_bytes;
    for (std::size_t s = 0; s < cpu.segments.size(); ++s) {
        INFO("segment " << s);
        REQUIRE(gpu.offsets[s + 1] - gpu.offsets[s] == cpu.segments[s].stored);
        cpu_bytes.insert(cpu_bytes.end(), cpu.bytes[s].begin(), cpu.bytes[s].end());
    }
    CHECK(gpu.bytes == cpu_bytes);
    CHECK(gpu.checksums == cpu.checksums);
}

std::vector<std::uint64_t> list_bits(const std::vector<std::uint8_t>& bits, std::uint64_t range) {
    const std::uint64_t n = bits.size(), ranges = (n + range - 1) / range;
    std::vector<std::uint64_t> at(static_cast<std::size_t>(ranges));
    for (std::uint64_t r = ranges; r-- > 0;)
        at[static_cast<std::size_t>(r)] = mans::detail::bitmap_count(bits.data(), r * range, std::min(n, (r + 1) * range));
    const std::uint64_t total = mans::detail::scan_tile_bases(at.data(), ranges);
    std::vector<std::uint64_t> out(static_cast<std::size_t>(total), ~std::uint64_t{0});
    std::uint64_t wrong_ends = 0;  // a range must end where the next one starts
    for (std::uint64_t r = ranges; r-- > 0;) {
        const std::uint64_t end = mans::detail::bitmap_list(bits.data(), r * range, std::min(n, (r + 1) * range),
                                                           at[static_cast<std::size_t>(r)], out.data());
        wrong_ends += end != (r + 1 < ranges ? at[static_cast<std::size_t>(r + 1)] : total);
    }
    CHECK(wrong_ends == 0);
    return out;
}

mans::prism::CompressConfig case_config(const PrismCase& k, mans::prism::PlaneCoding coding) {
    mans::prism::CompressConfig cfg;
    cfg.type = k.type;
    cfg.rank = k.rank;
    for (unsigned a = 0; a < k.rank; ++a) cfg.dims[a] = k.dims[a];
    cfg.mode = mans::prism::ErrorMode::relative;
    cfg.error_bound = k.rel;
    cfg.planes = coding;
    cfg.fill_values = k.fills;
    cfg.threads = 2;
    return cfg;
}

std::vector<PrismCase> prism_cases() {
    using mans::prism::FloatType;
    std::vector<PrismCase> cases;
    const std::uint64_t d3[] = {23, 31, 37}, d4[] = {4, 5, 6, 7}, d1[] = {30000};
    cases.push_back({"synthetic f32 23x31x37 with NaN, Inf, fill and spikes", special_field<float>(d3, 3, 5e3),
                     FloatType::f32, 3, {23, 31, 37, 0}, 1e-4, {-1e10}});
    cases.push_back({"synthetic f64 4x5x6x7 with NaN, Inf, fill and spikes", special_field<double>(d4, 4, 1e9),
                     FloatType::f64, 4, {4, 5, 6, 7}, 1e-12, {-1e10}});
    std::vector<std::uint8_t> zeros(40 * 50 * sizeof(float));  // smallest value zero of both signs, only the first -0
    for (std::uint64_t i = 0; i < 40 * 50; ++i) {
        float v = i % 5 == 0 ? (i == 0 ? -0.0f : 0.0f) : 1.0f + std::sin(static_cast<float>(i) / 7);
        if (i % 401 == 3) v = 9.96921e36f;  // a netCDF fill, detected
        std::memcpy(zeros.data() + i * sizeof(float), &v, sizeof v);
    }
    cases.push_back({"synthetic f32 40x50, -0 before +0, a netCDF fill", zeros, FloatType::f32, 2, {40, 50, 0, 0}, 1e-3, {}});
    cases.push_back({"synthetic f32 1D of 30000", special_field<float>(d1, 1, 50), FloatType::f32, 1, {30000, 0, 0, 0},
                     1e-3, {}});
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
        const std::string path = find_data_file(f.file);
        if (path.empty()) {
            WARN("skipped: " << f.file << " not found");
            continue;
        }
        cases.push_back({f.file, read_file(path), f.type, f.rank, {f.dims[0], f.dims[1], f.dims[2], f.dims[3]}, f.rel, {}});
    }
    return cases;
}

}  // namespace mans_test
