// test_large.cpp - one stream over 4 GiB and over 2^31 elements.
//
// Proves that no size, count or offset is held in 32 bits: 2^31 + 4097 u16
// elements (4 GiB + 8 KiB) of real detector data (exafel, repeated) go
// through one compress/decompress and come back byte-exact. It needs about
// 9 GiB of memory and a minute on 2 cores; it runs by default and can be
// skipped with MANS_SKIP_LARGE_TESTS=1 on small machines.
#include <catch2/catch.hpp>

#include <cstdlib>
#include <cstring>
#include <vector>

#include "test_support.hpp"

using namespace mans_test;

TEST_CASE("a stream of more than 4 GiB and 2^31 elements round-trips", "[large]") {
    if (const char* skip = std::getenv("MANS_SKIP_LARGE_TESTS"); skip && *skip == '1') {
        WARN("MANS_SKIP_LARGE_TESTS=1: large stream test skipped");
        return;
    }
    const std::size_t n = (std::size_t{1} << 31) + 4097;
    const std::size_t bytes = 2 * n;
    Bytes pattern = exafel_prefix(1 << 20);
    if (pattern.empty()) pattern = generate(mans::DType::u16, Dist::skewed, 1 << 19, 5);
    std::vector<std::uint8_t> raw(bytes);
    for (std::size_t off = 0; off < bytes; off += pattern.size())
        std::memcpy(raw.data() + off, pattern.data(), std::min(pattern.size(), bytes - off));
    raw[bytes - 1] ^= 0x5a;  // the last element differs from the pattern

    mans::CompressConfig cfg;
    cfg.dtype = mans::DType::u16;
    std::vector<std::uint8_t> stream(mans::compress_bound(bytes));
    const mans::Result c = mans::compress(stream.data(), stream.size(), raw.data(), bytes, cfg);
    REQUIRE(c);
    stream.resize(c.size);
    stream.shrink_to_fit();

    mans::FrameInfo info{};
    REQUIRE(mans::get_frame_info(stream.data(), stream.size(), &info) == mans::Errc::ok);
    CHECK(info.element_count == n);
    CHECK(info.raw_bytes == bytes);

    std::vector<std::uint8_t> back(bytes);
    const mans::Result d = mans::decompress(back.data(), back.size(), stream.data(), stream.size());
    REQUIRE(d);
    CHECK(d.size == bytes);
    CHECK(std::memcmp(back.data(), raw.data(), bytes) == 0);
    WARN("large stream: " << bytes << " B -> " << stream.size() << " B");
}
