// test_api.cpp - the C API and the C++ API surface: parameters, contexts
// reused across calls, pinned status codes and names, dtype names.
#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "mans/mans.h"
#include "mans/mans.hpp"
#include "test_support.hpp"

using namespace mans_test;

// The numbers are part of the ABI and of the CLI's exit codes: never renumber.
static_assert(MANS_OK == 0, "pinned");
static_assert(MANS_ERR_INVALID_ARGUMENT == 10, "pinned");
static_assert(MANS_ERR_UNSUPPORTED_DTYPE == 11, "pinned");
static_assert(MANS_ERR_DST_TOO_SMALL == 12, "pinned");
static_assert(MANS_ERR_SIZE_NOT_MULTIPLE == 13, "pinned");
static_assert(MANS_ERR_BACKEND_UNAVAILABLE == 14, "pinned");
static_assert(MANS_ERR_BAD_MAGIC == 20, "pinned");
static_assert(MANS_ERR_UNSUPPORTED_VERSION == 21, "pinned");
static_assert(MANS_ERR_TRUNCATED == 22, "pinned");
static_assert(MANS_ERR_CORRUPT_HEADER == 23, "pinned");
static_assert(MANS_ERR_HEADER_CHECKSUM == 24, "pinned");
static_assert(MANS_ERR_CORRUPT_BLOCK == 25, "pinned");
static_assert(MANS_ERR_CONTENT_CHECKSUM == 26, "pinned");
static_assert(MANS_ERR_TRAILING_BYTES == 27, "pinned");
static_assert(MANS_ERR_OUT_OF_MEMORY == 30, "pinned");
static_assert(MANS_ERR_INTERNAL == 40, "pinned");
static_assert(MANS_ERR_TARGET_UNREACHABLE == 15 && MANS_ERR_IO == 31, "pinned");
static_assert(static_cast<int>(mans::Errc::truncated) == MANS_ERR_TRUNCATED, "C++ mirrors C");
static_assert(static_cast<int>(mans::Errc::internal) == MANS_ERR_INTERNAL, "C++ mirrors C");
// dtype numbers are stored in streams.
static_assert(MANS_DTYPE_U8 == 1 && MANS_DTYPE_U16 == 2 && MANS_DTYPE_U32 == 3 && MANS_DTYPE_U64 == 4, "pinned");
static_assert(MANS_DTYPE_I16 == 5 && MANS_DTYPE_I32 == 6 && MANS_DTYPE_I64 == 7, "pinned");
static_assert(MANS_PARAM_DTYPE == 1 && MANS_PARAM_THREADS == 2 && MANS_PARAM_BLOCK_BYTES == 3 &&
                  MANS_PARAM_BACKEND == 4 && MANS_PARAM_FORCE_SCALAR == 5,
              "pinned");
static_assert(MANS_BACKEND_AUTO == 0 && MANS_BACKEND_CPU == 1, "pinned");

