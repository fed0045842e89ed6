// test_prism_streams_hd.cpp - PRISM's lossless stage for a batch of
// streams (prism/stream_batch_hd.hpp), the steps a GPU runs: screening by
// teams of 1-64 ranks (LoopTeams in both rank orders), the rANS candidates
// by the device chunk encoder's steps (mapping/chunk_batch.hpp) run as the
// host stand-in module runs them, the choice and the plane segments. They
// must give the CPU's bytes: every plane segment that encode_plane_chunks
// writes for chunks of codes from real fields (and synthetic shapes), and
// encode_best's method and payload for streams of every width.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "mans/mans.hpp"
#include "prism/archive.hpp"  // kChunkCodes
#include "prism/codes.hpp"
#include "prism/lossless.hpp"
#include "prism/plane_coding.hpp"
#include "prism/plane_split_hd.hpp"
#include "prism/stream_batch_hd.hpp"
#include "prism_hd_steps.hpp"
#include "test_support.hpp"

namespace d = mans::detail;
namespace dp = mans::detail::prism;

namespace {

using mans_test::TeamPlay;

// Owns the arrays of a StreamBatch and runs steps 1-3 on it.
class StreamBatchRun {
public:
    StreamBatchRun(std::vector<std::vector<std::uint8_t>> streams, unsigned width, bool try_rans)
        : streams_(std::move(streams)) {
        const std::size_t count = streams_.size();
        std::size_t largest = 0;
        for (const auto& s : streams_) largest = std::max(largest, s.size());
        for (const auto& s : streams_) src_.push_back(s.data()), bytes_.push_back(s.size());
        work_.assign(count * dp::stream_work_bytes(largest), 0xA5);
        all_zero_.assign(count, 0xA5);
        rze_.assign(count, ~std::size_t{0});
        rans_in_.assign(count, ~std::size_t{0});
        method_.assign(count, dp::Method::raw);
        payload_.assign(count, nullptr);
        size_.assign(count, 0);
        b_ = dp::StreamBatch{count,        width,         try_rans,        src_.data(),
                             bytes_.data(), work_.data(), dp::stream_work_bytes(largest), all_zero_.data(),
                             rze_.data(),   rans_in_.data(), method_.data(), payload_.data(),
                             size_.data()};
    }

    void run(TeamPlay play) {
        // 1. Screening, one team per stream, in reverse stream order.
        std::uint64_t area[d::kTeamSharedWords];
        std::uint32_t hist[256];
        for (std::uint64_t i = b_.count; i-- > 0;) {
            std::fill(std::begin(hist), std::end(hist), 0xDEADBEEFu);  // stale counts must not matter
            mans_test::with_team(play, area, [&](const auto& t) { dp::screen_stream(t, b_, i, hist); });
        }
        // 2. The rANS candidates: the chunk encoder on in_bytes = rans_in.
        rans_ = std::make_unique<mans_test::RansCandidates>(b_);
        // 3. The choice.
        for (std::uint64_t i = 0; i < b_.count; ++i) dp::choose_stream(b_, rans_->batch(), i);
    }

    dp::Method method(std::size_t i) const { return method_[i]; }
    std::vector<std::uint8_t> payload(std::size_t i) const {
        return {payload_[i], payload_[i] + size_[i]};
    }
    bool rans_tried(std::size_t i) const { return rans_in_[i] != 0; }

