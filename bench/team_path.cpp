// team_path.cpp - how much of a block's coding a GPU warp can share out,
// measured on the CPU.
//
// The GPU kernels code one block per warp through the MANS_HD block coders,
// played by a team of 32 ranks (core/team.hpp): code between phases runs in
// every lane alike (so a warp runs it at one lane's speed), a phase's work is
// split between ranks, and the rANS lane loop gives lane j to warp lane j.
// This program runs that very code as a team of 32 on one CPU thread
// (PathTeam: LoopTeam's play, with a clock around each rank of each phase)
// and reports, per block:
//   serial   the team's work done by one thread: every rank of every
//            phase in turn (not a team of one, which takes shortcuts:
//            best_split, sort_u64; the first column times those);
//   path     the time 32 ranks would take if each ran at this CPU thread's
//            speed: the code between phases once, each phase's slowest
//            rank, the rANS lane loop divided by its lanes;
//   between  the part of path spent between phases (every lane the same
//            work: no sharing), which bounds what more ranks could gain.
// Each timed rank and lane loop has the timing's own cost taken off its
// time and the run's, measured on empty ranks at the start (calibrate);
// the program prints it.
// It says nothing of a GPU's memory latency or occupancy (a device run
// does, scripts/device-profile.sh); it shows where the team code leaves a
// warp's lanes idle, and checks that the team's payloads and decoded
// values are the CPU's.
//
//   mans-team-path FILE DTYPE [BLOCK_BYTES [REPS]]   DTYPE: u8 u16 u32 u64
// Each block is coded REPS times (default 5) each way; a block counts with
// its fastest run (the one with the shortest path), which keeps a timer
// interrupt out of the figures.
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

#include "mans/mans.hpp"
#include "mapping/block_batch.hpp"

