// fuzz_block - arbitrary bytes as one block payload, below the checksums, so
// that every mapping's decoder sees hostile input. The first two bytes pick
// the dtype and the element count. The scalar and SIMD decoders must agree
// (same error, same output).
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <vector>

#include "backend.hpp"
#include "mapping/block_codec.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    using namespace mans::detail;
    if (size < 2) return 0;
    static const mans::DType kTypes[] = {mans::DType::u8,  mans::DType::u16, mans::DType::u32, mans::DType::u64,
                                         mans::DType::i16, mans::DType::i32, mans::DType::i64};
    const mans::DType dt = kTypes[data[0] % 7];
    const std::size_t n = 1 + (static_cast<std::size_t>(data[1]) * 37) % 9000;
    const std::size_t bytes = n * mans::dtype_size(dt);
    static BlockScratch scratch_a, scratch_b;
    std::vector<std::uint8_t> a(bytes + 1, 0xA5), b(bytes + 1, 0xA5);
    const auto& be = cpu_backend();
    const mans::Errc ea = decode_block(dt, data + 2, size - 2, n, a.data(), be.kernels(true), scratch_a);
    const mans::Errc eb = decode_block(dt, data + 2, size - 2, n, b.data(), be.kernels(false), scratch_b);
    if (ea != eb) __builtin_trap();
    if (a[bytes] != 0xA5 || b[bytes] != 0xA5) __builtin_trap();  // wrote past n elements
    if (ea == mans::Errc::ok && std::memcmp(a.data(), b.data(), bytes) != 0) __builtin_trap();
    return 0;
}