TEST_CASE("status names and messages are pinned for every code", "[api]") {
    struct Row {
        mans_status code;
        const char* name;
    };
    const Row rows[] = {
        {MANS_OK, "MANS_OK"},
        {MANS_ERR_INVALID_ARGUMENT, "MANS_ERR_INVALID_ARGUMENT"},
        {MANS_ERR_UNSUPPORTED_DTYPE, "MANS_ERR_UNSUPPORTED_DTYPE"},
        {MANS_ERR_DST_TOO_SMALL, "MANS_ERR_DST_TOO_SMALL"},
        {MANS_ERR_SIZE_NOT_MULTIPLE, "MANS_ERR_SIZE_NOT_MULTIPLE"},
        {MANS_ERR_BACKEND_UNAVAILABLE, "MANS_ERR_BACKEND_UNAVAILABLE"},
        {MANS_ERR_TARGET_UNREACHABLE, "MANS_ERR_TARGET_UNREACHABLE"},
        {MANS_ERR_BAD_MAGIC, "MANS_ERR_BAD_MAGIC"},
        {MANS_ERR_UNSUPPORTED_VERSION, "MANS_ERR_UNSUPPORTED_VERSION"},
        {MANS_ERR_TRUNCATED, "MANS_ERR_TRUNCATED"},
        {MANS_ERR_CORRUPT_HEADER, "MANS_ERR_CORRUPT_HEADER"},
        {MANS_ERR_HEADER_CHECKSUM, "MANS_ERR_HEADER_CHECKSUM"},
        {MANS_ERR_CORRUPT_BLOCK, "MANS_ERR_CORRUPT_BLOCK"},
        {MANS_ERR_CONTENT_CHECKSUM, "MANS_ERR_CONTENT_CHECKSUM"},
        {MANS_ERR_TRAILING_BYTES, "MANS_ERR_TRAILING_BYTES"},
        {MANS_ERR_OUT_OF_MEMORY, "MANS_ERR_OUT_OF_MEMORY"},
        {MANS_ERR_IO, "MANS_ERR_IO"},
        {MANS_ERR_INTERNAL, "MANS_ERR_INTERNAL"},
    };
    std::vector<std::string> messages;
    for (const Row& r : rows) {
        INFO(r.name);
        CHECK(std::string(mans_status_name(r.code)) == r.name);
        CHECK(std::string(mans::errc_name(static_cast<mans::Errc>(r.code))) == r.name);
        const char* msg = mans_status_message(r.code);
        REQUIRE(msg != nullptr);
        CHECK(std::strlen(msg) > 3);
        CHECK(std::string(mans::errc_message(static_cast<mans::Errc>(r.code))) == msg);
        messages.push_back(msg);
    }
    // Messages are distinct.
    for (std::size_t i = 0; i < messages.size(); ++i)
        for (std::size_t j = i + 1; j < messages.size(); ++j) CHECK(messages[i] != messages[j]);
    // Every number that is not a code has the fallback name, never NULL.
    for (int c = -5; c < 100; ++c) {
        bool known = false;
        for (const Row& r : rows) known |= r.code == c;
        if (known) continue;
        INFO("code " << c);
        CHECK(std::string(mans_status_name(static_cast<mans_status>(c))) == "MANS_ERR_UNKNOWN");
        CHECK(mans_status_message(static_cast<mans_status>(c)) != nullptr);
    }
}

TEST_CASE("dtype names, sizes and parsing", "[api]") {
    struct Row {
        mans::DType t;
        const char* name;
        const char* long_name;
        std::size_t size;
    };
    const Row rows[] = {
        {mans::DType::u8, "u8", "uint8", 1},    {mans::DType::u16, "u16", "uint16", 2},
        {mans::DType::u32, "u32", "uint32", 4}, {mans::DType::u64, "u64", "uint64", 8},
        {mans::DType::i16, "i16", "int16", 2},  {mans::DType::i32, "i32", "int32", 4},
        {mans::DType::i64, "i64", "int64", 8},
    };
    for (const Row& r : rows) {
        INFO(r.name);
        CHECK(mans::dtype_size(r.t) == r.size);
        CHECK(std::string(mans::dtype_name(r.t)) == r.name);
        mans::DType got = mans::DType::u8;
        CHECK(mans::parse_dtype(r.name, &got));
        CHECK(got == r.t);
        got = mans::DType::u8;
        CHECK(mans::parse_dtype(r.long_name, &got));
        CHECK(got == r.t);
    }
    mans::DType got = mans::DType::u32;
    for (const char* bad : {"", "i8", "int8", "f32", "float", "U16", "u16 ", "uint", "u128"}) {
        INFO("'" << bad << "'");
        CHECK_FALSE(mans::parse_dtype(bad, &got));
    }
    CHECK(got == mans::DType::u32);  // untouched on failure
    CHECK_FALSE(mans::parse_dtype(nullptr, &got));
    CHECK_FALSE(mans::parse_dtype("u16", nullptr));
    for (int v : {0, 8, 9, 255}) {
        CHECK(mans::dtype_size(static_cast<mans::DType>(v)) == 0);
        CHECK(mans::dtype_name(static_cast<mans::DType>(v)) == nullptr);
    }
}

