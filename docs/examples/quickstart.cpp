// Compress and decompress a u16 array with the C++ API.
#include <mans/mans.hpp>

#include <cstdint>
#include <cstdio>
#include <vector>

int main() {
    std::vector<std::uint16_t> data(100000);
    for (std::size_t i = 0; i < data.size(); ++i) data[i] = static_cast<std::uint16_t>(1500 + i % 97);
    const std::size_t raw_bytes = data.size() * sizeof(std::uint16_t);

    mans::CompressConfig cfg;
    cfg.dtype = mans::DType::u16;
    std::vector<std::uint8_t> stream(mans::compress_bound(raw_bytes));
    mans::Result r = mans::compress(stream.data(), stream.size(), data.data(), raw_bytes, cfg);
    if (!r) {
        std::fprintf(stderr, "compress: %s\n", mans::errc_name(r.code));  // e.g. MANS_ERR_DST_TOO_SMALL
        return 1;
    }
    stream.resize(r.size);

    mans::FrameInfo info;  // the stream describes itself: dtype, count, shape
    if (mans::get_frame_info(stream.data(), stream.size(), &info) != mans::Errc::ok) return 1;
    std::vector<std::uint16_t> back(info.element_count);
    r = mans::decompress(back.data(), back.size() * sizeof(std::uint16_t), stream.data(), stream.size());
    if (!r || back != data) return 1;
    std::printf("%zu -> %zu bytes\n", raw_bytes, stream.size());
    return 0;
}