    // The segment of the plane whose streams are 5p .. 5p + 4.
    std::vector<std::uint8_t> plane_segment(std::size_t p) const {
        const std::size_t at = p * dp::kPlaneStreams;
        std::vector<std::uint8_t> seg(dp::plane_segment_bytes(method_.data() + at, size_.data() + at));
        REQUIRE(dp::write_plane_segment(method_.data() + at, payload_.data() + at, size_.data() + at, seg.data()) ==
                seg.size());
        return seg;
    }

private:
    std::vector<std::vector<std::uint8_t>> streams_;
    std::vector<const std::uint8_t*> src_;
    std::vector<std::size_t> bytes_;
    std::vector<std::uint8_t> work_, all_zero_;
    std::vector<std::size_t> rze_, rans_in_, size_;
    std::unique_ptr<mans_test::RansCandidates> rans_;
    std::vector<dp::Method> method_;
    std::vector<const std::uint8_t*> payload_;
    dp::StreamBatch b_{};
};

const TeamPlay kPlays[] = {{1, false}, {32, false}, {32, true}, {64, true}};

struct Chunk {
    std::vector<std::uint32_t> words;
    unsigned planes = 0;
    std::string what;
};

Chunk make_chunk(const std::vector<std::int32_t>& q, std::size_t first, std::size_t len, dp::Coding c,
                 std::string what) {
    Chunk ch;
    ch.what = std::move(what);
    std::uint32_t any = 0;
    for (std::size_t j = 0; j < len; ++j) {
        ch.words.push_back(dp::encode_code(q[first + j], c));
        any |= ch.words.back();
    }
    ch.planes = dp::planes_for(any, c);
    return ch;
}

std::vector<Chunk> test_chunks(dp::Coding c) {
    std::vector<Chunk> chunks;
    const char* fields[] = {"levitus_temp_20x180x360.f32", "echam5_t_17x96x192.f32", "stageiv_precip_23x118x87.f32",
                            "cosmo_hsurf_438x450.f32"};
    for (const char* name : fields) {
        for (double rel : {1e-2, 1e-4}) {
            const std::vector<std::int32_t> q = mans_test::real_field_codes(name, rel, 300000);
            if (q.empty()) continue;
            // A full chunk (kChunkCodes) and a short one.
            const std::size_t len = std::min<std::size_t>(dp::kChunkCodes, q.size());
            chunks.push_back(make_chunk(q, 0, len, c, std::string(name) + " rel " + std::to_string(rel)));
            chunks.push_back(make_chunk(q, len / 3, 777, c, std::string(name) + " short"));
        }
    }
    // Synthetic: sparse spikes, all zero but one, dense large codes, tiny chunks.
    std::mt19937_64 rng(7);
    std::vector<std::int32_t> q(5000);
    for (auto& v : q) v = rng() % 61 == 0 ? static_cast<std::int32_t>(rng() % 20001) - 10000 : 0;
    chunks.push_back(make_chunk(q, 0, q.size(), c, "sparse spikes"));
    std::fill(q.begin(), q.end(), 0);
    q[4321] = -(dp::kMaxCode - 3);
    chunks.push_back(make_chunk(q, 0, q.size(), c, "one large code"));
    for (auto& v : q) v = dp::kMaxCode - 1 - static_cast<std::int32_t>(rng() % 1000);
    chunks.push_back(make_chunk(q, 0, q.size(), c, "dense large codes"));
    chunks.push_back(make_chunk(q, 10, 1, c, "one code"));
    chunks.push_back(make_chunk(q, 10, 63, c, "63 codes"));
    return chunks;
}

}  // namespace

