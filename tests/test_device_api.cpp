// test_device_api.cpp - the device-memory API (mans/mans_device.h) through
// the host stand-in module (backend_fixture, FIXTURE_CODER), whose chunk
// entries run the GPU kernels' steps (mapping/chunk_batch.hpp) in loops over
// host memory. Hidden tag [dispatch_chunks]: ctest runs it as
// `backend_device_api` with MANS_BACKEND_PATH at the stand-in (its "device
// pointers" are host pointers, so it cannot run against a real GPU module).
//
// Every chunk's stream must be the CPU's mans_compress stream, byte for
// byte; every decode the input; every damaged stream the CPU's error.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstring>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "mans/mans.hpp"
#include "mans/mans_device.h"
#include "mans/prism.h"
#include "core/frame.hpp"
#include "mapping/chunk_batch.hpp"
#include "test_support.hpp"

using mans::Errc;
using mans_test::Bytes;

namespace {

struct Device {
    mans_device* dev = nullptr;
    Device() {
        const mans_status st = mans_device_open(MANS_BACKEND_AUTO, &dev);
        INFO(mans_device_unavailable_reason(MANS_BACKEND_AUTO));
        REQUIRE(st == MANS_OK);
    }
    ~Device() { mans_device_close(dev); }
};

// The arrays of one call, in host memory (the stand-in's "device"):
// inputs, outputs of out_capacity bytes, results preset to garbage, temp.
struct HostBatch {
    std::vector<const void*> in_ptrs;
    std::vector<size_t> in_bytes;
    std::vector<Bytes> out;
    std::vector<void*> out_ptrs;
    std::vector<size_t> out_bytes;
    std::vector<mans_status> statuses;
    std::vector<std::uint8_t> temp;
    HostBatch(const std::vector<Bytes>& inputs, size_t out_capacity, size_t temp_bytes)
        : out(inputs.size(), Bytes(out_capacity, 0xEE)), out_bytes(inputs.size(), 12345),
          statuses(inputs.size(), MANS_ERR_INTERNAL), temp(temp_bytes, 0x5A) {
        for (size_t c = 0; c < inputs.size(); ++c) {
            in_ptrs.push_back(inputs[c].data());
            in_bytes.push_back(inputs[c].size());
            out_ptrs.push_back(out[c].data());
        }
    }
    // Each output cut to its size (empty unless its status is MANS_OK).
    std::vector<Bytes> results() {
        for (size_t c = 0; c < out.size(); ++c) out[c].resize(statuses[c] == MANS_OK ? out_bytes[c] : 0);
        return out;
    }
};

struct Compressed {
    mans_status call = MANS_OK;
    std::vector<Bytes> streams;  // out_bytes[c] bytes of each output
    std::vector<size_t> out_bytes;
    std::vector<mans_status> statuses;
};

// Compresses the chunks in one batch; temp_bytes 0: what the query says.
Compressed device_compress(mans_device* dev, mans::DType dt, size_t block_bytes, const std::vector<Bytes>& chunks,
                           size_t max_chunk_bytes, size_t out_capacity = 0, size_t temp_bytes = 0) {
    if (out_capacity == 0) out_capacity = mans_device_compress_max_output_bytes(max_chunk_bytes);
    size_t query = 0;
    REQUIRE(mans_device_compress_temp_bytes(dev, static_cast<mans_dtype>(dt), block_bytes, chunks.size(),
                                            max_chunk_bytes, &query) == MANS_OK);
    HostBatch h(chunks, out_capacity, temp_bytes ? temp_bytes : query);
    Compressed r;
    r.call = mans_device_compress_async(dev, static_cast<mans_dtype>(dt), block_bytes, h.in_ptrs.data(),
                                        h.in_bytes.data(), max_chunk_bytes, chunks.size(), h.temp.data(),
                                        h.temp.size(), h.out_ptrs.data(), out_capacity, h.out_bytes.data(),
                                        h.statuses.data(), nullptr);
    r.streams = h.results();
    r.out_bytes = h.out_bytes;
    r.statuses = h.statuses;
    return r;
}

struct Decompressed {
    mans_status call = MANS_OK;
    std::vector<Bytes> data;
    std::vector<size_t> out_bytes;
    std::vector<mans_status> statuses;
};

Decompressed device_decompress(mans_device* dev, const std::vector<Bytes>& streams, size_t out_capacity,
                               size_t max_block_bytes = 0, size_t temp_bytes = 0) {
    size_t query = 0;
    REQUIRE(mans_device_decompress_temp_bytes(dev, streams.size(), out_capacity, max_block_bytes, &query) == MANS_OK);
    HostBatch h(streams, out_capacity, temp_bytes ? temp_bytes : query);
    Decompressed r;
    r.call = mans_device_decompress_async(dev, h.in_ptrs.data(), h.in_bytes.data(), streams.size(), max_block_bytes,
                                          h.temp.data(), h.temp.size(), h.out_ptrs.data(), out_capacity,
                                          h.out_bytes.data(), h.statuses.data(), nullptr);
    r.data = h.results();
    r.out_bytes = h.out_bytes;
    r.statuses = h.statuses;
    return r;
}

Bytes cpu_stream(const Bytes& raw, mans::DType dt, size_t block_bytes) {
    mans::CompressConfig cfg;
    cfg.backend = mans::Backend::cpu;
    cfg.dtype = dt;
    cfg.block_bytes = block_bytes;
    Errc e = Errc::ok;
    Bytes s = mans_test::compress(raw, cfg, &e);
    REQUIRE(e == Errc::ok);
    return s;
}

mans_status cpu_decode_status(const Bytes& stream, size_t cap) {
    mans::DecompressConfig cfg;
    cfg.backend = mans::Backend::cpu;
    Errc e = Errc::ok;
    mans_test::decompress(stream, cap, cfg, &e);
    return static_cast<mans_status>(e);
}

}  // namespace