TEST_CASE("version queries", "[api]") {
    CHECK(std::string(mans_version_string()) == MANS_VERSION_STRING);
    CHECK(mans_format_version() == MANS_FORMAT_VERSION);
    CHECK(MANS_FORMAT_VERSION == 1);
}

TEST_CASE("compress_bound covers the worst case and is monotonic", "[api]") {
    std::size_t prev = 0;
    for (std::size_t n : {std::size_t{0}, std::size_t{1}, std::size_t{4095}, std::size_t{4096}, std::size_t{4097},
                          std::size_t{131072}, std::size_t{1} << 20, std::size_t{1} << 30}) {
        const std::size_t b = mans::compress_bound(n);
        CHECK(b >= n + 28);
        CHECK(b >= prev);
        CHECK(mans_compress_bound(n) == b);
        prev = b;
    }
    // Incompressible input in the smallest blocks fits the bound exactly sized.
    for (mans::DType dt : kAllDTypes) {
        const Bytes raw = generate(dt, Dist::random_full, 50000 / mans::dtype_size(dt), 1);
        mans::CompressConfig cfg;
        cfg.dtype = dt;
        cfg.block_bytes = 4096;
        cfg.rank = 1;
        cfg.dims[0] = raw.size() / mans::dtype_size(dt);
        Bytes out(mans::compress_bound(raw.size()));
        const mans::Result r = mans::compress(out.data(), out.size(), raw.data(), raw.size(), cfg);
        REQUIRE(r);
        CHECK(r.size <= out.size());
    }
}