TEST_CASE("stream batch: plane segments equal encode_plane_chunks' on real fields", "[prism][streams_hd][one_thread]") {
    unsigned seen[dp::kMethodCount] = {};
    std::size_t planes_checked = 0;
    for (dp::Coding c : {dp::Coding::negabinary, dp::Coding::sign_magnitude}) {
        for (const Chunk& ch : test_chunks(c)) {
            INFO(ch.what << ", " << ch.words.size() << " codes, " << ch.planes << " planes, coding "
                         << static_cast<int>(c));
            const std::uint64_t len = ch.words.size();
            const bool two_forms = c == dp::Coding::sign_magnitude && ch.planes >= 2;
            std::vector<std::vector<std::uint8_t>> cpu;
            std::vector<std::uint8_t> cpu_after_zero;
            dp::encode_plane_chunks(ch.words.data(), len, ch.planes, c, &cpu, two_forms ? &cpu_after_zero : nullptr);

            // The same planes' streams, batched: five per visited plane.
            std::vector<std::vector<std::uint8_t>> streams;
            std::vector<std::pair<unsigned, bool>> visited;
            dp::split_plane_chunks(ch.words.data(), len, ch.planes, c, two_forms,
                                   [&](unsigned b, bool variant, const std::uint32_t* s, std::uint64_t stride,
                                       const std::uint64_t* bits) {
                                       visited.emplace_back(b, variant);
                                       for (unsigned k = 0; k < dp::kPlaneStreams; ++k) {
                                           const auto* p = reinterpret_cast<const std::uint8_t*>(s + k * stride);
                                           streams.emplace_back(p, p + (bits[k] + 7) / 8);
                                       }
                                   });
            std::vector<bool> cpu_tried;  // encode_best's gate decision for each stream
            for (const auto& s : streams) {
                dp::Encoded e;
                dp::encode_best(s.data(), s.size(), 1, true, &e);
                cpu_tried.push_back(e.rans_tried);
            }
            for (const TeamPlay play : kPlays) {
                INFO("screening team " << play.size << (play.reverse ? " reversed" : ""));
                StreamBatchRun run(streams, 1, true);
                run.run(play);
                std::vector<bool> planes_seen(ch.planes, false);
                for (std::size_t p = 0; p < visited.size(); ++p) {
                    const auto [b, variant] = visited[p];
                    INFO("plane " << b << (variant ? " (after an all-zero plane)" : ""));
                    CHECK(run.plane_segment(p) == (variant ? cpu_after_zero : cpu[b]));
                    if (!variant) planes_seen[b] = true;
                    for (unsigned k = 0; k < dp::kPlaneStreams; ++k)  // the gate decided as encode_best did
                        CHECK(run.rans_tried(p * dp::kPlaneStreams + k) == cpu_tried[p * dp::kPlaneStreams + k]);
                    for (unsigned k = 0; k < dp::kPlaneStreams; ++k)
                        ++seen[static_cast<unsigned>(run.method(p * dp::kPlaneStreams + k))];
                    ++planes_checked;
                }
                for (unsigned b = 0; b < ch.planes; ++b)  // a plane not visited has no bits: no segment
                    if (!planes_seen[b]) CHECK(cpu[b].empty());
            }
        }
    }
    // Every method occurred, so every branch of the choice was compared.
    INFO("zero " << seen[0] << ", raw " << seen[1] << ", zero_elim " << seen[2] << ", rans " << seen[3]);
    CHECK(planes_checked > 100);
    for (unsigned m = 0; m < dp::kMethodCount; ++m) CHECK(seen[m] > 0);
}

TEST_CASE("stream batch: method and payload equal encode_best for widths 1, 4 and 8", "[prism][streams_hd][one_thread]") {
    // Streams that pick each method, of lengths around the rANS gate
    // (kRansMinBytes) and not multiples of the width.
    std::mt19937_64 rng(11);
    std::vector<std::vector<std::uint8_t>> streams;
    const std::size_t lengths[] = {0, 1, 63, 64, 65, 1000, 4096, 100003};
    for (std::size_t n : lengths) {
        std::vector<std::uint8_t> zero(n, 0), random(n), skewed(n), sparse(n, 0);
        for (auto& v : random) v = static_cast<std::uint8_t>(rng());
        for (auto& v : skewed) v = static_cast<std::uint8_t>(rng() % 5 == 0 ? rng() % 7 : 0x40 + rng() % 3);
        for (std::size_t i = 0; i < n; i += 97) sparse[i] = static_cast<std::uint8_t>(1 + rng() % 200);
        for (auto* s : {&zero, &random, &skewed, &sparse}) streams.push_back(*s);
    }
    // Real integer data: exafel detector values (u16) as bytes.
    const mans_test::Bytes ex = mans_test::exafel_prefix(96 * 1024);
    streams.emplace_back(ex.begin(), ex.end());
    for (unsigned width : {1u, 4u, 8u}) {
        for (bool try_rans : {true, false}) {
            for (const TeamPlay play : kPlays) {
                INFO("width " << width << ", try_rans " << try_rans << ", team " << play.size);
                StreamBatchRun run(streams, width, try_rans);
                run.run(play);
                unsigned rans = 0, gated = 0;
                for (std::size_t i = 0; i < streams.size(); ++i) {
                    INFO("stream " << i << " of " << streams[i].size() << " bytes");
                    dp::Encoded e;
                    dp::encode_best(streams[i].data(), streams[i].size(), width, try_rans, &e);
                    CHECK(run.method(i) == e.method);
                    CHECK(run.payload(i) == e.bytes);
                    CHECK(run.rans_tried(i) == e.rans_tried);  // the gate decided alike
                    rans += e.method == dp::Method::mans_rans;
                    gated += try_rans && !e.rans_tried && e.method != dp::Method::zero &&
                             streams[i].size() >= dp::kRansMinBytes && streams[i].size() % width == 0;
                }
                if (try_rans) CHECK(rans > 0);   // the rANS candidate was compared
                if (try_rans) CHECK(gated > 0);  // and streams that the entropy gate kept from it
            }
        }
    }
}