TEST_CASE("device API: a forced CPU or an unknown backend is refused with a reason", "[.][dispatch_chunks]") {
    mans_device* dev = nullptr;
    REQUIRE(mans_device_open(MANS_BACKEND_CPU, &dev) == MANS_ERR_BACKEND_UNAVAILABLE);
    REQUIRE(dev == nullptr);
    REQUIRE(std::strlen(mans_device_unavailable_reason(MANS_BACKEND_CPU)) > 0);
    REQUIRE(mans_device_open(static_cast<mans_backend>(9), &dev) == MANS_ERR_INVALID_ARGUMENT);
    REQUIRE(std::strcmp(mans_device_unavailable_reason(MANS_BACKEND_AUTO), "") == 0);
    Device d;
    REQUIRE(std::string(mans_device_description(d.dev)).rfind("cuda (", 0) == 0);
    REQUIRE(mans_device_compresses(d.dev) == 1);
}

TEST_CASE("device API: each chunk's stream is the CPU's, and decodes to the input", "[.][dispatch_chunks]") {
    Device d;
    for (mans::DType dt : mans_test::kAllDTypes) {
        const size_t es = mans::dtype_size(dt);
        for (size_t block_bytes : {size_t{0}, size_t{4096}}) {
            // Sizes from empty to several blocks, in one batch, mixed mappings.
            std::vector<Bytes> chunks;
            std::uint64_t seed = 100;
            for (size_t n : {size_t{0}, size_t{1}, size_t{3}, size_t{2049}, size_t{70001}, size_t{150000}})
                chunks.push_back(mans_test::generate_mixed(dt, n, block_bytes ? block_bytes / es : 65536 / es, seed++));
            chunks.push_back(mans_test::generate(dt, mans_test::Dist::constant, 9000, seed++));
            size_t max_bytes = 0;
            for (const Bytes& c : chunks) max_bytes = std::max(max_bytes, c.size());
            INFO("dtype " << mans::dtype_name(dt) << ", block bytes " << block_bytes);
            const Compressed comp = device_compress(d.dev, dt, block_bytes, chunks, max_bytes);
            REQUIRE(comp.call == MANS_OK);
            for (size_t c = 0; c < chunks.size(); ++c) {
                INFO("chunk " << c << " of " << chunks[c].size() << " bytes");
                REQUIRE(comp.statuses[c] == MANS_OK);
                const Bytes cpu = cpu_stream(chunks[c], dt, block_bytes);
                REQUIRE(comp.out_bytes[c] == cpu.size());
                REQUIRE(comp.streams[c] == cpu);
            }
            const Decompressed dec = device_decompress(d.dev, comp.streams, max_bytes, block_bytes);
            REQUIRE(dec.call == MANS_OK);
            for (size_t c = 0; c < chunks.size(); ++c) {
                INFO("chunk " << c);
                REQUIRE(dec.statuses[c] == MANS_OK);
                REQUIRE(dec.out_bytes[c] == chunks[c].size());
                REQUIRE(dec.data[c] == chunks[c]);
            }
        }
    }
}

TEST_CASE("device API: real fields as chunks, through a temp of one block in flight", "[.][dispatch_chunks]") {
    Device d;
    const Bytes exafel = mans_test::exafel_prefix(1 << 20);
    std::vector<Bytes> chunks;
    for (size_t at = 0; at + 262144 <= exafel.size(); at += 262144)
        chunks.emplace_back(exafel.begin() + static_cast<std::ptrdiff_t>(at),
                            exafel.begin() + static_cast<std::ptrdiff_t>(at + 262144));
    // Temp of the fixed part plus k scratch slices (the layout the core and
    // the modules share): k blocks in flight, in waves.
    const mans::detail::ChunkEncodeLayout l = mans::detail::chunk_encode_layout(2, 65536, chunks.size(), 262144, 0);
    REQUIRE(l.total_blocks == 2 * chunks.size());
    const Compressed tiny = device_compress(d.dev, mans::DType::u16, 0, chunks, 262144, 0, l.total + l.slice - 1);
    REQUIRE(tiny.call == MANS_ERR_INVALID_ARGUMENT);  // not even one block in flight: refused before anything runs
    const mans::detail::ChunkDecodeLayout dl = mans::detail::chunk_decode_layout(chunks.size(), 262144, 131072, 0);
    for (size_t k : {size_t{1}, size_t{3}, size_t{8}}) {
        INFO(k << " blocks in flight");
        const Compressed comp = device_compress(d.dev, mans::DType::u16, 0, chunks, 262144, 0, l.total + k * l.slice);
        REQUIRE(comp.call == MANS_OK);
        for (size_t c = 0; c < chunks.size(); ++c) {
            REQUIRE(comp.statuses[c] == MANS_OK);
            REQUIRE(comp.streams[c] == cpu_stream(chunks[c], mans::DType::u16, 0));
        }
        const Decompressed dec = device_decompress(d.dev, comp.streams, 262144, 0, dl.total + k * dl.slice);
        REQUIRE(dec.call == MANS_OK);
        for (size_t c = 0; c < chunks.size(); ++c) {
            REQUIRE(dec.statuses[c] == MANS_OK);
            REQUIRE(dec.data[c] == chunks[c]);
        }
    }
    const Compressed comp = device_compress(d.dev, mans::DType::u16, 0, chunks, 262144);
    REQUIRE(device_decompress(d.dev, comp.streams, 262144, 0, dl.total + dl.slice - 1).call == MANS_ERR_INVALID_ARGUMENT);
}

