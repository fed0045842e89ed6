// make_seeds OUT_DIR - writes deterministic seed inputs for the fuzz targets:
// OUT_DIR/decompress (whole streams), OUT_DIR/block (dtype byte, count byte,
// block payload of every mapping), OUT_DIR/roundtrip (selector byte + data),
// OUT_DIR/prism (selector byte + archive); plus seeds made from the real
// fields of ../shared/data when it is there.
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <random>

#include "backend.hpp"
#include "mans/mans.hpp"
#include "mans/prism.hpp"
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
// PRISM archives (prefixed with the fuzz target's selector byte) of small
// smooth fields with a NaN and a fill block, every rank, both codings.
int write_prism_seeds(const fs::path& dir) {
    int files = 0;
    const std::uint64_t shapes[4][4] = {{300, 0, 0, 0}, {17, 23, 0, 0}, {5, 9, 11, 0}, {3, 4, 5, 6}};
    for (unsigned rank = 1; rank <= 4; ++rank) {
        for (int f64 = 0; f64 < 2; ++f64) {
            mans::prism::CompressConfig cfg;
            cfg.type = f64 ? mans::prism::FloatType::f64 : mans::prism::FloatType::f32;
            cfg.rank = rank;
            std::uint64_t n = 1;
            for (unsigned a = 0; a < rank; ++a) cfg.dims[a] = shapes[rank - 1][a], n *= cfg.dims[a];
            cfg.error_bound = f64 ? 1e-6 : 1e-3;
            cfg.planes = rank % 2 ? mans::prism::PlaneCoding::negabinary : mans::prism::PlaneCoding::sign_magnitude;
            Bytes raw(n * (f64 ? 8 : 4));
            for (std::uint64_t i = 0; i < n; ++i) {
                double v = 10 + 3 * std::sin(0.1 * static_cast<double>(i)) + static_cast<double>(i % 7) * 0.01;
                if (i == 3) v = std::nan("");
                if (i >= 40 && i < 50) v = -1e10;
                if (f64) std::memcpy(raw.data() + 8 * i, &v, 8);
                else {
                    const float x = static_cast<float>(v);
                    std::memcpy(raw.data() + 4 * i, &x, 4);
                }
            }
            std::vector<std::uint8_t> archive;
            if (mans::prism::compress(raw.data(), raw.size(), cfg, &archive) != mans::Errc::ok) continue;
            for (std::uint8_t selector = 0; selector < 5; ++selector) {
                Bytes seed = {selector};
                seed.insert(seed.end(), archive.begin(), archive.end());
                write(dir / (std::to_string(rank) + "_" + std::to_string(f64) + "_" + std::to_string(selector) + ".bin"), seed);
                ++files;
            }
        }
    }
    return files;
}
// Seeds from the real fields of ../shared/data (MANS_SHARED_DATA_DIR), when
// present: MANS streams and round-trip inputs of integer data, PRISM
// archives of float fields, each small enough for the fuzzers' 64 KiB limit.
int write_real_seeds(const fs::path& out, const fs::path& data) {
    auto load = [&](const char* name, std::size_t max_bytes) {
        std::ifstream f(data / name, std::ios::binary);
        Bytes b((std::istreambuf_iterator<char>(f)), {});
        if (b.size() > max_bytes) b.resize(max_bytes);
        return b;
    };
    int files = 0;
    const struct { const char* file; mans::DType t; } ints[] = {
        {"exafel_1024kB.u16", mans::DType::u16}, {"oisst_sst_1x1x90x180.i16", mans::DType::i16},
        {"navy_uwnd_132x73x144.f32", mans::DType::u32}};  // float bit patterns as u32
    for (const auto& in : ints) {
        Bytes raw = load(in.file, 16384);
        if (raw.empty()) continue;
        mans::CompressConfig cfg;
        cfg.dtype = in.t;
        cfg.block_bytes = 4096;
        write(out / "decompress" / ("real_" + std::to_string(files++) + ".mans"), compress(raw, cfg));
        Bytes rt = {static_cast<std::uint8_t>(static_cast<unsigned>(in.t) - 1)};
        rt.insert(rt.end(), raw.begin(), raw.begin() + static_cast<std::ptrdiff_t>(std::min<std::size_t>(raw.size(), 6000)));
        write(out / "roundtrip" / ("real_" + std::to_string(files++) + ".bin"), rt);
    }
    const struct { const char* file; unsigned rank; std::uint64_t dims[3]; bool f64; } floats[] = {
        {"echam5_t_17x96x192.f32", 2, {96, 192, 0}, false},        // the first level
        {"levitus_temp_20x180x360.f32", 2, {180, 360, 0}, false},  // land fill -1e10
        {"sdo_aia171_128x128.f64", 2, {128, 128, 0}, true}};
    for (const auto& in : floats) {
        const std::size_t es = in.f64 ? 8 : 4;
        const Bytes raw = load(in.file, in.dims[0] * in.dims[1] * es);
        if (raw.size() != in.dims[0] * in.dims[1] * es) continue;
        mans::prism::CompressConfig cfg;
        cfg.type = in.f64 ? mans::prism::FloatType::f64 : mans::prism::FloatType::f32;
        cfg.rank = in.rank;
        cfg.dims[0] = in.dims[0], cfg.dims[1] = in.dims[1];
        cfg.mode = mans::prism::ErrorMode::relative;
        cfg.error_bound = 1e-2;
        std::vector<std::uint8_t> archive;
        if (mans::prism::compress(raw.data(), raw.size(), cfg, &archive) != mans::Errc::ok) continue;
        if (archive.size() + 1 > 65536) continue;
        for (std::uint8_t selector = 0; selector < 5; ++selector) {
            Bytes seed = {selector};
            seed.insert(seed.end(), archive.begin(), archive.end());
            write(out / "prism" / ("real_" + std::to_string(files++) + ".bin"), seed);
        }
    }
    return files;
}
}  // namespace

int main(int argc, char** argv) {
    if (argc != 2) {
        std::fprintf(stderr, "usage: %s OUT_DIR\n", argv[0]);
        return 1;
    }
    const fs::path out(argv[1]);
    for (const char* sub : {"decompress", "block", "roundtrip", "prism"}) fs::create_directories(out / sub);
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
    files += write_prism_seeds(out / "prism");
    const fs::path data(MANS_SHARED_DATA_DIR);
    if (fs::is_directory(data)) files += write_real_seeds(out, data);
    else std::printf("make_seeds: no %s, no real-data seeds\n", data.string().c_str());
    std::printf("make_seeds: %d files in %s\n", files, argv[1]);
    return 0;
}