TEST_CASE("C API: compress and decompress with parameters", "[api][c]") {
    const Bytes raw = generate(mans::DType::i32, Dist::random_walk, 40000, 7);
    mans_cctx* cc = mans_cctx_create();
    mans_dctx* dc = mans_dctx_create();
    REQUIRE(cc != nullptr);
    REQUIRE(dc != nullptr);
    Bytes out(mans_compress_bound(raw.size()));
    std::size_t csize = 0;

    // dtype is required.
    CHECK(mans_compress(cc, out.data(), out.size(), raw.data(), raw.size(), &csize) == MANS_ERR_UNSUPPORTED_DTYPE);

    // Parameter validation.
    CHECK(mans_cctx_set_param(cc, MANS_PARAM_DTYPE, 0) == MANS_ERR_UNSUPPORTED_DTYPE);
    CHECK(mans_cctx_set_param(cc, MANS_PARAM_DTYPE, 8) == MANS_ERR_UNSUPPORTED_DTYPE);
    CHECK(mans_cctx_set_param(cc, MANS_PARAM_DTYPE, -1) == MANS_ERR_UNSUPPORTED_DTYPE);
    CHECK(mans_cctx_set_param(cc, MANS_PARAM_DTYPE, 256 + MANS_DTYPE_I32) == MANS_ERR_UNSUPPORTED_DTYPE);
    CHECK(mans_compress(cc, out.data(), out.size(), raw.data(), raw.size(), &csize) == MANS_ERR_UNSUPPORTED_DTYPE);
    CHECK(mans_cctx_set_param(cc, MANS_PARAM_BLOCK_BYTES, 100) == MANS_ERR_INVALID_ARGUMENT);
    CHECK(mans_cctx_set_param(cc, MANS_PARAM_BLOCK_BYTES, 4095) == MANS_ERR_INVALID_ARGUMENT);
    CHECK(mans_cctx_set_param(cc, MANS_PARAM_BLOCK_BYTES, (64 << 20) + 1) == MANS_ERR_INVALID_ARGUMENT);
    CHECK(mans_cctx_set_param(cc, MANS_PARAM_BLOCK_BYTES, -4096) == MANS_ERR_INVALID_ARGUMENT);
    CHECK(mans_cctx_set_param(cc, MANS_PARAM_THREADS, -1) == MANS_ERR_INVALID_ARGUMENT);
    CHECK(mans_cctx_set_param(cc, MANS_PARAM_BACKEND, 7) == MANS_ERR_INVALID_ARGUMENT);
    CHECK(mans_cctx_set_param(cc, static_cast<mans_param>(99), 1) == MANS_ERR_INVALID_ARGUMENT);
    CHECK(mans_cctx_set_param(nullptr, MANS_PARAM_DTYPE, MANS_DTYPE_U16) == MANS_ERR_INVALID_ARGUMENT);
    CHECK(mans_dctx_set_param(dc, MANS_PARAM_DTYPE, MANS_DTYPE_U16) == MANS_ERR_INVALID_ARGUMENT);
    CHECK(mans_dctx_set_param(dc, MANS_PARAM_THREADS, -3) == MANS_ERR_INVALID_ARGUMENT);
    // Unavailable unless a CUDA module runs here (device-check, unit_on_module).
    CHECK(mans_dctx_set_param(dc, MANS_PARAM_BACKEND, MANS_BACKEND_CUDA) ==
          (mans::backend_status(mans::Backend::cuda, mans::Operation::decompress) == mans::Errc::ok
               ? MANS_OK
               : MANS_ERR_BACKEND_UNAVAILABLE));
    CHECK(mans_dctx_set_param(nullptr, MANS_PARAM_THREADS, 1) == MANS_ERR_INVALID_ARGUMENT);

    REQUIRE(mans_cctx_set_param(cc, MANS_PARAM_DTYPE, MANS_DTYPE_I32) == MANS_OK);
    REQUIRE(mans_cctx_set_param(cc, MANS_PARAM_THREADS, 2) == MANS_OK);
    REQUIRE(mans_cctx_set_param(cc, MANS_PARAM_BLOCK_BYTES, 16384) == MANS_OK);
    REQUIRE(mans_cctx_set_param(cc, MANS_PARAM_BACKEND, MANS_BACKEND_CPU) == MANS_OK);
    REQUIRE(mans_cctx_set_param(cc, MANS_PARAM_FORCE_SCALAR, 1) == MANS_OK);

    // Size not a multiple of the element size.
    CHECK(mans_compress(cc, out.data(), out.size(), raw.data(), raw.size() - 2, &csize) == MANS_ERR_SIZE_NOT_MULTIPLE);
    // Null arguments.
    CHECK(mans_compress(cc, out.data(), out.size(), raw.data(), raw.size(), nullptr) == MANS_ERR_INVALID_ARGUMENT);
    CHECK(mans_compress(nullptr, out.data(), out.size(), raw.data(), raw.size(), &csize) == MANS_ERR_INVALID_ARGUMENT);
    CHECK(mans_compress(cc, out.data(), out.size(), nullptr, raw.size(), &csize) == MANS_ERR_INVALID_ARGUMENT);
    CHECK(mans_compress(cc, nullptr, out.size(), raw.data(), raw.size(), &csize) == MANS_ERR_INVALID_ARGUMENT);
    // Too small a destination.
    CHECK(mans_compress(cc, out.data(), 10, raw.data(), raw.size(), &csize) == MANS_ERR_DST_TOO_SMALL);

    // Shape.
    const std::uint64_t dims_bad[2] = {100, 401};
    REQUIRE(mans_cctx_set_dims(cc, 2, dims_bad) == MANS_OK);
    CHECK(mans_compress(cc, out.data(), out.size(), raw.data(), raw.size(), &csize) == MANS_ERR_INVALID_ARGUMENT);
    CHECK(mans_cctx_set_dims(cc, 5, dims_bad) == MANS_ERR_INVALID_ARGUMENT);
    CHECK(mans_cctx_set_dims(cc, 2, nullptr) == MANS_ERR_INVALID_ARGUMENT);
    CHECK(mans_cctx_set_dims(nullptr, 0, nullptr) == MANS_ERR_INVALID_ARGUMENT);
    const std::uint64_t dims[2] = {100, 400};
    REQUIRE(mans_cctx_set_dims(cc, 2, dims) == MANS_OK);

    REQUIRE(mans_compress(cc, out.data(), out.size(), raw.data(), raw.size(), &csize) == MANS_OK);
    REQUIRE(csize > 0);
    REQUIRE(csize < raw.size());
    out.resize(csize);

    mans_frame_info info;
    std::memset(&info, 0xAB, sizeof info);
    REQUIRE(mans_get_frame_info(out.data(), out.size(), &info) == MANS_OK);
    CHECK(info.format_version == MANS_FORMAT_VERSION);
    CHECK(info.codec == 1);
    CHECK(info.dtype == MANS_DTYPE_I32);
    CHECK(info.element_count == 40000);
    CHECK(info.raw_bytes == raw.size());
    CHECK(info.rank == 2);
    CHECK(info.dims[0] == 100);
    CHECK(info.dims[1] == 400);
    CHECK(info.dims[2] == 0);
    CHECK(info.dims[3] == 0);
    CHECK(info.block_bytes == 16384);
    CHECK(info.block_count == (raw.size() + 16383) / 16384);
    CHECK(info.compressed_bytes == csize);
    CHECK(mans_get_frame_info(out.data(), out.size(), nullptr) == MANS_ERR_INVALID_ARGUMENT);

    // Same bytes as the C++ one-shot call with the same configuration.
    mans::CompressConfig cfg;
    cfg.dtype = mans::DType::i32;
    cfg.block_bytes = 16384;
    cfg.rank = 2;
    cfg.dims[0] = 100;
    cfg.dims[1] = 400;
    CHECK(compress(raw, cfg) == out);

    // Resetting the shape (rank 0) drops it from the stream.
    REQUIRE(mans_cctx_set_dims(cc, 0, nullptr) == MANS_OK);
    Bytes out2(mans_compress_bound(raw.size()));
    std::size_t csize2 = 0;
    REQUIRE(mans_compress(cc, out2.data(), out2.size(), raw.data(), raw.size(), &csize2) == MANS_OK);
    CHECK(csize2 == csize - 16);
    REQUIRE(mans_get_frame_info(out2.data(), csize2, &info) == MANS_OK);
    CHECK(info.rank == 0);

    // Decompression.
    REQUIRE(mans_dctx_set_param(dc, MANS_PARAM_THREADS, 3) == MANS_OK);
    REQUIRE(mans_dctx_set_param(dc, MANS_PARAM_FORCE_SCALAR, 0) == MANS_OK);
    REQUIRE(mans_dctx_set_param(dc, MANS_PARAM_BACKEND, MANS_BACKEND_AUTO) == MANS_OK);
    Bytes back(raw.size());
    std::size_t dsize = 0;
    CHECK(mans_decompress(dc, back.data(), back.size() - 1, out.data(), out.size(), &dsize) == MANS_ERR_DST_TOO_SMALL);
    CHECK(mans_decompress(dc, back.data(), back.size(), out.data(), out.size(), nullptr) == MANS_ERR_INVALID_ARGUMENT);
    CHECK(mans_decompress(nullptr, back.data(), back.size(), out.data(), out.size(), &dsize) == MANS_ERR_INVALID_ARGUMENT);
    CHECK(mans_decompress(dc, back.data(), back.size(), nullptr, out.size(), &dsize) == MANS_ERR_INVALID_ARGUMENT);
    REQUIRE(mans_decompress(dc, back.data(), back.size(), out.data(), out.size(), &dsize) == MANS_OK);
    CHECK(dsize == raw.size());
    CHECK(back == raw);
    CHECK(mans_decompress(dc, back.data(), back.size(), out.data(), out.size() - 1, &dsize) == MANS_ERR_TRUNCATED);
    CHECK(dsize == 0);

    mans_cctx_free(cc);
    mans_dctx_free(dc);
    mans_cctx_free(nullptr);
    mans_dctx_free(nullptr);
}