TEST_CASE("device API: chunks smaller than a block get scratch slices sized for them", "[.][dispatch_chunks]") {
    // HDF5-sized chunks (and PRISM's streams) are often smaller than a
    // 128 KiB block: the slices are sized for the largest chunk, so a temp
    // budget holds more blocks in flight. Slices too small for a block
    // would overrun (ASan watches this run) or fail the block.
    Device d;
    const Bytes exafel = mans_test::exafel_prefix(1 << 20);
    const mans::detail::ChunkEncodeLayout whole = mans::detail::chunk_encode_layout(2, 65536, 1, 131072, 0);
    for (const size_t chunk_bytes : {size_t{9002}, size_t{16384}, size_t{65536}}) {
        INFO(chunk_bytes << "-byte chunks");
        std::vector<Bytes> chunks;
        for (size_t at = 0; at + chunk_bytes <= exafel.size() && chunks.size() < 24; at += 3 * chunk_bytes + 2)
            chunks.emplace_back(exafel.begin() + static_cast<std::ptrdiff_t>(at),
                                exafel.begin() + static_cast<std::ptrdiff_t>(at + chunk_bytes));
        chunks.emplace_back(exafel.begin(), exafel.begin() + 6);  // and a tiny one
        const mans::detail::ChunkEncodeLayout l =
            mans::detail::chunk_encode_layout(2, 65536, chunks.size(), chunk_bytes, 0);
        REQUIRE(l.slice_elems == chunk_bytes / 2);
        REQUIRE(l.slice < whole.slice);
        REQUIRE(device_compress(d.dev, mans::DType::u16, 0, chunks, chunk_bytes, 0, l.total + l.slice - 1).call ==
                MANS_ERR_INVALID_ARGUMENT);
        for (size_t k : {size_t{1}, size_t{2}, size_t{0}}) {  // 0: the temp the query gives
            INFO((k ? std::to_string(k) : std::string("the query's")) << " blocks in flight");
            const Compressed comp =
                device_compress(d.dev, mans::DType::u16, 0, chunks, chunk_bytes, 0, k ? l.total + k * l.slice : 0);
            REQUIRE(comp.call == MANS_OK);
            for (size_t c = 0; c < chunks.size(); ++c) {
                INFO("chunk " << c);
                REQUIRE(comp.statuses[c] == MANS_OK);
                REQUIRE(comp.streams[c] == cpu_stream(chunks[c], mans::DType::u16, 0));
            }
            const Decompressed dec = device_decompress(d.dev, comp.streams, chunk_bytes);
            REQUIRE(dec.call == MANS_OK);
            for (size_t c = 0; c < chunks.size(); ++c) REQUIRE(dec.data[c] == chunks[c]);
        }
    }
    // The query's temp: the fixed part and slices for 9,002 bytes, not for
    // a block (a u16 slice keeps its 256 KiB value map and its work areas
    // at any size: 0.57 MB for 9,002 bytes, 1.98 MB for a block).
    size_t small = 0, large = 0;
    REQUIRE(mans_device_compress_temp_bytes(d.dev, MANS_DTYPE_U16, 0, 16, 9002, &small) == MANS_OK);
    REQUIRE(mans_device_compress_temp_bytes(d.dev, MANS_DTYPE_U16, 0, 16, 131072, &large) == MANS_OK);
    CHECK(small * 3 < large);
}

TEST_CASE("device API: per-chunk argument errors leave the other chunks coded", "[.][dispatch_chunks]") {
    Device d;
    const Bytes good = mans_test::generate(mans::DType::u32, mans_test::Dist::skewed, 5000, 1);
    Bytes odd = good;
    odd.resize(odd.size() - 3);  // not a multiple of 4
    Bytes big = mans_test::generate(mans::DType::u32, mans_test::Dist::skewed, 6000, 2);
    const std::vector<Bytes> chunks = {good, odd, big, good};
    const Compressed comp = device_compress(d.dev, mans::DType::u32, 0, chunks, good.size());
    REQUIRE(comp.call == MANS_OK);
    REQUIRE(comp.statuses[0] == MANS_OK);
    REQUIRE(comp.statuses[1] == MANS_ERR_SIZE_NOT_MULTIPLE);
    REQUIRE(comp.statuses[2] == MANS_ERR_INVALID_ARGUMENT);  // above max_chunk_bytes
    REQUIRE(comp.statuses[3] == MANS_OK);
    REQUIRE(comp.streams[3] == cpu_stream(good, mans::DType::u32, 0));

    // An output too small: the status says so and out_bytes the size needed.
    const Bytes cpu = cpu_stream(good, mans::DType::u32, 0);
    const Compressed small = device_compress(d.dev, mans::DType::u32, 0, {good}, good.size(), cpu.size() - 1);
    REQUIRE(small.statuses[0] == MANS_ERR_DST_TOO_SMALL);
    REQUIRE(small.out_bytes[0] == cpu.size());
    const Compressed exact = device_compress(d.dev, mans::DType::u32, 0, {good}, good.size(), cpu.size());
    REQUIRE(exact.statuses[0] == MANS_OK);
    REQUIRE(exact.streams[0] == cpu);

    // Decompression into too small an output.
    const Decompressed dec = device_decompress(d.dev, {cpu}, good.size() - 4);
    REQUIRE(dec.statuses[0] == MANS_ERR_DST_TOO_SMALL);
    REQUIRE(dec.out_bytes[0] == good.size());
    // Temp sizes that would overflow are refused, not wrapped.
    size_t huge_temp = 0;
    REQUIRE(mans_device_compress_temp_bytes(d.dev, MANS_DTYPE_U8, 64u << 20, 1, SIZE_MAX - (size_t{1} << 42),
                                            &huge_temp) == MANS_ERR_INVALID_ARGUMENT);
    REQUIRE(mans_device_decompress_temp_bytes(d.dev, size_t{1} << 40, SIZE_MAX / 2, 0, &huge_temp) ==
            MANS_ERR_INVALID_ARGUMENT);
    // Bad call arguments.
    REQUIRE(mans_device_compress_async(d.dev, static_cast<mans_dtype>(0), 0, nullptr, nullptr, 0, 1, nullptr, 0,
                                       nullptr, 0, nullptr, nullptr, nullptr) == MANS_ERR_UNSUPPORTED_DTYPE);
    REQUIRE(mans_device_compress_async(d.dev, MANS_DTYPE_U16, 1000, nullptr, nullptr, 0, 1, nullptr, 0, nullptr, 0,
                                       nullptr, nullptr, nullptr) == MANS_ERR_INVALID_ARGUMENT);
    REQUIRE(mans_device_decompress_async(d.dev, nullptr, nullptr, 1, 0, nullptr, 0, nullptr, 0, nullptr, nullptr,
                                         nullptr) == MANS_ERR_INVALID_ARGUMENT);
}

