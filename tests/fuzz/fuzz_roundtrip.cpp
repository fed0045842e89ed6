// fuzz_roundtrip - arbitrary bytes compressed as one of the dtypes, then
// decompressed: the result must be the exact input, and the stream must be
// the same with scalar and SIMD kernels (thread counts are covered by the
// unit tests: starting threads per input would slow fuzzing tenfold). The
// first byte picks dtype and block size.
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <vector>

#include "mans/mans.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    if (size < 1) return 0;
    static const mans::DType kTypes[] = {mans::DType::u8,  mans::DType::u16, mans::DType::u32, mans::DType::u64,
                                         mans::DType::i16, mans::DType::i32, mans::DType::i64};
    const mans::DType dt = kTypes[data[0] % 7];
    const std::size_t es = mans::dtype_size(dt);
    const std::uint8_t* src = data + 1;
    const std::size_t n = (size - 1) / es * es;
    mans::CompressConfig cfg;
    cfg.dtype = dt;
    cfg.block_bytes = (data[0] & 0x80) ? 4096 : 0;
    cfg.threads = 1;
    std::vector<std::uint8_t> s1(mans::compress_bound(n)), s2(s1.size()), back(n + 1, 0xEE);
    const mans::Result c1 = mans::compress(s1.data(), s1.size(), src, n, cfg);
    cfg.force_scalar = true;
    const mans::Result c2 = mans::compress(s2.data(), s2.size(), src, n, cfg);
    if (!c1 || !c2 || c1.size != c2.size || std::memcmp(s1.data(), s2.data(), c1.size) != 0) __builtin_trap();
    const mans::Result d = mans::decompress(back.data(), n, s1.data(), c1.size);
    if (!d || d.size != n || (n && std::memcmp(back.data(), src, n) != 0) || back[n] != 0xEE) __builtin_trap();
    return 0;
}