TEST_CASE("C API: empty input round-trips", "[api][c]") {
    mans_cctx* cc = mans_cctx_create();
    mans_dctx* dc = mans_dctx_create();
    REQUIRE(mans_cctx_set_param(cc, MANS_PARAM_DTYPE, MANS_DTYPE_U64) == MANS_OK);
    Bytes out(mans_compress_bound(0));
    std::size_t csize = 0;
    REQUIRE(mans_compress(cc, out.data(), out.size(), nullptr, 0, &csize) == MANS_OK);
    CHECK(csize > 0);
    CHECK(csize <= out.size());
    mans_frame_info info{};
    REQUIRE(mans_get_frame_info(out.data(), csize, &info) == MANS_OK);
    CHECK(info.element_count == 0);
    CHECK(info.block_count == 0);
    std::size_t dsize = 99;
    CHECK(mans_decompress(dc, nullptr, 0, out.data(), csize, &dsize) == MANS_OK);
    CHECK(dsize == 0);
    mans_cctx_free(cc);
    mans_dctx_free(dc);
}

TEST_CASE("contexts reused across many calls give one-shot results", "[api][context]") {
    mans_cctx* cc = mans_cctx_create();
    mans_dctx* dc = mans_dctx_create();
    mans::CompressContext cpp_cc;
    mans::DecompressContext cpp_dc;
    std::uint64_t seed = 500;
    std::size_t calls = 0;
    // Sizes go up and down so that scratch buffers shrink and grow between calls.
    const std::size_t sizes[] = {70000, 3, 0, 131072, 1, 9000, 300000, 257, 40000, 2};
    for (int round = 0; round < 2; ++round) {
        for (std::size_t si = 0; si < sizeof sizes / sizeof sizes[0]; ++si) {
            for (mans::DType dt : kAllDTypes) {
                const Dist d = kAllDists[(si + static_cast<std::size_t>(dt) + round) % 8];
                const std::size_t n = sizes[si] / mans::dtype_size(dt) + (round ? 1 : 0);
                const Bytes raw = generate(dt, d, n, ++seed);
                const int threads = static_cast<int>((si + round) % 4);
                const std::size_t block_bytes = si % 3 == 0 ? 4096 : 0;
                INFO(mans::dtype_name(dt) << " " << dist_name(d) << " n=" << n << " threads=" << threads
                                          << " block_bytes=" << block_bytes);
                mans::CompressConfig cfg;
                cfg.dtype = dt;
                cfg.block_bytes = block_bytes;
                cfg.threads = threads;
                const Bytes one_shot = compress(raw, cfg);
                REQUIRE(!one_shot.empty());

                // C context.
                REQUIRE(mans_cctx_set_param(cc, MANS_PARAM_DTYPE, static_cast<int64_t>(dt)) == MANS_OK);
                REQUIRE(mans_cctx_set_param(cc, MANS_PARAM_BLOCK_BYTES, static_cast<int64_t>(block_bytes)) == MANS_OK);
                REQUIRE(mans_cctx_set_param(cc, MANS_PARAM_THREADS, threads) == MANS_OK);
                Bytes c_out(mans_compress_bound(raw.size()));
                std::size_t csize = 0;
                REQUIRE(mans_compress(cc, c_out.data(), c_out.size(), raw.data(), raw.size(), &csize) == MANS_OK);
                c_out.resize(csize);
                CHECK(c_out == one_shot);

                // C++ context.
                Bytes p_out(mans::compress_bound(raw.size()));
                const mans::Result r = cpp_cc.compress(p_out.data(), p_out.size(), raw.data(), raw.size(), cfg);
                REQUIRE(r);
                p_out.resize(r.size);
                CHECK(p_out == one_shot);

                // Decompression through both reused contexts.
                Bytes back(raw.size() + 7);
                std::size_t dsize = 0;
                REQUIRE(mans_dctx_set_param(dc, MANS_PARAM_THREADS, (threads + 1) % 4) == MANS_OK);
                REQUIRE(mans_decompress(dc, back.data(), back.size(), one_shot.data(), one_shot.size(), &dsize) ==
                        MANS_OK);
                REQUIRE(dsize == raw.size());
                CHECK(std::equal(raw.begin(), raw.end(), back.begin()));
                const mans::Result dr =
                    cpp_dc.decompress(back.data(), back.size(), one_shot.data(), one_shot.size(), {threads});
                REQUIRE(dr);
                REQUIRE(dr.size == raw.size());
                CHECK(std::equal(raw.begin(), raw.end(), back.begin()));
                // A failing call leaves the context usable.
                if (one_shot.size() > 30) {
                    const mans::Result bad = cpp_dc.decompress(back.data(), back.size(), one_shot.data(),
                                                               one_shot.size() - 1);
                    CHECK(bad.code == mans::Errc::truncated);
                }
                ++calls;
            }
        }
    }
    CHECK(calls == 2 * 10 * 7);
    // Moved-from and moved-to contexts.
    mans::CompressContext moved(std::move(cpp_cc));
    const Bytes raw = generate(mans::DType::u16, Dist::skewed, 1000, 1);
    mans::CompressConfig cfg;
    cfg.dtype = mans::DType::u16;
    Bytes out(mans::compress_bound(raw.size()));
    const mans::Result r = moved.compress(out.data(), out.size(), raw.data(), raw.size(), cfg);
    REQUIRE(r);
    out.resize(r.size);
    CHECK(out == compress(raw, cfg));
    mans_cctx_free(cc);
    mans_dctx_free(dc);
}

