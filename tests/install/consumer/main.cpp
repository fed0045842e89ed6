// Round-trips a buffer through the installed library's C API and C++ API.
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <vector>

#include <mans/mans.h>
#include <mans/mans.hpp>

static int fail(const char* what) {
    std::fprintf(stderr, "consumer: %s\n", what);
    return 1;
}

int main() {
    std::vector<std::uint16_t> data(100000);
    std::uint32_t s = 1;
    for (auto& v : data) {
        s = s * 1664525u + 1013904223u;
        v = static_cast<std::uint16_t>(1500 + (s >> 28));
    }
    const std::size_t raw_bytes = data.size() * sizeof(data[0]);

    // C API.
    mans_cctx* cc = mans_cctx_create();
    mans_dctx* dc = mans_dctx_create();
    if (!cc || !dc) return fail("context creation");
    if (mans_cctx_set_param(cc, MANS_PARAM_DTYPE, MANS_DTYPE_U16) != MANS_OK) return fail("set dtype");
    std::vector<unsigned char> c(mans_compress_bound(raw_bytes));
    size_t csize = 0;
    mans_status st = mans_compress(cc, c.data(), c.size(), data.data(), raw_bytes, &csize);
    if (st != MANS_OK) return fail(mans_status_name(st));
    std::vector<std::uint16_t> back(data.size());
    size_t dsize = 0;
    st = mans_decompress(dc, back.data(), raw_bytes, c.data(), csize, &dsize);
    if (st != MANS_OK) return fail(mans_status_name(st));
    if (dsize != raw_bytes || back != data) return fail("C API round trip differs");
    mans_cctx_free(cc);
    mans_dctx_free(dc);

    // C++ API: same bytes as the C API.
    mans::CompressConfig cfg;
    cfg.dtype = mans::DType::u16;
    std::vector<unsigned char> c2(mans::compress_bound(raw_bytes));
    const mans::Result r = mans::compress(c2.data(), c2.size(), data.data(), raw_bytes, cfg);
    if (!r) return fail(mans::errc_name(r.code));
    if (r.size != csize || std::memcmp(c.data(), c2.data(), csize) != 0) return fail("C and C++ streams differ");
    std::vector<std::uint16_t> back2(data.size());
    const mans::Result d = mans::decompress(back2.data(), raw_bytes, c2.data(), r.size);
    if (!d || d.size != raw_bytes || back2 != data) return fail("C++ API round trip differs");

    std::printf("consumer ok: mans %s, format %u, %zu -> %zu bytes\n", mans_version_string(),
                mans_format_version(), raw_bytes, csize);
    return 0;
}
