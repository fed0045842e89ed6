// fuzz_h5filter - the HDF5 filter callback itself (the H5Z class's filter
// function, with HDF5's allocator) on arbitrary cd_values and chunks; input
// layout in h5filter_input.hpp. Properties: decoding returns 0 (an HDF5
// error) or exactly the chunk size; encoding succeeds on any valid config
// and the chunk decodes back bit-exact (MANS) or within an absolute bound,
// with NaN and fill values exact (PRISM). Never a crash, leak or overrun.
#include <hdf5.h>

#include <cmath>
#include <cstring>

#include "../../formats/hdf5/src/h5filter_class.h"
#include "h5filter_input.hpp"

namespace {

struct Quiet {
    Quiet() { H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr); }
} quiet;

// Runs the filter like HDF5 does: the buffer comes from HDF5's allocator and
// the filter may replace it. Returns the valid byte count (0 = failure).
std::size_t run_filter(bool reverse, const std::vector<unsigned>& cd, const std::uint8_t* src, std::size_t n,
                       std::vector<std::uint8_t>* out) {
    void* buf = H5allocate_memory(n ? n : 1, 0);
    if (!buf) return 0;
    if (n) std::memcpy(buf, src, n);
    std::size_t buf_size = n;
    const std::size_t r = mans_h5_filter_class[0].filter(reverse ? H5Z_FLAG_REVERSE : 0, cd.size(), cd.data(), n,
                                                         &buf_size, &buf);
    if (r > buf_size) __builtin_trap();  // claims more bytes than its buffer
    if (r) out->assign(static_cast<std::uint8_t*>(buf), static_cast<std::uint8_t*>(buf) + r);
    H5free_memory(buf);
    H5Eclear2(H5E_DEFAULT);
    return r;
}

template <class T>
void check_lossy(const mans_h5_config& c, const std::uint8_t* orig, const std::uint8_t* back, std::size_t count) {
    for (std::size_t i = 0; i < count; ++i) {
        T x, y;
        std::memcpy(&x, orig + i * sizeof(T), sizeof(T));
        std::memcpy(&y, back + i * sizeof(T), sizeof(T));
        if (c.flags & MANS_H5_FLAG_BYTESWAP) continue;  // values are big-endian bytes: only the size is checked
        // Fill values match by bit pattern (so -0.0 is data, not the +0.0 a
        // relative bound keeps exactly).
        const T fill = static_cast<T>(c.fill), zero = 0;
        const bool special = !std::isfinite(x) ||
                             ((c.flags & MANS_H5_FLAG_FILL) && std::memcmp(&x, &fill, sizeof(T)) == 0) ||
                             (c.mode == MANS_H5_REL && std::memcmp(&x, &zero, sizeof(T)) == 0);
        if (special) {
            if (std::memcmp(&x, &y, sizeof(T)) != 0) __builtin_trap();
        } else if (c.mode == MANS_H5_ABS && !(std::fabs(double(x) - double(y)) <= c.bound)) {
            __builtin_trap();
        }
    }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    if (size < 2) return 0;
    const std::uint8_t sel = data[0];
    const bool encode = sel & 1;
    std::vector<unsigned> cd;
    std::size_t pos;
    if (sel & 2) {
        if (size < h5fuzz::kStructuredHeader) return 0;
        const mans_h5_config c = h5fuzz::config_from(data + 1);
        cd.resize(MANS_H5_CD_NVALUES);
        mans_h5_encode_config(&c, cd.data());
        const unsigned at = sel >> 2;
        if (at < MANS_H5_CD_NVALUES) cd[at] = h5fuzz::le32(data + 9);
        pos = h5fuzz::kStructuredHeader;
    } else {
        const std::size_t words = data[1] % 25;
        if (size < 2 + 4 * words) return 0;
        for (std::size_t i = 0; i < words; ++i) cd.push_back(h5fuzz::le32(data + 2 + 4 * i));
        pos = 2 + 4 * words;
    }
    const std::uint8_t* chunk = data + pos;
    const std::size_t n = size - pos;
    mans_h5_config c;
    const char* why = nullptr;
    const bool valid = mans_h5_decode_config(cd.size(), cd.data(), &c, &why) == 0;
    const std::size_t raw = valid ? static_cast<std::size_t>(mans_h5_chunk_bytes(&c)) : 0;
    if (valid && raw > (std::size_t{1} << 16)) return 0;  // stay fast
    std::vector<std::uint8_t> out;

    if (!encode) {
        const std::size_t r = run_filter(true, cd, chunk, n, &out);
        if (!valid && r != 0) __builtin_trap();  // bad cd_values never decode
        if (r != 0 && r != raw) __builtin_trap();
        return 0;
    }
    std::vector<std::uint8_t> in(raw);
    if (raw && n) std::memcpy(in.data(), chunk, std::min(n, raw));
    const std::size_t coded = run_filter(false, cd, in.data(), in.size(), &out);
    if (!valid) {
        if (coded != 0) __builtin_trap();
        return 0;
    }
    if (coded == 0 || coded > raw) __builtin_trap();  // valid configs always encode, never expand
    std::vector<std::uint8_t> back;
    if (run_filter(true, cd, out.data(), coded, &back) != raw) __builtin_trap();
    if (c.codec == MANS_H5_CODEC_MANS) {
        if (back != in) __builtin_trap();
    } else if (c.dtype == MANS_PRISM_F32) {
        check_lossy<float>(c, in.data(), back.data(), raw / 4);
    } else {
        check_lossy<double>(c, in.data(), back.data(), raw / 8);
    }
    return 0;
}