TEST_CASE("C++ API argument errors", "[api]") {
    const Bytes raw = generate(mans::DType::u16, Dist::skewed, 1000, 1);
    Bytes out(mans::compress_bound(raw.size()));
    mans::CompressConfig cfg;
    cfg.dtype = static_cast<mans::DType>(0);
    CHECK(mans::compress(out.data(), out.size(), raw.data(), raw.size(), cfg).code == mans::Errc::unsupported_dtype);
    cfg.dtype = mans::DType::u32;
    CHECK(mans::compress(out.data(), out.size(), raw.data(), 1002, cfg).code == mans::Errc::size_not_multiple);
    cfg.dtype = mans::DType::u16;
    cfg.threads = -1;
    CHECK(mans::compress(out.data(), out.size(), raw.data(), raw.size(), cfg).code == mans::Errc::invalid_argument);
    cfg.threads = 0;
    cfg.block_bytes = 1000;
    CHECK(mans::compress(out.data(), out.size(), raw.data(), raw.size(), cfg).code == mans::Errc::invalid_argument);
    cfg.block_bytes = 0;
    cfg.rank = 5;
    CHECK(mans::compress(out.data(), out.size(), raw.data(), raw.size(), cfg).code == mans::Errc::invalid_argument);
    cfg.rank = 1;
    cfg.dims[0] = 999;
    CHECK(mans::compress(out.data(), out.size(), raw.data(), raw.size(), cfg).code == mans::Errc::invalid_argument);
    cfg.dims[0] = 1000;
    CHECK(mans::compress(out.data(), out.size(), raw.data(), raw.size(), cfg));
    cfg.backend = static_cast<mans::Backend>(9);
    CHECK(mans::compress(out.data(), out.size(), raw.data(), raw.size(), cfg).code == mans::Errc::invalid_argument);
    cfg.backend = mans::Backend::cpu;
    CHECK(mans::compress(nullptr, 100, raw.data(), raw.size(), cfg).code == mans::Errc::invalid_argument);
    const mans::Result ok = mans::compress(out.data(), out.size(), raw.data(), raw.size(), cfg);
    REQUIRE(ok);
    Bytes back(raw.size());
    mans::DecompressConfig dcfg;
    dcfg.threads = -2;
    CHECK(mans::decompress(back.data(), back.size(), out.data(), ok.size, dcfg).code == mans::Errc::invalid_argument);
    dcfg.threads = 0;
    dcfg.backend = static_cast<mans::Backend>(9);
    CHECK(mans::decompress(back.data(), back.size(), out.data(), ok.size, dcfg).code == mans::Errc::invalid_argument);
}