TEST_CASE("device API: damaged streams give the CPU's error for their chunk only", "[.][dispatch_chunks]") {
    Device d;
    std::vector<Bytes> originals;
    std::vector<Bytes> raws;
    for (mans::DType dt : {mans::DType::u8, mans::DType::u16, mans::DType::i32, mans::DType::u64}) {
        const size_t es = mans::dtype_size(dt);
        raws.push_back(mans_test::generate_mixed(dt, 3 * 4096 / es + 17, 4096 / es, 7));
        originals.push_back(cpu_stream(raws.back(), dt, 4096));
    }
    size_t cap = 0;
    for (const Bytes& r : raws) cap = std::max(cap, r.size());
    std::mt19937_64 rng(3);
    size_t damaged = 0;
    for (int round = 0; round < 40; ++round) {
        // One batch: every stream, each damaged in its own way (or not).
        std::vector<Bytes> streams = originals;
        std::vector<mans_status> expect;
        for (size_t c = 0; c < streams.size(); ++c) {
            Bytes& s = streams[c];
            switch ((round + c) % 5) {
                case 0: s[rng() % s.size()] ^= static_cast<std::uint8_t>(1u << (rng() % 8)); break;  // anywhere
                case 1: s.resize(rng() % s.size()); break;                                             // truncated
                case 2: s[s.size() - 1 - rng() % 64] ^= 0x40; break;                                    // payload
                case 3: s.push_back(0); break;                                                          // trailing
                default: break;                                                                         // intact
            }
            expect.push_back(cpu_decode_status(s, cap));
            damaged += expect.back() != MANS_OK;
        }
        const Decompressed dec = device_decompress(d.dev, streams, cap, 4096);
        REQUIRE(dec.call == MANS_OK);
        for (size_t c = 0; c < streams.size(); ++c) {
            INFO("round " << round << ", chunk " << c);
            REQUIRE(dec.statuses[c] == expect[c]);
            if (expect[c] == MANS_OK) REQUIRE(dec.data[c] == raws[c]);
        }
    }
    REQUIRE(damaged > 60);  // most rounds really damaged something
}

namespace {

// A frame rewritten with its header checksum recomputed, so that the damage
// inside reaches the checks behind it.
Bytes reframe(const mans::detail::FrameHeader& h, const std::vector<mans::detail::IndexEntry>& index,
              const Bytes& payloads) {
    Bytes s(h.prefix_bytes());
    mans::detail::write_frame_prefix(h, index.data(), s.data());
    s.insert(s.end(), payloads.begin(), payloads.end());
    return s;
}

}  // namespace

TEST_CASE("device API: the lowest failing block decides, as on the CPU", "[.][dispatch_chunks]") {
    Device d;
    const Bytes raw = mans_test::generate_mixed(mans::DType::u16, 5 * 2048, 2048, 9);
    const Bytes good = cpu_stream(raw, mans::DType::u16, 4096);
    mans::detail::ParsedFrame f;
    REQUIRE(mans::detail::parse_frame(good.data(), good.size(), &f) == Errc::ok);
    REQUIRE(f.index.size() == 5);
    Bytes payloads(good.begin() + static_cast<std::ptrdiff_t>(f.header.prefix_bytes()), good.end());
    // Block 1: wrong content checksum; block 3: an invalid mode byte.
    std::vector<mans::detail::IndexEntry> index = f.index;
    index[1].content_checksum ^= 1;
    payloads[f.offsets[3] - f.header.prefix_bytes()] = 0xEE;
    const Bytes both = reframe(f.header, index, payloads);
    const mans_status cpu = cpu_decode_status(both, raw.size());
    REQUIRE(cpu == MANS_ERR_CONTENT_CHECKSUM);
    // Only block 3 damaged: its own error.
    const Bytes only3 = reframe(f.header, f.index, payloads);
    REQUIRE(cpu_decode_status(only3, raw.size()) == MANS_ERR_CORRUPT_BLOCK);
    const Decompressed dec = device_decompress(d.dev, {both, only3, good}, raw.size(), 4096);
    REQUIRE(dec.statuses[0] == cpu);
    REQUIRE(dec.statuses[1] == MANS_ERR_CORRUPT_BLOCK);
    REQUIRE(dec.statuses[2] == MANS_OK);
    REQUIRE(dec.data[2] == raw);
}

TEST_CASE("device API: hundreds of chunks, failed and empty ones at the list tiles' edges, few blocks in flight",
          "[.][dispatch_chunks]") {
    // The blocks to decode are listed by a scan over the chunks in tiles of
    // kListTileChunks; chunks that fail or have no blocks count 0. Chunks
    // at a tile's first and last place fail, are empty or are long.
    Device d;
    constexpr std::size_t kTile = mans::detail::kListTileChunks;
    const std::size_t count = 3 * kTile + 5;
    std::vector<Bytes> raws, streams;
    std::vector<mans_status> expect;
    for (std::size_t c = 0; c < count; ++c) {
        const std::size_t n = c % 7 == 3 ? 0 : 1 + (c * 997) % 9000;  // 0 to 5 blocks of 2048 u16
        raws.push_back(mans_test::generate_mixed(mans::DType::u16, n, 2048, 300 + c));
        Bytes s = cpu_stream(raws.back(), mans::DType::u16, 4096);
        const std::size_t at = c % kTile;
        if ((at == 0 || at == kTile - 1) && c % 3 == 0) s.resize(s.size() / 2);                 // fails to parse
        if ((at == 1 || at == kTile - 2) && s.size() > 200) s[s.size() - 7] ^= 0x20;          // a bad block
        streams.push_back(s);
        expect.push_back(cpu_decode_status(s, 9000 * 2));
    }
    std::size_t failed = 0, empty = 0;
    for (std::size_t c = 0; c < count; ++c) failed += expect[c] != MANS_OK, empty += raws[c].empty();
    REQUIRE(failed >= 6);
    REQUIRE(empty >= 20);
    const mans::detail::ChunkDecodeLayout l = mans::detail::chunk_decode_layout(count, 9000 * 2, 4096, 0);
    REQUIRE(l.list_tiles == 4);
    for (std::size_t k : {std::size_t{1}, std::size_t{5}, std::size_t{0}}) {  // 0: the temp the query gives
        INFO((k ? std::to_string(k) : std::string("the query's")) << " blocks in flight");
        const Decompressed dec = device_decompress(d.dev, streams, 9000 * 2, 4096, k ? l.total + k * l.slice : 0);
        REQUIRE(dec.call == MANS_OK);
        for (std::size_t c = 0; c < count; ++c) {
            INFO("chunk " << c);
            REQUIRE(dec.statuses[c] == expect[c]);
            if (expect[c] == MANS_OK) {
                REQUIRE(dec.out_bytes[c] == raws[c].size());
                REQUIRE(dec.data[c] == raws[c]);
            }
        }
    }
    // Compressing them all at once, a few blocks in flight: the CPU's streams.
    const mans::detail::ChunkEncodeLayout el = mans::detail::chunk_encode_layout(2, 2048, count, 9000 * 2, 0);
    for (std::size_t k : {std::size_t{1}, std::size_t{7}}) {
        const Compressed comp = device_compress(d.dev, mans::DType::u16, 4096, raws, 9000 * 2, 0, el.total + k * el.slice);
        REQUIRE(comp.call == MANS_OK);
        for (std::size_t c = 0; c < count; ++c) {
            INFO(k << " blocks in flight, chunk " << c);
            REQUIRE(comp.statuses[c] == MANS_OK);
            REQUIRE(comp.streams[c] == cpu_stream(raws[c], mans::DType::u16, 4096));
        }
    }
}