TEST_CASE("stream batch: work sizes", "[prism][streams_hd]") {
    // zero_elim_map_bytes sums the chain that plan_levels keeps, and grows
    // with n (so the largest stream's work size covers every stream).
    std::size_t prev = 0;
    for (std::size_t n = 0; n < 70000; n += n < 300 ? 1 : 37) {
        INFO("n = " << n);
        REQUIRE(dp::zero_elim_map_bytes(n) == dp::zero_elim_detail::plan_levels(n).total);
        REQUIRE(dp::stream_work_bytes(n) >= prev);
        prev = dp::stream_work_bytes(n);
    }
    for (std::size_t n : {std::size_t{1} << 32, ~std::size_t{0} / 4})
        CHECK(dp::zero_elim_map_bytes(n) == dp::zero_elim_detail::plan_levels(n).total);
}

TEST_CASE("rANS gate: order-0 entropy plus kRansGateBytes below 97 % of the best so far", "[prism][streams_hd]") {
    // 100 distinct bytes: an entropy of 100 * log2(100) bits, about 83 bytes.
    std::vector<std::uint8_t> p(100);
    for (std::size_t i = 0; i < p.size(); ++i) p[i] = static_cast<std::uint8_t>(i + 1);
    std::uint32_t counts[256] = {};
    for (std::uint8_t v : p) ++counts[v];
    const std::uint64_t entropy = d::entropy_cost_fix16(counts, 256);
    REQUIRE(entropy / d::kFixOne / 8 == 83);
    const std::uint64_t with_gate = entropy + dp::kRansGateBytes * 8 * d::kFixOne;
    // The smallest `best` that lets rANS be tried: 97 % of it above the estimate.
    std::size_t threshold = 0;
    while ((threshold * std::uint64_t{97} * 8 * d::kFixOne) <= with_gate * 100) ++threshold;
    CHECK(threshold == 119);  // (83.05 + 32) / 0.97 = 118.6; without the 32 bytes it would be 86
    std::uint64_t area[d::kTeamSharedWords];
    for (const TeamPlay play : {TeamPlay{1, false}, TeamPlay{32, true}})
        for (std::size_t best : {std::size_t{100}, threshold - 1, threshold, threshold + 50}) {
            INFO("team " << play.size << ", best " << best);
            std::uint32_t hist[256];
            bool tried = false;
            mans_test::with_team(play, area, [&](const auto& t) {
                tried = dp::rans_worth_trying(t, p.data(), p.size(), 1, true, best, hist);
            });
            CHECK(tried == (best >= threshold));
        }
    // The other conditions: rANS not allowed, elements cut, too short.
    std::uint32_t hist[256];
    CHECK_FALSE(dp::rans_worth_trying(d::SoloTeam{}, p.data(), p.size(), 1, false, 1000, hist));
    CHECK_FALSE(dp::rans_worth_trying(d::SoloTeam{}, p.data(), p.size(), 8, true, 1000, hist));
    CHECK_FALSE(dp::rans_worth_trying(d::SoloTeam{}, p.data(), dp::kRansMinBytes - 1, 1, true, 1000, hist));
    CHECK(dp::rans_worth_trying(d::SoloTeam{}, p.data(), p.size(), 4, true, 1000, hist));
}
