// test_prism_device_order.cpp - PRISM compression as a GPU runs it
// (prism/device_encoder.hpp: the MANS_HD steps over an executor, with
// encode_plan.hpp's host arithmetic between them), here with a host
// executor that plays every launch in reverse order and every warp as a
// LoopTeam over memory full of garbage. The archive must be the CPU
// encoder's (mans::prism::compress), byte for byte:
//
//   mask and fill detection   mask_hd.hpp, ranges merged on the host
//   per level:
//     scheme and kinds        selection_hd.hpp, sampled tiles, atomic sums
//     prediction, codes       every pass on the full grid, a launch per box
//     bitplane chunks         chunk_coding_hd.hpp + stream_batch_hd.hpp +
//                             the device chunk encoder (bind_rans_candidates
//                             and mapping/chunk_batch.hpp's steps)
//     the level's bytes       level_assembly_hd.hpp
//   error statistics          error_stats_hd.hpp, blocks merged on the host
//   base lists                core/bitmap_hd.hpp, counted ranges + scan
//   base and header bytes     encode_base, write_archive (host)
#include <catch2/catch.hpp>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "backend_fixture/host_exec.hpp"
#include "core/team.hpp"
#include "mans/prism.hpp"
#include "prism/device_encoder.hpp"
#include "prism_hd_steps.hpp"
#include "test_support.hpp"

namespace d = mans::detail;
namespace dp = mans::detail::prism;
using mans::Errc;

namespace {

using HostExec = mans_fixture::HostExec;

using Case = mans_test::PrismCase;

void check_case(const Case& k, mans::prism::PlaneCoding coding, mans_test::TeamPlay play, dp::DeviceRanges ranges) {
    INFO(k.what << " rel " << k.rel << ", coding " << static_cast<int>(coding) << ", team " << play.size);
    const mans::prism::CompressConfig cfg = mans_test::case_config(k, coding);
    mans_test::Bytes cpu;
    REQUIRE(mans::prism::compress(k.raw.data(), k.raw.size(), cfg, &cpu) == Errc::ok);
    HostExec ex;
    ex.team_size = play.size;
    ex.reverse = play.reverse;
    mans_test::Bytes gpu;
    if (k.type == mans::prism::FloatType::f32) {
        std::vector<float> x(k.raw.size() / 4);
        std::memcpy(x.data(), k.raw.data(), k.raw.size());
        REQUIRE(dp::device_compress<float>(ex, x.data(), cfg, &gpu, ranges) == Errc::ok);
    } else {
        std::vector<double> x(k.raw.size() / 8);
        std::memcpy(x.data(), k.raw.data(), k.raw.size());
        REQUIRE(dp::device_compress<double>(ex, x.data(), cfg, &gpu, ranges) == Errc::ok);
    }
    CHECK(ex.launches > 10);
    REQUIRE(gpu.size() == cpu.size());
    std::size_t first_diff = 0;
    while (first_diff < cpu.size() && cpu[first_diff] == gpu[first_diff]) ++first_diff;
    INFO("first differing byte " << first_diff << " of " << cpu.size());
    CHECK(gpu == cpu);
}

}  // namespace

TEST_CASE("PRISM archives from the HD steps in GPU order equal the CPU encoder's", "[prism][device_order][one_thread]") {
    const std::vector<Case> cases = mans_test::prism_cases();
    CHECK(cases.size() >= 9);
    unsigned k = 0;
    for (const Case& c : cases)
        for (auto coding : {mans::prism::PlaneCoding::negabinary, mans::prism::PlaneCoding::sign_magnitude}) {
            // Teams of 32 reversed, 1 and 64; the default ranges, and small ones
            // (many partials merged, lists of many ranges).
            const mans_test::TeamPlay plays[] = {{32, true}, {1, false}, {64, false}};
            const dp::DeviceRanges ranges = k % 2 ? dp::DeviceRanges{} : dp::DeviceRanges{8 * 37, 5};
            check_case(c, coding, plays[k++ % 3], ranges);
        }
}