namespace {

using namespace mans::detail;
using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

// The timing's own cost, measured at the start on phases of empty ranks
// (calibrate): what a rank's clock reads of an empty rank, taken off each
// rank's time, and what a timed rank adds to a run, taken off the run's
// time (bookkeeping included: a clock read alone left half of it in the
// code "between phases").
double g_empty_rank = 0;  // seconds
double g_rank_cost = 0;
// What PathTeam and the lane loops measured, in seconds.
struct PathClock {
    double phases_serial = 0;  // every rank of every phase
    double phases_path = 0;    // the slowest rank of every phase
    double lanes_serial = 0;   // the rANS lane loops, all lanes
    double lanes_path = 0;     // the same divided by the lanes
    std::uint64_t phases = 0;
    std::uint64_t timed = 0;  // ranks and lane loops timed: the clock's cost in the run's time
    unsigned depth = 0;  // a phase inside a phase is timed by its outer one
};

// LoopTeam (core/team.hpp) with a clock around each rank of a phase. Not
// inlined, so that a profile of this program (perf record --call-graph
// dwarf) tells the phases, under PathTeam::for_ranks, from the code
// between them.
struct PathTeam : LoopTeam {
    PathClock* clock;
    template <typename F>
    __attribute__((noinline)) void for_ranks(F&& fn) const {
        if (clock->depth++ != 0) {
            for (unsigned r = 0; r < n; ++r) fn(r);
        } else {
            double slowest = 0, all = 0;
            for (unsigned r = 0; r < n; ++r) {
                const Clock::time_point t0 = Clock::now();
                fn(r);
                const double t = std::max(0.0, seconds_since(t0) - g_empty_rank);
                slowest = std::max(slowest, t);
                all += t;
            }
            clock->phases_serial += all;
            clock->timed += n;
            clock->phases_path += slowest;
            ++clock->phases;
        }
        --clock->depth;
    }
};

// Sets g_empty_rank and g_rank_cost from phases of 32 empty ranks: the
// fastest of several rounds' averages, so that neither is overestimated.
void calibrate() {
    std::uint64_t area[kTeamSharedWords] = {};
    double inside = 1, whole = 1;
    for (int round = 0; round < 20; ++round) {
        constexpr int kPhases = 128;
        PathClock clock;
        const PathTeam team{{32, area}, &clock};
        volatile unsigned sink = 0;
        const Clock::time_point t0 = Clock::now();
        for (int p = 0; p < kPhases; ++p) team.for_ranks([&](unsigned r) { sink = r; });
        const double total = seconds_since(t0);
        inside = std::min(inside, clock.phases_serial / static_cast<double>(clock.timed));
        whole = std::min(whole, total / static_cast<double>(clock.timed));
    }
    g_empty_rank = inside;
    g_rank_cost = whole;
}

// The reference rANS lane loops, timed: on a warp lane j runs lane j.
struct PathEncodeLanes {
    PathClock* clock;
    void operator()(RansEncodeArgs& a) const {
        const Clock::time_point t0 = Clock::now();
        rans_encode_reference(a);
        const double t = std::max(0.0, seconds_since(t0) - g_empty_rank);
        clock->lanes_serial += t;
        clock->lanes_path += t / a.layout.lanes;
        ++clock->timed;
    }
};
struct PathDecodeLanes {
    PathClock* clock;
    bool operator()(const RansDecodeArgs& a) const {
        const Clock::time_point t0 = Clock::now();
        const bool ok = rans_decode_reference(a);
        const double t = std::max(0.0, seconds_since(t0) - g_empty_rank);
        clock->lanes_serial += t;
        clock->lanes_path += t / a.layout.lanes;
        ++clock->timed;
        return ok;
    }
};

struct Report {
    double serial = 0, path = 0, between = 0, solo = 0;
    std::uint64_t phases = 0;
};

// One run's figures (total: the run's wall time).
Report one_run(const PathClock& c, double total) {
    Report r;
    total = std::max(0.0, total - static_cast<double>(c.timed) * g_rank_cost);
    r.between = total - c.phases_serial - c.lanes_serial;
    r.serial = total;
    r.path = r.between + c.phases_path + c.lanes_path;
    r.phases = c.phases;
    return r;
}
void keep_fastest(Report& best, bool first, const Report& r) {
    if (first || r.path < best.path) best = Report{r.serial, r.path, r.between, best.solo, r.phases};
}
void add_block(Report& sum, const Report& b) {
    sum.serial += b.serial, sum.path += b.path, sum.between += b.between, sum.solo += b.solo;
    sum.phases += b.phases;
}

std::vector<std::uint8_t> aligned_slice(std::size_t bytes, std::uint8_t** base) {
    std::vector<std::uint8_t> v(bytes + 16, 0);
    *base = reinterpret_cast<std::uint8_t*>((reinterpret_cast<std::uintptr_t>(v.data()) + 15) & ~std::uintptr_t{15});
    return v;
}

template <typename U>
int run(mans::DType dt, const std::vector<std::uint8_t>& raw, std::size_t block_bytes, unsigned reps,
        const char* label) {
    const std::size_t esize = sizeof(U);
    const std::size_t block_elems = block_bytes / esize;
    const std::size_t n_all = raw.size() / esize;
    const std::uint64_t blocks = (n_all + block_elems - 1) / block_elems;
    if (blocks == 0) return std::fprintf(stderr, "no whole element in the file\n"), 2;

    mans_backend_encode_batch eb{};
    eb.dtype = static_cast<int>(dt);
    eb.blocks = blocks;
    eb.block_elems = block_elems;
    eb.last_elems = n_all - (blocks - 1) * block_elems;
    eb.src = raw.data();
    eb.slot_bytes = 1 + block_elems * esize;
    std::vector<std::uint8_t> solo_slots(blocks * eb.slot_bytes), team_slots(blocks * eb.slot_bytes);
    std::vector<std::uint64_t> solo_sizes(blocks), team_sizes(blocks);
    std::uint8_t* base = nullptr;
    std::vector<std::uint8_t> slice = aligned_slice(encode_slice_layout(block_elems, esize).total, &base);
    std::uint64_t area[kTeamSharedWords] = {};

    Report enc, dec;
    for (std::uint64_t b = 0; b < blocks; ++b) {
        Report best;
        best.solo = 1e30;
        for (unsigned rep = 0; rep < reps; ++rep) {
            eb.slots = solo_slots.data();
            eb.payload_bytes = solo_sizes.data();
            Clock::time_point t0 = Clock::now();
            if (encode_batch_block_as<U>(eb, b, base) != MANS_OK) return std::fprintf(stderr, "CPU encode failed\n"), 1;
            best.solo = std::min(best.solo, seconds_since(t0));

            PathClock clock;
            eb.slots = team_slots.data();
            eb.payload_bytes = team_sizes.data();
            t0 = Clock::now();
            const std::int32_t st =
                encode_batch_block_as<U>(eb, b, base, PathTeam{{32, area}, &clock}, PathEncodeLanes{&clock});
            keep_fastest(best, rep == 0, one_run(clock, seconds_since(t0)));
            if (st != MANS_OK || team_sizes[b] != solo_sizes[b] ||
                std::memcmp(&team_slots[b * eb.slot_bytes], &solo_slots[b * eb.slot_bytes], solo_sizes[b]) != 0)
                return std::fprintf(stderr, "block %llu: the team's payload differs from the CPU's\n",
                                    static_cast<unsigned long long>(b)),
                       1;
        }
        add_block(enc, best);
    }

    // The payloads back to back, decoded by one thread and by the team.
    std::vector<std::uint8_t> payloads;
    std::vector<std::uint64_t> offsets{0};
    for (std::uint64_t b = 0; b < blocks; ++b) {
        const std::uint8_t* p = &solo_slots[b * eb.slot_bytes];
        payloads.insert(payloads.end(), p, p + solo_sizes[b]);
        offsets.push_back(payloads.size());
    }
    std::vector<std::uint8_t> out_solo(raw.size() - raw.size() % esize), out_team(out_solo.size());
    std::vector<std::int32_t> status(blocks);
    mans_backend_block_batch db{};
    db.dtype = eb.dtype;
    db.blocks = blocks;
    db.block_elems = block_elems;
    db.last_elems = eb.last_elems;
    db.payloads = payloads.data();
    db.payload_bytes = payloads.size();
    db.offsets = offsets.data();
    db.status = status.data();
    std::vector<std::uint8_t> dslice = aligned_slice(block_scratch_bytes(block_elems, esize), &base);
    for (std::uint64_t b = 0; b < blocks; ++b) {
        Report best;
        best.solo = 1e30;
        for (unsigned rep = 0; rep < reps; ++rep) {
            db.dst = out_solo.data();
            Clock::time_point t0 = Clock::now();
            if (decode_batch_block(db, b, base) != MANS_OK) return std::fprintf(stderr, "CPU decode failed\n"), 1;
            best.solo = std::min(best.solo, seconds_since(t0));
            PathClock clock;
            db.dst = out_team.data();
            t0 = Clock::now();
            const std::int32_t st =
                decode_batch_block(db, b, base, PathTeam{{32, area}, &clock}, PathDecodeLanes{&clock});
            keep_fastest(best, rep == 0, one_run(clock, seconds_since(t0)));
            if (st != MANS_OK) return std::fprintf(stderr, "team decode failed\n"), 1;
        }
        add_block(dec, best);
    }
    if (out_solo != out_team || std::memcmp(out_solo.data(), raw.data(), out_solo.size()) != 0)
        return std::fprintf(stderr, "decoded values differ\n"), 1;

    const double ms = 1e3 / static_cast<double>(blocks);
    std::printf("%s: %llu blocks of %zu bytes, payloads %zu bytes; per block, ms (one CPU thread, fastest of %u;"
                " timing a rank: %.0f ns, %.0f ns of it inside, taken off)\n",
                label, static_cast<unsigned long long>(blocks), block_bytes, payloads.size(), reps,
                g_rank_cost * 1e9, g_empty_rank * 1e9);
    std::printf("| direction | one thread (SoloTeam) | team serial | team path | between phases | serial / path | phases |\n");
    std::printf("|---|---:|---:|---:|---:|---:|---:|\n");
    for (int d = 0; d < 2; ++d) {
        const Report& r = d == 0 ? enc : dec;
        std::printf("| %s | %.3f | %.3f | %.3f | %.3f (%.0f %% of path) | %.1f | %.0f |\n",
                    d == 0 ? "encode" : "decode", r.solo * ms, r.serial * ms, r.path * ms, r.between * ms,
                    100.0 * r.between / r.path, r.serial / r.path, static_cast<double>(r.phases) * ms / 1e3);
    }
    return 0;
}

}  // namespace

