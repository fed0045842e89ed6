// make_h5_seeds OUT_DIR - seeds for fuzz_h5filter: for several configs of
// both codecs, an encode input (smooth data with a NaN and a fill value) and
// a decode input holding a valid stored chunk.
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>

#include "h5filter_input.hpp"

namespace fs = std::filesystem;

int main(int argc, char** argv) {
    if (argc != 2) return 2;
    const fs::path dir = fs::path(argv[1]) / "h5filter";
    fs::create_directories(dir);
    // codec, dtype, rank, dims x4, mode/flags (see config_from)
    const std::uint8_t configs[][8] = {
        {0, 1, 0, 200, 0, 0, 0, 0},      // MANS u16, 1D 201
        {0, 6, 1, 9, 30, 0, 0, 0},       // MANS i64, 10x31
        {0, 0, 2, 4, 5, 6, 0, 0},        // MANS u8, 5x6x7
        {1, 0, 2, 10, 20, 30, 0, 0x00},  // PRISM f32 3D, abs 1e-3
        {1, 0, 1, 33, 17, 0, 0, 0x15},   // PRISM f32 2D, rel 1e-1
        {1, 1, 3, 3, 4, 5, 6, 0x24},     // PRISM f64 4D, abs 1, fill
        {1, 0, 0, 100, 0, 0, 0, 0x02},   // PRISM f32 1D, byteswap
        {1, 0, 1, 30, 30, 0, 0, 0x45},   // PRISM f32 2D, rel, NaN fill
        {1, 1, 0, 200, 0, 0, 0, 0x84},   // PRISM f64 1D, abs 1e-3, -0.0 fill
        {1, 0, 2, 9, 9, 9, 0, 0xc4},     // PRISM f32 3D, fill 1e300 (beyond f32)
    };
    int written = 0;
    for (const auto& cfg : configs) {
        const mans_h5_config c = h5fuzz::config_from(cfg);
        const std::size_t raw = static_cast<std::size_t>(mans_h5_chunk_bytes(&c));
        std::vector<std::uint8_t> chunk(raw);
        const std::size_t count = raw / c.element_size;
        for (std::size_t i = 0; i < count; ++i) {
            double v = 100 + 20 * std::sin(0.05 * double(i)) + (i % 7);
            if (c.element_size == 8 && c.codec == MANS_H5_CODEC_PRISM && i % 11 == 0) v = 1.7e308;  // near DBL_MAX
            if (c.codec == MANS_H5_CODEC_PRISM && c.element_size == 4) {
                float f = i == 3 ? NAN : (i == 5 && (c.flags & MANS_H5_FLAG_FILL)) ? -1e10f : float(v);
                std::memcpy(&chunk[i * 4], &f, 4);
            } else if (c.codec == MANS_H5_CODEC_PRISM) {
                double d = i == 3 ? NAN : (i == 5 && (c.flags & MANS_H5_FLAG_FILL)) ? -1e10 : v;
                std::memcpy(&chunk[i * 8], &d, 8);
            } else {
                const std::uint64_t u = static_cast<std::uint64_t>(v);
                std::memcpy(&chunk[i * c.element_size], &u, c.element_size);
            }
        }
        void* coded = nullptr;
        std::size_t coded_size = 0;
        char msg[256];
        if (mans_h5_encode_chunk(&c, chunk.data(), raw, &coded, &coded_size, msg, sizeof msg) != MANS_OK) {
            std::fprintf(stderr, "make_h5_seeds: %s\n", msg);
            return 1;
        }
        const std::vector<std::uint8_t> stream(static_cast<std::uint8_t*>(coded),
                                               static_cast<std::uint8_t*>(coded) + coded_size);
        std::free(coded);
        for (bool encode : {true, false}) {
            const auto in = h5fuzz::structured_input(encode, cfg, encode ? chunk : stream);
            std::ofstream(dir / ("seed_" + std::to_string(written++)), std::ios::binary)
                .write(reinterpret_cast<const char*>(in.data()), static_cast<std::streamsize>(in.size()));
        }
    }
    std::printf("make_h5_seeds: %d seeds in %s\n", written, dir.string().c_str());
    return 0;
}