TEST_CASE("device API: streams beyond what the temp was sized for are refused, valid small ones are not",
          "[.][dispatch_chunks]") {
    Device d;
    // A valid stream of 5000 one-element blocks (stored): the CPU decodes
    // it; a decode temp sized for blocks of at least 4 KiB has no room for
    // its index, so the device refuses it (invalid argument), never reading
    // past its arrays.
    mans::detail::FrameHeader h;
    h.dtype = mans::DType::u8;
    h.count = 5000;
    h.block_elems = 1;
    std::vector<mans::detail::IndexEntry> index;
    Bytes payloads, raw;
    for (std::size_t i = 0; i < h.count; ++i) {
        const std::uint8_t v = static_cast<std::uint8_t>(i * 7);
        raw.push_back(v);
        payloads.push_back(static_cast<std::uint8_t>(mans::detail::BlockMode::stored));
        payloads.push_back(v);
        index.push_back({2, mans::detail::checksum32(&v, 1)});
    }
    const Bytes tiny_blocks = reframe(h, index, payloads);
    REQUIRE(cpu_decode_status(tiny_blocks, raw.size()) == MANS_OK);
    // Blocks of 128 KiB when the decode was set up for 4 KiB ones: refused
    // when a block really is larger, accepted when the stream is shorter.
    const Bytes big = mans_test::generate(mans::DType::u16, mans_test::Dist::skewed, 10000, 4);
    const Bytes big_blocks = cpu_stream(big, mans::DType::u16, 131072);
    const Bytes short_one = cpu_stream(Bytes(big.begin(), big.begin() + 10), mans::DType::u16, 131072);
    const Decompressed dec = device_decompress(d.dev, {tiny_blocks, big_blocks, short_one}, 20000, 4096);
    REQUIRE(dec.call == MANS_OK);
    REQUIRE(dec.statuses[0] == MANS_ERR_INVALID_ARGUMENT);
    REQUIRE(dec.statuses[1] == MANS_ERR_INVALID_ARGUMENT);
    REQUIRE(dec.statuses[2] == MANS_OK);
    REQUIRE(dec.data[2] == Bytes(big.begin(), big.begin() + 10));
    // With room for the larger blocks, the big-block stream decodes.
    const Decompressed ok = device_decompress(d.dev, {big_blocks}, 20000, 131072);
    REQUIRE(ok.statuses[0] == MANS_OK);
    REQUIRE(ok.data[0] == big);
}

TEST_CASE("device API: misaligned temp, aliased size arrays and null outputs are refused", "[.][dispatch_chunks]") {
    Device d;
    const Bytes raw = mans_test::generate(mans::DType::u32, mans_test::Dist::skewed, 3000, 5);
    const Bytes stream = cpu_stream(raw, mans::DType::u32, 0);
    size_t temp_bytes = 0;
    REQUIRE(mans_device_compress_temp_bytes(d.dev, MANS_DTYPE_U32, 0, 1, raw.size(), &temp_bytes) == MANS_OK);
    std::vector<std::uint8_t> temp(temp_bytes + 64);
    std::uint8_t* aligned = temp.data() + (16 - reinterpret_cast<std::uintptr_t>(temp.data()) % 16) % 16;
    const void* in[1] = {raw.data()};
    size_t in_bytes[1] = {raw.size()};
    Bytes out(mans_device_compress_max_output_bytes(raw.size()));
    void* outs[1] = {out.data()};
    size_t out_bytes[1] = {0};
    mans_status st[1] = {MANS_ERR_INTERNAL};
    REQUIRE(mans_device_compress_async(d.dev, MANS_DTYPE_U32, 0, in, in_bytes, raw.size(), 1, aligned + 4, temp_bytes,
                                       outs, out.size(), out_bytes, st, nullptr) == MANS_ERR_INVALID_ARGUMENT);
    REQUIRE(mans_device_compress_async(d.dev, MANS_DTYPE_U32, 0, in, in_bytes, raw.size(), 1, aligned, temp_bytes, outs,
                                       out.size(), in_bytes, st, nullptr) == MANS_ERR_INVALID_ARGUMENT);
    REQUIRE(mans_device_compress_async(d.dev, MANS_DTYPE_U32, 0, in, in_bytes, raw.size(), 1, aligned, temp_bytes, outs,
                                       out.size(), out_bytes, st, nullptr) == MANS_OK);
    REQUIRE(st[0] == MANS_OK);
    REQUIRE(Bytes(out.begin(), out.begin() + static_cast<std::ptrdiff_t>(out_bytes[0])) == stream);
    // A null output with capacity: invalid argument first, as on the CPU,
    // even for a damaged stream.
    Bytes damaged = stream;
    damaged[0] ^= 0xFF;
    size_t dtemp_bytes = 0;
    REQUIRE(mans_device_decompress_temp_bytes(d.dev, 2, raw.size(), 0, &dtemp_bytes) == MANS_OK);
    std::vector<std::uint8_t> dtemp(dtemp_bytes + 64);
    std::uint8_t* dal = dtemp.data() + (16 - reinterpret_cast<std::uintptr_t>(dtemp.data()) % 16) % 16;
    const void* din[2] = {damaged.data(), stream.data()};
    size_t din_bytes[2] = {damaged.size(), stream.size()};
    Bytes back(raw.size());
    void* douts[2] = {nullptr, back.data()};
    size_t dout_bytes[2] = {0, 0};
    mans_status dst[2] = {MANS_ERR_INTERNAL, MANS_ERR_INTERNAL};
    REQUIRE(mans_device_decompress_async(d.dev, din, din_bytes, 2, 0, dal, dtemp_bytes, douts, raw.size(), dout_bytes,
                                         dst, nullptr) == MANS_OK);
    REQUIRE(dst[0] == MANS_ERR_INVALID_ARGUMENT);
    REQUIRE(dst[1] == MANS_OK);
    REQUIRE(back == raw);
    REQUIRE(mans_device_decompress_async(d.dev, din, din_bytes, 2, 0, dal + 8, dtemp_bytes, douts, raw.size(),
                                         dout_bytes, dst, nullptr) == MANS_ERR_INVALID_ARGUMENT);
}