int main(int argc, char** argv) {
    calibrate();
    if (argc < 3) {
        std::fprintf(stderr, "usage: %s FILE u8|u16|u32|u64 [BLOCK_BYTES [REPS]]\n", argv[0]);
        return 2;
    }
    std::ifstream f(argv[1], std::ios::binary);
    const std::vector<std::uint8_t> raw((std::istreambuf_iterator<char>(f)), {});
    if (!f && raw.empty()) return std::fprintf(stderr, "cannot read %s\n", argv[1]), 2;
    const std::string t = argv[2];
    const std::size_t block = argc > 3 ? std::strtoull(argv[3], nullptr, 10) : mans::kDefaultBlockBytes;
    const unsigned long reps = argc > 4 ? std::strtoul(argv[4], nullptr, 10) : 5;
    if (block < 4096 || block > (std::size_t{1} << 26)) return std::fprintf(stderr, "BLOCK_BYTES not in 4 KiB .. 64 MiB\n"), 2;
    if (reps < 1 || reps > 1000) return std::fprintf(stderr, "REPS not in 1 .. 1000\n"), 2;
    if (t == "u8") return run<std::uint8_t>(mans::DType::u8, raw, block, static_cast<unsigned>(reps), argv[1]);
    if (t == "u16") return run<std::uint16_t>(mans::DType::u16, raw, block, static_cast<unsigned>(reps), argv[1]);
    if (t == "u32") return run<std::uint32_t>(mans::DType::u32, raw, block, static_cast<unsigned>(reps), argv[1]);
    if (t == "u64") return run<std::uint64_t>(mans::DType::u64, raw, block, static_cast<unsigned>(reps), argv[1]);
    return std::fprintf(stderr, "unknown dtype %s\n", argv[2]), 2;
}
