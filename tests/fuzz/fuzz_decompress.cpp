// fuzz_decompress - arbitrary bytes as a whole stream: frame parsing, index,
// header checksum, then block decoding. Must return an error or success,
// never crash, hang or write outside the destination.
#include <cstddef>
#include <cstdint>
#include <vector>

#include "mans/mans.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    mans::FrameInfo info{};
    const mans::Errc e = mans::get_frame_info(data, size, &info);
    // Decode into a buffer of the declared size when it is modest, else into
    // a small one (which must give dst_too_small, not a write past it).
    const std::size_t cap = e == mans::Errc::ok && info.raw_bytes <= (std::uint64_t{64} << 20)
                                ? static_cast<std::size_t>(info.raw_bytes)
                                : 4096;
    std::vector<std::uint8_t> out(cap);
    mans::DecompressConfig cfg;
    cfg.threads = 1;
    const mans::Result r = mans::decompress(out.data(), out.size(), data, size, cfg);
    if (r && (e != mans::Errc::ok || r.size != info.raw_bytes)) __builtin_trap();  // success must agree with the header
    return 0;
}