// Through a stand-in that decompresses only (FIXTURE_CODER_DECODE_ONLY, as
// the HIP module built with -DMANS_HIP_COMPRESS=OFF): ctest
// backend_device_api_decode_only.
TEST_CASE("device API: a module that only decompresses opens for decompression", "[.][dispatch_chunks_decode]") {
    Device d;
    INFO(mans_device_description(d.dev));
    REQUIRE(mans_device_compresses(d.dev) == 0);
    REQUIRE(std::string(mans_device_description(d.dev)).find(", decompression only") != std::string::npos);
    REQUIRE(std::strcmp(mans_device_unavailable_reason(MANS_BACKEND_AUTO), "") == 0);

    // Compression is refused as unavailable, before any argument is read.
    size_t temp = 0;
    CHECK(mans_device_compress_temp_bytes(d.dev, MANS_DTYPE_U16, 0, 1, 4096, &temp) == MANS_ERR_BACKEND_UNAVAILABLE);
    const Bytes one(4096, 7);
    HostBatch h({one}, mans_device_compress_max_output_bytes(one.size()), 1 << 20);
    CHECK(mans_device_compress_async(d.dev, MANS_DTYPE_U16, 0, h.in_ptrs.data(), h.in_bytes.data(), one.size(), 1,
                                     h.temp.data(), h.temp.size(), h.out_ptrs.data(), h.out[0].size(),
                                     h.out_bytes.data(), h.statuses.data(), nullptr) == MANS_ERR_BACKEND_UNAVAILABLE);
    CHECK(h.statuses[0] == MANS_ERR_INTERNAL);  // untouched

    // CPU streams of every dtype decode through it; damaged ones get the CPU's status.
    std::mt19937_64 rng(11);
    size_t damaged = 0;
    for (mans::DType dt : mans_test::kAllDTypes) {
        const size_t es = mans::dtype_size(dt);
        std::vector<Bytes> raws, streams;
        std::uint64_t seed = 40;
        for (size_t n : {size_t{0}, size_t{5}, size_t{3000}, size_t{70001}})
            raws.push_back(mans_test::generate_mixed(dt, n, 4096 / es, seed++));
        size_t cap = 0;
        for (const Bytes& r : raws) {
            streams.push_back(cpu_stream(r, dt, 4096));
            cap = std::max(cap, r.size());
        }
        INFO("dtype " << mans::dtype_name(dt));
        const Decompressed dec = device_decompress(d.dev, streams, cap, 4096);
        REQUIRE(dec.call == MANS_OK);
        for (size_t c = 0; c < raws.size(); ++c) {
            INFO("chunk " << c);
            REQUIRE(dec.statuses[c] == MANS_OK);
            REQUIRE(dec.data[c] == raws[c]);
        }
        std::vector<mans_status> expect;
        for (Bytes& st : streams) {
            if (!st.empty()) st[rng() % st.size()] ^= static_cast<std::uint8_t>(1u << (rng() % 8));
            expect.push_back(cpu_decode_status(st, cap));
            damaged += expect.back() != MANS_OK;
        }
        const Decompressed bad = device_decompress(d.dev, streams, cap, 4096);
        REQUIRE(bad.call == MANS_OK);
        for (size_t c = 0; c < streams.size(); ++c) {
            INFO("damaged chunk " << c);
            REQUIRE(bad.statuses[c] == expect[c]);
        }
    }
    CHECK(damaged > 10);
}

namespace {

// mans_device_prism_compress through the stand-in ("device" pointers are
// host pointers) against mans_prism_compress on the CPU.
Bytes device_prism(mans_device* dev, const Bytes& field, const mans_prism_params& p, mans_status* st) {
    void* archive = nullptr;
    size_t size = 0;
    *st = mans_device_prism_compress(dev, field.data(), field.size(), &p, &archive, &size);
    Bytes out;
    if (*st == MANS_OK) out.assign(static_cast<const std::uint8_t*>(archive), static_cast<const std::uint8_t*>(archive) + size);
    mans_prism_free(archive);
    return out;
}

Bytes cpu_prism(const Bytes& field, const mans_prism_params& p) {
    void* archive = nullptr;
    size_t size = 0;
    REQUIRE(mans_prism_compress(field.data(), field.size(), &p, &archive, &size) == MANS_OK);
    Bytes out(static_cast<const std::uint8_t*>(archive), static_cast<const std::uint8_t*>(archive) + size);
    mans_prism_free(archive);
    return out;
}

}  // namespace

