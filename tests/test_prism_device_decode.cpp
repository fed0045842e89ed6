// test_prism_device_decode.cpp - PRISM reconstruction as a GPU runs it
// (prism/device_decoder.hpp: segments parsed a thread each, the rANS
// streams by the device chunk decoder's steps, a team per chunk merging
// its planes, every pass's points on the full grid), here with the host
// executor that plays launches in reverse over memory full of garbage.
//   - The values equal the CPU Reader's, byte for byte, for full and
//     coarse retrievals of real and synthetic fields, both codings.
//   - A level's words equal decode_plane_chunks' (the CPU's), and a level
//     the CPU refuses (damaged bytes, a shortened segment) is refused with
//     the CPU's corrupt_block: nothing read out of bounds (ASan builds).
#include <catch2/catch.hpp>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "backend_fixture/host_exec.hpp"
#include "mans/prism.hpp"
#include "prism/archive.hpp"
#include "prism/base.hpp"
#include "prism/device_decoder.hpp"
#include "prism/plane_coding.hpp"
#include "prism_hd_steps.hpp"
#include "test_support.hpp"

namespace dp = mans::detail::prism;
using mans::Errc;

namespace {

using HostExec = mans_fixture::HostExec;

struct Parsed {
    dp::Header h;
    dp::BaseData base;
};

Parsed parse(const mans_test::Bytes& archive) {
    Parsed p;
    REQUIRE(dp::parse_header(archive.data(), archive.size(), archive.size(), &p.h) == Errc::ok);
    REQUIRE(dp::decode_base(archive.data() + p.h.header_bytes, static_cast<std::size_t>(p.h.base_bytes), p.h, &p.base) ==
            Errc::ok);
    return p;
}

// Planes [0, kept) of level l as stored, in the executor's memory.
const std::uint8_t* level_planes(HostExec& ex, const mans_test::Bytes& archive, const dp::Header& h, unsigned l,
                                 unsigned kept) {
    const std::uint64_t begin = h.plane_range_begin(l, 0), bytes = h.plane_range_bytes(l, 0, kept);
    std::uint8_t* p = ex.alloc<std::uint8_t>(bytes);
    ex.to_device(p, archive.data() + begin, static_cast<std::size_t>(bytes));
    return p;
}

template <typename T>
mans_test::Bytes device_values(const mans_test::Bytes& archive, const std::vector<std::uint32_t>& kept,
                               unsigned team_size) {
    const Parsed p = parse(archive);
    HostExec ex;
    ex.team_size = team_size;
    std::vector<const std::uint8_t*> levels(p.h.levels, nullptr);
    for (unsigned l = 0; l < p.h.levels; ++l)
        if (kept[l]) levels[l] = level_planes(ex, archive, p.h, l, kept[l]);
    T* out = ex.alloc<T>(p.h.grid.count);
    REQUIRE(dp::device_reconstruct<T>(ex, p.h, p.base, levels, kept, out) == Errc::ok);
    CHECK(ex.launches > 3);
    mans_test::Bytes bytes(static_cast<std::size_t>(p.h.grid.count * sizeof(T)));
    ex.to_host(bytes.data(), out, bytes.size());
    return bytes;
}

using Case = mans_test::PrismCase;

mans_test::Bytes compress(const Case& k, mans::prism::PlaneCoding coding) {
    const mans::prism::CompressConfig cfg = mans_test::case_config(k, coding);
    mans_test::Bytes archive;
    REQUIRE(mans::prism::compress(k.raw.data(), k.raw.size(), cfg, &archive) == Errc::ok);
    return archive;
}

// Every target's device values against the Reader's; returns how many
// retrievals cut some level's planes.
unsigned check_case(const Case& k, mans::prism::PlaneCoding coding, unsigned team_size) {
    INFO(k.what << " rel " << k.rel << ", coding " << static_cast<int>(coding) << ", team " << team_size);
    const mans_test::Bytes archive = compress(k, coding);
    mans::prism::Reader r;
    REQUIRE(mans::prism::Reader::open(mans::prism::memory_source(archive.data(), archive.size()), &r) == Errc::ok);
    unsigned cut = 0;
    for (const double rel : {0.0, 1e-1, 1e-2, 4 * k.rel}) {
        if (rel > 0 && rel <= k.rel) continue;  // a coarse bound only
        const mans::prism::Target target = rel > 0 ? mans::prism::Target::rel(rel) : mans::prism::Target::full();
        mans::prism::Retrieval cpu;
        REQUIRE(r.retrieve(target, &cpu, 2) == Errc::ok);
        const std::vector<std::uint32_t> kept = cpu.stats().planes;
        std::string planes;
        for (std::uint32_t v : kept) planes += std::to_string(v) + " ";
        INFO("planes kept per level: " << planes);
        const mans_test::Bytes gpu = k.type == mans::prism::FloatType::f32 ? device_values<float>(archive, kept, team_size)
                                                                            : device_values<double>(archive, kept, team_size);
        REQUIRE(gpu.size() == cpu.bytes());
        std::size_t first_diff = 0;
        const auto* want = static_cast<const std::uint8_t*>(cpu.data());
        while (first_diff < gpu.size() && gpu[first_diff] == want[first_diff]) ++first_diff;
        INFO("first differing byte " << first_diff << " of " << gpu.size());
        CHECK(first_diff == gpu.size());
        const Parsed p = parse(archive);
        for (unsigned l = 0; l < p.h.levels; ++l)
            if (kept[l] < p.h.level[l].planes) {
                ++cut;
                break;
            }
    }
    return cut;
}

// Level l's words from planes [0, kept) by the CPU (decode_plane_chunks,
// chunk by chunk); corrupt_block when any chunk is refused.
Errc cpu_words(const dp::Header& h, const std::uint8_t* level, unsigned l, unsigned kept, std::vector<std::uint32_t>* words) {
    const std::uint64_t codes = h.level[l].codes, chunk = h.chunk_codes, begin = h.plane_range_begin(l, 0);
    words->assign(static_cast<std::size_t>(codes), 0);
    for (std::uint64_t ch = 0; ch < h.chunks(l); ++ch) {
        const std::uint8_t* payload[dp::kMaxPlanes];
        std::size_t size[dp::kMaxPlanes];
        for (unsigned b = 0; b < kept; ++b) {
            const std::size_t si = h.segment_index(l, b, ch);
            payload[b] = level + (h.segment_offset[si] - begin);
            size[b] = h.segments[si].stored;
        }
        const Errc e = dp::decode_plane_chunks(payload, size, words->data() + ch * chunk, std::min(chunk, codes - ch * chunk),
                                               0, kept, h.level[l].planes, h.coding);
        if (e != Errc::ok) return e;
    }
    return Errc::ok;
}

// The device's words of level l against the CPU's, from `level` (the
// planes' bytes, possibly damaged) under header h (possibly altered).
// Returns the CPU's result, which the device's must equal.
Errc compare_level(const dp::Header& h, const std::vector<std::uint8_t>& level, unsigned l, unsigned kept,
                   unsigned team_size) {
    std::vector<std::uint32_t> want;
    const Errc cpu = cpu_words(h, level.data(), l, kept, &want);
    HostExec ex;
    ex.team_size = team_size;
    std::uint8_t* dev = ex.alloc<std::uint8_t>(level.size());
    ex.to_device(dev, level.data(), level.size());
    std::uint32_t* words = ex.alloc<std::uint32_t>(h.level[l].codes);
    const Errc gpu = dp::device_decode_level(ex, h, l, kept, dev, words);
    CHECK(gpu == cpu);
    if (gpu == Errc::ok && cpu == Errc::ok) {
        std::vector<std::uint32_t> got(want.size());
        ex.to_host(got.data(), words, got.size() * 4);
        CHECK(got == want);
    }
    return cpu;
}

}  // namespace

