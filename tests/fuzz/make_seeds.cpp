// make_seeds OUT_DIR - writes deterministic seed inputs for the fuzz targets:
// OUT_DIR/decompress (whole streams), OUT_DIR/block (dtype byte, count byte,
// block payload of every mapping), OUT_DIR/roundtrip (selector byte + data).
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <random>

#include "backend.hpp"
#include "mans/mans.hpp"
#include "mapping/block_codec.hpp"

namespace fs = std::filesystem;
using Bytes = std::vector<std::uint8_t>;

namespace {
const mans::DType kTypes[] = {mans::DType::u8,  mans::DType::u16, mans::DType::u32, mans::DType::u64,
                              mans::DType::i16, mans::DType::i32, mans::DType::i64};

// A few value shapes that drive the encoder into its different mappings.
enum class Shape { constant, narrow, wide, runs, sparse, walk, count };

Bytes make_data(mans::DType t, Shape shape, std::size_t n, std::uint64_t seed) {
    const std::size_t es = mans::dtype_size(t);
    std::mt19937_64 rng(seed);
    Bytes b(n * es);
    std::uint64_t walk = 1000;
    for (std::size_t i = 0; i < n; ++i) {
        const std::uint64_t r = rng();
        std::uint64_t v = 0;
        switch (shape) {
            case Shape::constant: v = 1234; break;
            case Shape::narrow: v = 1500 + r % 200; break;
            case Shape::wide: v = r; break;
            case Shape::runs: v = (i / 50) % 3 ? 32768 : 32768 + r % 5; break;
            case Shape::sparse: v = (i / 64) % 5 == 0 ? 0 : (1ull << (8 * es - 1)) + 37 * (r % 9); break;
            default: walk += r % 7; v = walk - 3; break;
        }
        for (std::size_t k = 0; k < es; ++k) b[i * es + k] = static_cast<std::uint8_t>(v >> (8 * k));
    }
    return b;
}

Bytes compress(const Bytes& raw, const mans::CompressConfig& cfg) {
    Bytes out(mans::compress_bound(raw.size()));
    const mans::Result r = mans::compress(out.data(), out.size(), raw.data(), raw.size(), cfg);
    out.resize(r ? r.size : 0);
    return out;
}

void write(const fs::path& p, const std::vector<std::uint8_t>& b) {
    std::ofstream(p, std::ios::binary).write(reinterpret_cast<const char*>(b.data()),
                                             static_cast<std::streamsize>(b.size()));
}
}  // namespace

int main(int argc, char** argv) {
    if (argc != 2) {
        std::fprintf(stderr, "usage: %s OUT_DIR\n", argv[0]);
        return 1;
    }
    const fs::path out(argv[1]);
    for (const char* sub : {"decompress", "block", "roundtrip"}) fs::create_directories(out / sub);
    using mans::detail::ModeHint;
    const ModeHint hints[] = {ModeHint::automatic,    ModeHint::stored,       ModeHint::constant,
                              ModeHint::token_center, ModeHint::token_delta,  ModeHint::token_repeat,
                              ModeHint::adm,          ModeHint::byte_planes,  ModeHint::dictionary};
    const auto& kernels = mans::detail::cpu_backend().kernels(true);
    mans::detail::BlockScratch scratch;
    int files = 0;
    for (unsigned t = 0; t < 7; ++t) {
        for (int shape = 0; shape < static_cast<int>(Shape::count); ++shape) {
            // Block seeds: the count byte c gives n = 1 + c*37 % 9000 (as in fuzz_block).
            const unsigned c = 1 + (t * 31 + static_cast<unsigned>(shape) * 7) % 255;
            const std::size_t n = 1 + (static_cast<std::size_t>(c) * 37) % 9000;
            const Bytes raw = make_data(kTypes[t], static_cast<Shape>(shape), n, 100 + t);
            for (ModeHint h : hints) {
                std::vector<std::uint8_t> payload = {static_cast<std::uint8_t>(t), static_cast<std::uint8_t>(c)};
                mans::detail::encode_block(kTypes[t], raw.data(), n, kernels, scratch, payload, h);
                write(out / "block" / (std::to_string(files++) + ".bin"), payload);
            }
            // Whole streams and round-trip inputs (small: fuzzers mutate faster).
            mans::CompressConfig cfg;
            cfg.dtype = kTypes[t];
            cfg.block_bytes = 4096;
            write(out / "decompress" / (std::to_string(files++) + ".mans"), compress(raw, cfg));
            std::vector<std::uint8_t> rt = {static_cast<std::uint8_t>(t | 0x80)};
            rt.insert(rt.end(), raw.begin(), raw.begin() + static_cast<std::ptrdiff_t>(std::min<std::size_t>(raw.size(), 6000)));
            write(out / "roundtrip" / (std::to_string(files++) + ".bin"), rt);
        }
    }
    std::printf("make_seeds: %d files in %s\n", files, argv[1]);
    return 0;
}