TEST_CASE("device API: a PRISM field in device memory gets mans_prism_compress's archive", "[.][dispatch_chunks]") {
    Device d;
    const std::string path = mans_test::find_data_file("levitus_temp_20x180x360.f32");
    std::vector<std::pair<Bytes, mans_prism_params>> cases;
    mans_prism_params p;
    mans_prism_params_init(&p);
    p.rank = 3;
    p.mode = MANS_PRISM_REL;
    if (path.empty()) {
        WARN("levitus_temp_20x180x360.f32 not found: generated fields only");
    } else {
        p.dims[0] = 20, p.dims[1] = 180, p.dims[2] = 360, p.error_bound = 1e-5;
        cases.push_back({mans_test::read_file(path), p});  // 44 % fill, detected
    }
    const double fill = -999.0;
    Bytes f(7 * 11 * 13 * 8);
    for (size_t i = 0; i < 7 * 11 * 13; ++i) {
        const double v = i % 17 == 3 ? fill : std::sin(0.1 * static_cast<double>(i)) + (i % 61 == 0 ? 50.0 : 0.0);
        std::memcpy(f.data() + 8 * i, &v, 8);
    }
    p.type = MANS_PRISM_F64, p.dims[0] = 7, p.dims[1] = 11, p.dims[2] = 13, p.error_bound = 1e-4;
    p.planes = MANS_PRISM_SIGN_MAGNITUDE;
    p.fill_values = &fill, p.fill_count = 1;
    cases.push_back({f, p});
    for (const auto& c : cases) {
        mans_status st = MANS_ERR_INTERNAL;
        const Bytes dev = device_prism(d.dev, c.first, c.second, &st);
        REQUIRE(st == MANS_OK);
        CHECK(dev == cpu_prism(c.first, c.second));
    }
    // The parameters' errors are mans_prism_compress's, before the device.
    mans_prism_params bad = cases.back().second;
    mans_status st = MANS_OK;
    device_prism(d.dev, Bytes(cases.back().first.begin(), cases.back().first.end() - 1), bad, &st);
    CHECK(st == MANS_ERR_SIZE_NOT_MULTIPLE);
    bad.error_bound = 0;
    device_prism(d.dev, cases.back().first, bad, &st);
    CHECK(st == MANS_ERR_INVALID_ARGUMENT);
    void* a = nullptr;
    size_t n = 0;
    CHECK(mans_device_prism_compress(nullptr, f.data(), f.size(), &p, &a, &n) == MANS_ERR_INVALID_ARGUMENT);
    CHECK(mans_device_prism_compress(d.dev, f.data(), f.size(), nullptr, &a, &n) == MANS_ERR_INVALID_ARGUMENT);
    CHECK(mans_device_prism_compress(d.dev, nullptr, 8, &p, &a, &n) == MANS_ERR_INVALID_ARGUMENT);
}

namespace {

// A retrieval through the host C API: its values and stats.
struct HostRetrieval {
    Bytes values;
    mans_prism_stats stats{};
};

HostRetrieval host_retrieve(const Bytes& archive, mans_prism_target kind, double value) {
    mans_prism_reader* r = nullptr;
    REQUIRE(mans_prism_open_memory(archive.data(), archive.size(), &r) == MANS_OK);
    REQUIRE(mans_prism_set_backend(r, MANS_BACKEND_CPU) == MANS_OK);
    mans_prism_result* x = nullptr;
    REQUIRE(mans_prism_retrieve(r, kind, value, 1, &x) == MANS_OK);
    HostRetrieval out;
    const auto* d = static_cast<const std::uint8_t*>(mans_prism_result_data(x));
    out.values.assign(d, d + mans_prism_result_size(x));
    REQUIRE(mans_prism_result_stats(x, &out.stats) == MANS_OK);
    mans_prism_result_free(x);
    mans_prism_close(r);
    return out;
}

void check_same_stats(const mans_prism_stats& a, const mans_prism_stats& b) {
    CHECK(a.bytes_read == b.bytes_read);
    CHECK(a.max_abs_error_bound == b.max_abs_error_bound);
    CHECK(a.complete == b.complete);
}

}  // namespace