TEST_CASE("PRISM values reconstructed by the HD steps in GPU order equal the CPU reader's",
          "[prism][device_decode][one_thread]") {
    const std::vector<Case> all = mans_test::prism_cases();
    CHECK(all.size() >= 9);
    unsigned k = 0, cut = 0;
    for (const Case& c : all)
        for (auto coding : {mans::prism::PlaneCoding::negabinary, mans::prism::PlaneCoding::sign_magnitude}) {
            const unsigned teams[] = {32, 1, 64};
            cut += check_case(c, coding, teams[k++ % 3]);
        }
    CHECK(cut >= all.size());  // coarse retrievals were compared, not only full ones
}

TEST_CASE("PRISM plane decoding in GPU order refuses what the CPU refuses", "[prism][device_decode][one_thread]") {
    const std::vector<Case> all = mans_test::prism_cases();
    std::mt19937_64 rng(20261203);
    unsigned refused = 0, accepted_damage = 0, levels = 0;
    std::uint64_t rans_streams = 0;
    for (std::size_t ci = 0; ci < all.size(); ci += 2)
        for (auto coding : {mans::prism::PlaneCoding::negabinary, mans::prism::PlaneCoding::sign_magnitude}) {
            INFO(all[ci].what << ", coding " << static_cast<int>(coding));
            const mans_test::Bytes archive = compress(all[ci], coding);
            const Parsed p = parse(archive);
            for (unsigned l = 0; l < p.h.levels; ++l) {
                const unsigned kept = p.h.level[l].planes;
                if (!kept) continue;
                INFO("level " << l << " of " << p.h.levels << ", " << kept << " planes");
                const std::uint64_t begin = p.h.plane_range_begin(l, 0), bytes = p.h.plane_range_bytes(l, 0, kept);
                std::vector<std::uint8_t> level(archive.begin() + begin, archive.begin() + begin + bytes);
                REQUIRE(compare_level(p.h, level, l, kept, 32) == Errc::ok);
                ++levels;
                for (std::size_t b = 0; b + 1 < level.size(); ++b)  // rANS frames in the level (their magic)
                    rans_streams += level[b] == 'M' && b + 4 <= level.size() && std::memcmp(&level[b], "MANS", 4) == 0;
                // Damaged bytes: a few flips, anywhere in the level.
                for (int trial = 0; trial < 6 && !level.empty(); ++trial) {
                    std::vector<std::uint8_t> bad = level;
                    const std::size_t at = static_cast<std::size_t>(rng() % bad.size());
                    bad[at] ^= static_cast<std::uint8_t>(1u << (rng() % 8));
                    INFO("flipped a bit of byte " << at);
                    const Errc e = compare_level(p.h, bad, l, kept, trial % 2 ? 1 : 32);
                    (e == Errc::ok ? accepted_damage : refused) += 1;
                }
                // A segment one byte short (the header altered, the bytes as they are).
                dp::Header h = p.h;
                const std::size_t si = h.segment_index(l, kept - 1, h.chunks(l) - 1);
                if (h.segments[si].stored > 0) {
                    h.segments[si].stored -= 1;
                    CHECK(compare_level(h, level, l, kept, 32) == Errc::corrupt_block);
                }
            }
        }
    INFO(levels << " levels, " << refused << " damaged levels refused, " << accepted_damage << " accepted");
    CHECK(levels > 10);
    CHECK(refused > 10);  // the damage reached the checks (a flip in a raw stream may decode to other bits)
    CHECK(rans_streams > 0);  // rANS streams were decoded by the chunk decoder's steps
}