TEST_CASE("backend description names the backend and its kernels", "[api]") {
    const std::string scalar = mans_backend_description(MANS_BACKEND_CPU, 1);
    const std::string best = mans_backend_description(MANS_BACKEND_CPU, 0);
    CHECK(scalar == "cpu (scalar)");
    CHECK(best.rfind("cpu (", 0) == 0);
    // automatic is the CPU unless a GPU module compresses here (then its name).
    const bool gpu = mans::backend_status(mans::Backend::cuda, mans::Operation::compress) == mans::Errc::ok ||
                     mans::backend_status(mans::Backend::hip, mans::Operation::compress) == mans::Errc::ok;
    const std::string automatic = mans_backend_description(MANS_BACKEND_AUTO, 0);
    if (gpu)
        CHECK((automatic == "cuda" || automatic == "hip"));
    else
        CHECK(automatic == best);
    CHECK(std::string(mans::backend_description(mans::Backend::automatic, true)) == (gpu ? automatic : scalar));
    CHECK(std::string(mans::backend_description(mans::Backend::cpu, true)) == scalar);
    const char* bad = mans_backend_description(static_cast<mans_backend>(77), 0);
    REQUIRE(bad != nullptr);
    CHECK(std::string(bad) == "unavailable");
}

TEST_CASE("C++ API: shapes whose product overflows, thread limits, huge bounds", "[api]") {
    std::uint16_t data[2] = {1, 2};
    std::uint8_t out[256];
    mans::CompressConfig cfg;
    cfg.dtype = mans::DType::u16;
    cfg.rank = 2;
    cfg.dims[0] = (1ull << 63) + 1;
    cfg.dims[1] = 2;  // product wraps to 2 == element count
    CHECK(mans::compress(out, sizeof out, data, sizeof data, cfg).code == mans::Errc::invalid_argument);
    cfg.rank = 0;
    cfg.threads = mans::kMaxThreads + 1;
    CHECK(mans::compress(out, sizeof out, data, sizeof data, cfg).code == mans::Errc::invalid_argument);
    CHECK(mans::compress_bound(~std::size_t{0} - 100) == 0);
    CHECK(mans::compress_bound(1000) > 1000);
}

TEST_CASE("buffers of any alignment round-trip", "[api]") {
    for (mans::DType dt : {mans::DType::u16, mans::DType::i32, mans::DType::u64}) {
        const std::size_t es = mans::dtype_size(dt);
        std::vector<std::uint8_t> src(1 + 3000 * es), packed(1 + mans::compress_bound(3000 * es)), back(1 + 3000 * es);
        for (std::size_t i = 0; i < src.size(); ++i) src[i] = static_cast<std::uint8_t>((i * 37) ^ (i >> 5));
        mans::CompressConfig cfg;
        cfg.dtype = dt;
        const mans::Result c = mans::compress(packed.data() + 1, packed.size() - 1, src.data() + 1, 3000 * es, cfg);
        REQUIRE(c);
        const mans::Result d = mans::decompress(back.data() + 1, 3000 * es, packed.data() + 1, c.size);
        REQUIRE(d);
        CHECK(std::memcmp(back.data() + 1, src.data() + 1, 3000 * es) == 0);
    }
}
