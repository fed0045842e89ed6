// host_exec.hpp - prism/device_encoder.hpp's executor on the host, as a GPU
// would be at its least friendly: memory full of garbage, launches that
// run their items last to first, a team per item that is a LoopTeam of
// team_size ranks (reversed when asked) with shared scratch full of
// garbage, and the rANS candidates coded by the device chunk encoder's
// steps (mapping/chunk_batch.hpp: a wave of three reused scratch slices,
// teams in reverse). Used by test_prism_device_order and by the stand-in
// module's prism_compress (fixture_module.cpp), so that the core's GPU
// dispatch runs the kernels' code here; with the chunk decoder's steps for
// prism/device_decoder.hpp (test_prism_device_decode).
#pragma once

#include <cstdint>
#include <cstring>
#include <memory>
#include <vector>

#include "core/team.hpp"
#include "mapping/chunk_batch.hpp"
#include "prism/device_decoder.hpp"
#include "prism/device_encoder.hpp"

namespace mans_fixture {

struct HostExec {
    using Team = mans::detail::LoopTeam;
    using Transpose = mans::detail::prism::LoopTranspose;
    unsigned team_size = 32;
    bool reverse = true;
    std::vector<std::unique_ptr<std::uint8_t[]>> arena;
    std::uint64_t launches = 0;

    template <typename U>
    U* alloc(std::uint64_t n) {
        const std::size_t bytes = static_cast<std::size_t>(n * sizeof(U)) + 1;
        arena.push_back(std::make_unique<std::uint8_t[]>(bytes));
        std::memset(arena.back().get(), 0xA5, bytes);
        return reinterpret_cast<U*>(arena.back().get());
    }
    std::size_t mark() const { return arena.size(); }
    void release(std::size_t m) {
        if (m < arena.size()) arena.resize(m);
    }
    void to_host(void* dst, const void* src, std::size_t bytes) {
        if (bytes) std::memcpy(dst, src, bytes);
    }
    void to_device(void* dst, const void* src, std::size_t bytes) {
        if (bytes) std::memcpy(dst, src, bytes);
    }
    template <typename F>
    void threads(std::uint64_t n, F fn) {
        ++launches;
        for (std::uint64_t i = n; i-- > 0;) fn(i);
    }
    template <typename F>
    void teams(std::uint64_t n, F fn) {
        ++launches;
        mans::detail::prism::TeamScratch s;
        for (std::uint64_t i = n; i-- > 0;) {
            std::memset(&s, 0xA5, sizeof s);
            fn(Team{team_size, s.area, reverse}, &s, i);
        }
    }
    mans::Errc finish() const { return mans::Errc::ok; }  // launches ran when they returned
    mans::Errc rans_candidates(const mans::detail::prism::StreamBatch& b, mans_backend_chunk_batch* a) {
        namespace d = mans::detail;
        const mans::Errc e = d::prism::bind_rans_candidates(*this, b, {~std::uint64_t{0}, 3}, a);
        if (e != mans::Errc::ok || a->chunks == 0) return e;
        const unsigned esize = b.width;
        const std::uint64_t wave = d::chunk_encode_wave(esize, *a);
        const d::ChunkEncodeLayout l = d::chunk_encode_layout(esize, a->block_elems, a->chunks, a->max_in_bytes, wave);
        if (l.total_blocks && wave == 0) return mans::Errc::internal;
        std::uint64_t area[d::kTeamSharedWords];
        for (std::uint64_t item = l.wave_blocks; item-- > 0;) {
            for (auto& w : area) w = 0xA5A5A5A5A5A5A5A5ull;
            d::encode_chunk_blocks_strided_any(*a, l, item, d::LoopTeam{32, area, item % 2 == 1});
        }
        for (std::uint64_t c = a->chunks; c-- > 0;) d::finish_chunk_encode(*a, l, c);
        for (std::uint64_t g = l.total_blocks; g-- > 0;) d::place_chunk_block(*a, l, g);
        return mans::Errc::ok;
    }
    // The chunk decoder's steps (mapping/chunk_batch.hpp) with a wave of
    // three reused scratch slices, every step's items in reverse.
    mans::Errc rans_decode(mans_backend_chunk_batch* a) {
        namespace d = mans::detail;
        const mans::Errc e = d::prism::bind_rans_decode(*this, a, 3);
        if (e != mans::Errc::ok) return e;
        const std::uint64_t wave = d::chunk_decode_wave(*a);
        const d::ChunkDecodeLayout l = d::chunk_decode_layout(a->chunks, a->out_capacity, a->max_block_bytes, wave);
        if (wave == 0) return mans::Errc::internal;
        for (std::uint64_t c = a->chunks; c-- > 0;) d::parse_chunk(*a, l, c);
        for (std::uint64_t t = l.list_tiles; t-- > 0;) d::sum_list_tile(*a, l, t);
        d::scan_list_tiles(*a, l);
        for (std::uint64_t c = a->chunks; c-- > 0;) d::first_chunk_block(*a, l, c);
        for (std::uint64_t g = l.total_blocks; g-- > 0;) d::list_chunk_block(*a, l, g);
        std::uint64_t area[d::kTeamSharedWords];
        for (std::uint64_t item = wave; item-- > 0;) {
            for (auto& w : area) w = 0xA5A5A5A5A5A5A5A5ull;
            d::decode_chunk_blocks_strided(*a, l, item, d::LoopTeam{32, area, item % 2 == 1});
        }
        for (std::uint64_t c = a->chunks; c-- > 0;) d::finish_chunk_decode(*a, l, c);
        return mans::Errc::ok;
    }
};

}  // namespace mans_fixture