namespace {

// Level l's bytes (planes [0, kept)) with segment (plane 0, chunk 0)
// replaced by `seg`, and *h altered to match.
std::vector<std::uint8_t> with_segment(dp::Header* h, const mans_test::Bytes& archive, unsigned l, unsigned kept,
                                       const std::vector<std::uint8_t>& seg) {
    const std::uint64_t begin = h->plane_range_begin(l, 0), bytes = h->plane_range_bytes(l, 0, kept);
    const std::size_t si = h->segment_index(l, 0, 0);
    const std::uint64_t at = h->segment_offset[si] - begin, old = h->segments[si].stored;
    std::vector<std::uint8_t> level(archive.begin() + begin, archive.begin() + begin + bytes);
    level.erase(level.begin() + at, level.begin() + at + old);
    level.insert(level.begin() + at, seg.begin(), seg.end());
    const std::int64_t delta = static_cast<std::int64_t>(seg.size()) - static_cast<std::int64_t>(old);
    h->segments[si].stored = static_cast<std::uint32_t>(seg.size());
    for (std::size_t k = si + 1; k < h->segment_offset.size(); ++k) h->segment_offset[k] += delta;
    h->total_bytes += delta;
    return level;
}

// A plane segment whose first context stream is the given MANS frame (rANS method), the others all zero.
std::vector<std::uint8_t> rans_segment(const std::vector<std::uint8_t>& frame) {
    std::vector<std::uint8_t> seg = {static_cast<std::uint8_t>(dp::Method::mans_rans), 0};
    std::uint8_t v[16];
    const unsigned n = mans::detail::encode_varint(frame.size(), v);
    seg.insert(seg.end(), v, v + n);
    seg.insert(seg.end(), frame.begin(), frame.end());
    return seg;
}

std::vector<std::uint8_t> mans_frame(mans::DType t, std::size_t elems) {
    const std::size_t es = mans::dtype_size(t);
    std::vector<std::uint8_t> raw(elems * es);
    for (std::size_t i = 0; i < raw.size(); ++i) raw[i] = static_cast<std::uint8_t>(i * 7 % 13);
    mans::CompressConfig cfg;
    cfg.dtype = t;
    cfg.backend = mans::Backend::cpu;
    std::vector<std::uint8_t> out(mans::compress_bound(raw.size()));
    const mans::Result r = mans::compress(out.data(), out.size(), raw.data(), raw.size(), cfg);
    REQUIRE(r);
    out.resize(r.size);
    return out;
}

}  // namespace