TEST_CASE("device API: PRISM retrieval into device memory gives mans_prism_retrieve's values", "[.][dispatch_chunks]") {
    Device d;
    std::vector<std::pair<Bytes, mans_prism_params>> cases;
    mans_prism_params p;
    mans_prism_params_init(&p);
    p.rank = 3;
    p.mode = MANS_PRISM_REL;
    const std::string path = mans_test::find_data_file("levitus_temp_20x180x360.f32");
    if (path.empty()) {
        WARN("levitus_temp_20x180x360.f32 not found: a generated field only");
    } else {
        p.dims[0] = 20, p.dims[1] = 180, p.dims[2] = 360, p.error_bound = 1e-5;
        cases.push_back({mans_test::read_file(path), p});  // 44 % fill
    }
    Bytes f(9 * 10 * 11 * 8);
    for (size_t i = 0; i < 9 * 10 * 11; ++i) {
        const double v = i % 29 == 5 ? NAN : std::cos(0.07 * static_cast<double>(i)) * (1 + i % 7);
        std::memcpy(f.data() + 8 * i, &v, 8);
    }
    p.type = MANS_PRISM_F64, p.dims[0] = 9, p.dims[1] = 10, p.dims[2] = 11, p.error_bound = 1e-6;
    p.planes = MANS_PRISM_SIGN_MAGNITUDE;
    cases.push_back({f, p});
    for (const auto& c : cases) {
        INFO("field of " << c.first.size() << " bytes");
        const Bytes archive = cpu_prism(c.first, c.second);
        const HostRetrieval coarse = host_retrieve(archive, MANS_PRISM_TARGET_REL, 1e-2);
        const HostRetrieval full = host_retrieve(archive, MANS_PRISM_TARGET_FULL, 0);
        REQUIRE(coarse.stats.complete == 0);
        mans_prism_reader* r = nullptr;
        REQUIRE(mans_prism_open_memory(archive.data(), archive.size(), &r) == MANS_OK);
        Bytes dst(c.first.size() + 8, 0xEE);  // the stand-in's "device memory" is host memory
        mans_prism_result* x = nullptr;
        REQUIRE(mans_device_prism_retrieve(d.dev, r, MANS_PRISM_TARGET_REL, 1e-2, dst.data(), dst.size(), &x) == MANS_OK);
        CHECK(mans_prism_result_size(x) == 0);  // no host values
        CHECK(Bytes(dst.begin(), dst.begin() + c.first.size()) == coarse.values);
        CHECK(dst.back() == 0xEE);  // nothing past the values
        mans_prism_stats st;
        REQUIRE(mans_prism_result_stats(x, &st) == MANS_OK);
        check_same_stats(st, coarse.stats);
        CHECK(std::string(st.backend) == "cuda");
        // Refined on the device: only the rest is read, the full values written.
        Bytes dst2(c.first.size(), 0);
        REQUIRE(mans_device_prism_refine(d.dev, r, x, MANS_PRISM_TARGET_FULL, 0, dst2.data(), dst2.size()) == MANS_OK);
        REQUIRE(mans_prism_result_stats(x, &st) == MANS_OK);
        check_same_stats(st, full.stats);
        CHECK(st.bytes_read_step == archive.size() - coarse.stats.bytes_read);
        CHECK(dst2 == full.values);
        // The host refine of a device result reconstructs its host values
        // from the planes it holds (none to read) ...
        REQUIRE(mans_prism_refine(r, x, MANS_PRISM_TARGET_FULL, 0, 1) == MANS_OK);
        REQUIRE(mans_prism_result_stats(x, &st) == MANS_OK);
        CHECK(st.bytes_read_step == 0);
        REQUIRE(mans_prism_result_size(x) == full.values.size());
        CHECK(std::memcmp(mans_prism_result_data(x), full.values.data(), full.values.size()) == 0);
        // ... and a device refine of a complete host result (its planes
        // dropped) reads them again.
        Bytes dst3(c.first.size(), 0);
        REQUIRE(mans_device_prism_refine(d.dev, r, x, MANS_PRISM_TARGET_FULL, 0, dst3.data(), dst3.size()) == MANS_OK);
        CHECK(dst3 == full.values);
        REQUIRE(mans_prism_result_stats(x, &st) == MANS_OK);
        mans_prism_info info;
        REQUIRE(mans_prism_get_info(r, &info) == MANS_OK);
        CHECK(st.bytes_read_step == full.stats.bytes_read - info.header_bytes - info.base_bytes);
        CHECK(mans_prism_result_size(x) == 0);

        // Errors: the arguments are checked before the device.
        mans_prism_result* none = nullptr;
        CHECK(mans_device_prism_retrieve(d.dev, r, MANS_PRISM_TARGET_FULL, 0, dst.data(), c.first.size() - 1, &none) ==
              MANS_ERR_DST_TOO_SMALL);
        CHECK(mans_device_prism_retrieve(d.dev, r, MANS_PRISM_TARGET_FULL, 0, dst.data() + 1, dst.size() - 1, &none) ==
              MANS_ERR_INVALID_ARGUMENT);
        CHECK(mans_device_prism_retrieve(d.dev, r, MANS_PRISM_TARGET_FULL, 0, nullptr, dst.size(), &none) ==
              MANS_ERR_INVALID_ARGUMENT);
        CHECK(mans_device_prism_retrieve(nullptr, r, MANS_PRISM_TARGET_FULL, 0, dst.data(), dst.size(), &none) ==
              MANS_ERR_INVALID_ARGUMENT);
        CHECK(mans_device_prism_retrieve(d.dev, r, static_cast<mans_prism_target>(17), 0, dst.data(), dst.size(),
                                         &none) == MANS_ERR_INVALID_ARGUMENT);
        CHECK(mans_device_prism_retrieve(d.dev, r, MANS_PRISM_TARGET_ABS, 1e-30, dst.data(), dst.size(), &none) ==
              MANS_ERR_TARGET_UNREACHABLE);
        CHECK(none == nullptr);
        CHECK(mans_device_prism_refine(d.dev, r, nullptr, MANS_PRISM_TARGET_FULL, 0, dst.data(), dst.size()) ==
              MANS_ERR_INVALID_ARGUMENT);
        mans_prism_result_free(x);
        mans_prism_close(r);

        // A damaged plane is refused as by the host API.
        Bytes bad = archive;
        bad[bad.size() - 5] ^= 0x21;
        mans_prism_reader* rb = nullptr;
        REQUIRE(mans_prism_open_memory(bad.data(), bad.size(), &rb) == MANS_OK);
        mans_prism_result* hx = nullptr;
        const mans_status host = mans_prism_retrieve(rb, MANS_PRISM_TARGET_FULL, 0, 1, &hx);
        CHECK(host != MANS_OK);
        CHECK(mans_device_prism_retrieve(d.dev, rb, MANS_PRISM_TARGET_FULL, 0, dst.data(), dst.size(), &none) == host);
        CHECK(none == nullptr);
        mans_prism_result_free(hx);
        mans_prism_close(rb);
    }
}

TEST_CASE("device API: a module without PRISM compression refuses a PRISM field and retrieves archives",
          "[.][dispatch_chunks_decode]") {
    Device d;
    mans_prism_params p;
    mans_prism_params_init(&p);
    p.dims[0] = 1000;
    p.error_bound = 1e-3;
    const Bytes field(4000, 0);
    mans_status st = MANS_OK;
    device_prism(d.dev, field, p, &st);
    CHECK(st == MANS_ERR_BACKEND_UNAVAILABLE);
    // PRISM retrieval needs only the chunk decoder, as the HIP module built
    // without compression: into device memory, coarse and full, it gives
    // mans_prism_retrieve's values.
    Bytes f(37 * 41 * 4);
    for (size_t i = 0; i < 37 * 41; ++i) {
        const float v = i % 31 == 7 ? INFINITY : static_cast<float>(std::sin(0.05 * static_cast<double>(i)) * (2 + i % 5));
        std::memcpy(f.data() + 4 * i, &v, 4);
    }
    p.rank = 2, p.dims[0] = 37, p.dims[1] = 41, p.mode = MANS_PRISM_REL, p.error_bound = 1e-5;
    const Bytes archive = cpu_prism(f, p);
    mans_prism_reader* r = nullptr;
    REQUIRE(mans_prism_open_memory(archive.data(), archive.size(), &r) == MANS_OK);
    const HostRetrieval coarse = host_retrieve(archive, MANS_PRISM_TARGET_REL, 1e-2);
    const HostRetrieval full = host_retrieve(archive, MANS_PRISM_TARGET_FULL, 0);
    REQUIRE(coarse.stats.complete == 0);
    Bytes dst(f.size() + 8, 0xEE);
    mans_prism_result* x = nullptr;
    REQUIRE(mans_device_prism_retrieve(d.dev, r, MANS_PRISM_TARGET_REL, 1e-2, dst.data(), dst.size(), &x) == MANS_OK);
    CHECK(Bytes(dst.begin(), dst.begin() + static_cast<std::ptrdiff_t>(f.size())) == coarse.values);
    CHECK(dst.back() == 0xEE);
    mans_prism_stats stats;
    REQUIRE(mans_prism_result_stats(x, &stats) == MANS_OK);
    check_same_stats(stats, coarse.stats);
    CHECK(std::string(stats.backend) == "cuda");
    Bytes dst2(f.size(), 0);
    REQUIRE(mans_device_prism_refine(d.dev, r, x, MANS_PRISM_TARGET_FULL, 0, dst2.data(), dst2.size()) == MANS_OK);
    CHECK(dst2 == full.values);
    mans_prism_result_free(x);
    mans_prism_close(r);
}
