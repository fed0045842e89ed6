// prism_hd_steps.hpp - PRISM's GPU steps that several tests run on the
// CPU as the host stand-in module would: the rANS candidates of a stream
// batch by the device chunk encoder, and a level's assembly from its coded
// chunks. Each checks its own step's results against the CPU encoder's;
// these are the parts they share.
#pragma once

#include <cstdint>
#include <vector>

#include "backend_module.hpp"
#include "core/team.hpp"
#include "prism/archive.hpp"
#include "prism/codes.hpp"
#include "prism/level_assembly_hd.hpp"
#include "prism/stream_batch_hd.hpp"
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

}  // namespace mans_test