TEST_CASE("PRISM plane decoding in GPU order refuses rANS frames of another type or size, as the CPU does",
          "[prism][device_decode][one_thread]") {
    const std::vector<Case> all = mans_test::prism_cases();
    const mans_test::Bytes archive = compress(all[0], mans::prism::PlaneCoding::negabinary);
    const Parsed p = parse(archive);
    unsigned l = 0;
    while (l < p.h.levels && p.h.level[l].planes == 0) ++l;
    REQUIRE(l < p.h.levels);
    const unsigned kept = p.h.level[l].planes;
    // Valid frames (their checksums hold) that a plane chunk cannot hold:
    // u64 and u16 elements (slots sized as u8 would overflow), u8 of 0, of 3
    // and of too many elements; each is refused by the CPU, and the device
    // must refuse it too (ASan builds check that nothing is written past a slot).
    const std::pair<mans::DType, std::size_t> frames[] = {
        {mans::DType::u64, 256}, {mans::DType::u16, 2048}, {mans::DType::u8, 0}, {mans::DType::u8, 3},
        {mans::DType::u8, 20000}};
    for (const auto& f : frames) {
        INFO("dtype " << static_cast<int>(f.first) << ", " << f.second << " elements");
        dp::Header h = p.h;
        const std::vector<std::uint8_t> level = with_segment(&h, archive, l, kept, rans_segment(mans_frame(f.first, f.second)));
        CHECK(compare_level(h, level, l, kept, 32) == Errc::corrupt_block);
    }
}
