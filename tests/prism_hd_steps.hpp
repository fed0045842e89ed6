// prism_hd_steps.hpp - PRISM's GPU steps that several tests run on the
// CPU as the host stand-in module would: the rANS candidates of a stream
// batch by the device chunk encoder, and a level's assembly from its coded
// chunks. Each checks its own step's results against the CPU encoder's;
// these are the parts they share.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "backend_module.hpp"
#include "mans/prism.hpp"
#include "core/team.hpp"
#include "prism/archive.hpp"
#include "prism/chunk_coding_hd.hpp"
#include "prism/codes.hpp"
#include "prism/level_assembly_hd.hpp"
#include "prism/stream_batch_hd.hpp"
#include "prism/traverse.hpp"
#include "thread_team.hpp"

namespace mans_test {

// How a step's teams are played: one thread (size 1), a LoopTeam of
// `size` ranks (phases in reverse rank order when asked), or `size` real
// threads (thread_team.hpp: what ThreadSanitizer can check).
struct TeamPlay {
    unsigned size;
    bool reverse;
    bool threads = false;
};

// fn(team) with the team a play describes (every member of a thread team
// calls it); area: kTeamSharedWords words for a LoopTeam.
template <typename Fn>
void with_team(TeamPlay p, std::uint64_t* area, Fn&& fn) {
    if (p.threads) {
        ThreadTeamState st(p.size);
        run_members(p.size, [&](unsigned r) { fn(ThreadTeam{r, p.size, &st}); });
    } else if (p.size == 1) {
        fn(mans::detail::SoloTeam{});
    } else {
        fn(mans::detail::LoopTeam{p.size, area, p.reverse});
    }
}

// Runs the device chunk encoder's steps (mapping/chunk_batch.hpp) on the
// rANS candidates of a screened stream batch (in_bytes = rans_in): teams
// of 32 (LoopTeams, every other one reversed), a wave of three reused
// scratch slices coding many blocks each, then the chunks finished and
// their blocks placed. Owns the outputs that batch() points to.
class RansCandidates {
public:
    explicit RansCandidates(const mans::detail::prism::StreamBatch& b);
    const mans_backend_chunk_batch& batch() const { return a_; }

private:
    std::vector<std::vector<std::uint8_t>> out_;
    std::vector<void*> out_ptrs_;
    std::vector<const void*> in_ptrs_;
    std::vector<std::size_t> out_bytes_;
    std::vector<std::int32_t> statuses_;
    std::vector<std::uint8_t> temp_;
    mans_backend_chunk_batch a_{};
};

// A batch of a level's chunks coded by chunk_coding_hd.hpp's steps, and
// what its CodedChunks point to.
struct CodedBatch {
    std::vector<mans::detail::prism::CodedChunk> chunks;
    std::vector<std::uint8_t> temp, form_temp;  // form_temp: the form part, when exact_forms
    std::unique_ptr<RansCandidates> rans;
    std::uint64_t forms = 0;
};

// Codes q in chunks of chunk_codes as a GPU would: every chunk step by
// teams of `play` over the chunks in reverse, the forms' scan in tiles of
// `tile` chunks, the lossless stage by stream_batch_hd.hpp's steps with
// RansCandidates; workspace and outputs start as garbage. exact_forms:
// the form part is a buffer of its own, sized to the scan's total, else
// the one buffer holds the worst case.
void code_batch(const std::vector<std::int32_t>& q, std::uint32_t chunk_codes, mans::detail::prism::Coding c,
                TeamPlay play, std::uint64_t tile, bool exact_forms, CodedBatch* out);

// A level's part of the archive as level_assembly_hd.hpp's steps make it
// from coded chunks: plane count, segment offsets (a tiled scan with tiles
// of `tile` segments, tiles and segments in reverse), the bytes (segments
// placed by reversed teams of 32), the planes' checksums and the
// truncation tables (sum_sq rounded as the header stores it).
struct AssembledLevel {
    unsigned planes = 0;
    std::vector<std::uint64_t> offsets;
    std::vector<std::uint8_t> bytes;
    std::vector<std::uint32_t> checksums;
    std::vector<double> max_err, sum_sq;
};
AssembledLevel assemble_level(const std::vector<mans::detail::prism::CodedChunk>& coded,
                              mans::detail::prism::Coding c, std::uint64_t tile);

// The same level as the CPU's LevelEncoder::finish writes it, for codes q
// in chunks of chunk_codes.
struct CpuLevel {
    mans::detail::prism::LevelMeta meta;
    std::vector<mans::detail::prism::Segment> segments;
    std::vector<std::vector<std::uint8_t>> bytes;
    std::vector<std::uint32_t> checksums;
};
CpuLevel cpu_level(const std::vector<std::int32_t>& q, std::uint32_t chunk_codes, mans::detail::prism::Coding c);

// Checks (Catch2) that an assembled level is the CPU's: plane count,
// tables, segment sizes, bytes and checksums.
void check_same_level(const AssembledLevel& gpu, const CpuLevel& cpu);

// A field of every kind of value the encoder treats apart: smooth values,
// NaN, +-Inf and a block of fill values (masked), and spikes that the
// prediction cannot follow at a tight bound (outliers).
template <typename T>
std::vector<std::uint8_t> special_field(const std::uint64_t* dims, unsigned rank, double spike) {
    std::uint64_t n = 1;
    for (unsigned a = 0; a < rank; ++a) n *= dims[a];
    std::vector<std::uint8_t> raw(n * sizeof(T));
    for (std::uint64_t i = 0; i < n; ++i) {
        double v = 100 * std::sin(static_cast<double>(i % 97) / 9) * std::cos(static_cast<double>(i / 97) / 13);
        if (i % 211 == 5) v = std::nan("");
        if (i % 307 == 7) v = (i & 1) ? HUGE_VAL : -HUGE_VAL;
        if (i % 53 == 11) v += spike;
        if (i >= n / 3 && i < n / 3 + 150) v = -1e10;
        const T t = static_cast<T>(v);
        std::memcpy(raw.data() + i * sizeof(T), &t, sizeof(T));
    }
    return raw;
}

// Partials of consecutive ranges merged as a GPU's tree reduction does:
// pairs of neighbours, the lower range on the left, level by level.
template <typename Partial>
Partial tree_merge(std::vector<Partial> part) {
    if (part.empty()) return Partial{};
    while (part.size() > 1) {
        std::vector<Partial> up;
        for (std::size_t i = 0; i < part.size(); i += 2) {
            Partial p = part[i];
            if (i + 1 < part.size()) p.merge(part[i + 1]);
            up.push_back(p);
        }
        part.swap(up);
    }
    return part[0];
}

// The set bits of a bitmap listed as a GPU lists them (core/bitmap_hd.hpp):
// ranges of `range` bytes counted (last to first), an exclusive scan, each
// range listed from its offset (last to first); checks (Catch2) that every
// range ends where the next one starts.
std::vector<std::uint64_t> list_bits(const std::vector<std::uint8_t>& bits, std::uint64_t range);

// fn(b, k, c, idx) for every point of a pass's boxes in GPU order (a launch
// per box, a thread block per tile: boxes, tiles and points in reverse, as
// any order must give the same result; each point from box_point);
// tile_stride > 1 visits every tile_stride-th tile of a box only.
template <typename Fn>
void for_pass_points(const mans::detail::prism::Grid& g, const mans::detail::prism::Pass& p, std::uint64_t tile_stride, Fn&& fn) {
    for (auto box = p.boxes.rbegin(); box != p.boxes.rend(); ++box) {
        const mans::detail::prism::Box& b = *box;
        const std::uint64_t n = b.size(), tiles = (n + mans::detail::prism::kTilePoints - 1) / mans::detail::prism::kTilePoints;
        for (std::uint64_t t = tiles; t-- > 0;) {
            if (t % tile_stride) continue;
            const std::uint64_t last = std::min(n, (t + 1) * mans::detail::prism::kTilePoints);
            for (std::uint64_t k = last; k-- > t * mans::detail::prism::kTilePoints;) {
                std::uint64_t c[mans::detail::prism::kMaxRank], idx = 0;
                mans::detail::prism::box_point(g, b, k, c, &idx);
                fn(b, k, c, idx);
            }
        }
    }
}

// A field the GPU-form PRISM tests compress and retrieve, with the
// relative bound and fill values they use.
struct PrismCase {
    std::string what;
    std::vector<std::uint8_t> raw;
    mans::prism::FloatType type;
    unsigned rank;
    std::uint64_t dims[4];
    double rel;
    std::vector<double> fills;
};

// Four synthetic fields (NaN, Inf, fill values, spikes, zeros of both
// signs, a netCDF fill; 1D to 4D, f32 and f64) and the real fields of
// ../shared/data that are there (levitus with its fill, echam5, cosmo,
// stageiv, the f64 sdo image; a missing one is a Catch2 WARN).
std::vector<PrismCase> prism_cases();

// The configuration those tests compress a case with (its relative bound
// and fills, two threads).
mans::prism::CompressConfig case_config(const PrismCase& k, mans::prism::PlaneCoding coding);

}  // namespace mans_test
