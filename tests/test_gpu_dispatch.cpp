// test_gpu_dispatch.cpp - MANS compression and decompression dispatched to
// a backend module: the cross-backend suite.
//
// Hidden tags: these tests need a module that codes. ctest runs them as
// `backend_dispatch` with MANS_BACKEND_PATH set to the host stand-in module
// (backend_fixture, FIXTURE_CODER: the GPU kernels' per-block code on the
// CPU), and scripts/device-check.sh runs them against the real CUDA module
// on a GPU. Every stream the module writes must be the CPU's, byte for
// byte, and every decode through it must equal the input and the CPU's
// result, error codes included.
#include <catch2/catch.hpp>

#include <cstring>
#include <string>

#include "mans/mans.hpp"
#include "test_support.hpp"

using mans::Backend;
using mans::Errc;
using mans::Operation;
using mans_test::Bytes;

namespace {

bool starts_with(const std::string& s, const std::string& p) { return s.rfind(p, 0) == 0; }

// The GPU backend the module path is expected under.
Backend module_backend() { return Backend::cuda; }

mans::DecompressConfig on(Backend b) {
    mans::DecompressConfig c;
    c.backend = b;
    return c;
}

mans::CompressConfig compress_on(Backend b, mans::DType dt, std::size_t block_bytes = 0) {
    mans::CompressConfig c;
    c.backend = b;
    c.dtype = dt;
    c.block_bytes = block_bytes;
    return c;
}

// Compresses raw with the module and with the CPU: the same bytes, which
// are returned.
Bytes compress_both(const Bytes& raw, mans::DType dt, std::size_t block_bytes = 0) {
    Errc gpu_e = Errc::ok, cpu_e = Errc::ok;
    const Bytes gpu = mans_test::compress(raw, compress_on(module_backend(), dt, block_bytes), &gpu_e);
    const Bytes cpu = mans_test::compress(raw, compress_on(Backend::cpu, dt, block_bytes), &cpu_e);
    REQUIRE(cpu_e == Errc::ok);
    REQUIRE(gpu_e == Errc::ok);
    REQUIRE(gpu.size() == cpu.size());
    REQUIRE(gpu == cpu);
    return gpu;
}

// Decodes `stream` with the module and with the CPU; both must agree on the
// code and, when ok, on every byte. Returns the module's code.
Errc decode_both(const Bytes& stream, std::size_t raw_cap, Bytes* out) {
    Errc gpu_e = Errc::ok, cpu_e = Errc::ok;
    const Bytes gpu = mans_test::decompress(stream, raw_cap, on(module_backend()), &gpu_e);
    const Bytes cpu = mans_test::decompress(stream, raw_cap, on(Backend::cpu), &cpu_e);
    REQUIRE(gpu_e == cpu_e);
    if (gpu_e == Errc::ok) REQUIRE(gpu == cpu);
    if (out) *out = gpu;
    return gpu_e;
}

}  // namespace

TEST_CASE("a module that codes is chosen for MANS, not for PRISM", "[.][dispatch]") {
    INFO(mans::backend_report(module_backend(), Operation::decompress));
    for (Operation op : {Operation::compress, Operation::decompress}) {
        REQUIRE(mans::backend_status(module_backend(), op) == Errc::ok);
        CHECK(starts_with(mans::backend_report(module_backend(), op), "cuda ("));
        // automatic takes the module too.
        CHECK(starts_with(mans::backend_report(Backend::automatic, op), "cuda ("));
    }
    const std::string cpu = mans::backend_description(Backend::cpu, false);
    CHECK(starts_with(mans::backend_report(Backend::automatic, Operation::prism_compress), cpu + "; cuda: "));
    CHECK(mans::backend_status(module_backend(), Operation::prism_compress) == Errc::backend_unavailable);
    CHECK(mans::backend_status(module_backend(), Operation::prism_decompress) == Errc::backend_unavailable);
    mans_cctx* c = mans_cctx_create();
    mans_dctx* d = mans_dctx_create();
    REQUIRE(c);
    REQUIRE(d);
    CHECK(mans_cctx_set_param(c, MANS_PARAM_BACKEND, MANS_BACKEND_CUDA) == MANS_OK);
    CHECK(mans_dctx_set_param(d, MANS_PARAM_BACKEND, MANS_BACKEND_CUDA) == MANS_OK);
    mans_cctx_free(c);
    mans_dctx_free(d);
}

TEST_CASE("module streams are the CPU's and decode to the input: every dtype, mapping and size",
          "[.][dispatch]") {
    const std::size_t sizes[] = {0, 1, 2, 31, 33, 1000, 65537, 300001};
    std::size_t streams = 0;
    for (mans::DType dt : mans_test::kAllDTypes) {
        const std::size_t es = mans::dtype_size(dt);
        for (std::size_t n : sizes) {
            for (std::size_t block_bytes : {std::size_t{4096}, std::size_t{0}}) {
                // One distribution per block in turn, so that blocks take
                // different mappings (stored, constant, tokens, ADM, planes,
                // dictionary).
                const Bytes raw = mans_test::generate_mixed(dt, n, 4096 / es, 1000 + n + es);
                INFO(mans::dtype_name(dt) << " n=" << n << " block_bytes=" << block_bytes);
                const Bytes stream = compress_both(raw, dt, block_bytes);
                Errc e = Errc::ok;
                // automatic compresses on the module too.
                CHECK(mans_test::compress(raw, compress_on(Backend::automatic, dt, block_bytes), &e) == stream);
                Bytes back;
                CHECK(decode_both(stream, raw.size(), &back) == Errc::ok);
                CHECK(back == raw);
                // automatic runs on the module too.
                CHECK(mans_test::decompress(stream, raw.size(), on(Backend::automatic), &e) == raw);
                ++streams;
            }
        }
        for (mans_test::Dist dist : mans_test::kAllDists) {
            const Bytes raw = mans_test::generate(dt, dist, 50000, 77);
            INFO(mans::dtype_name(dt) << " " << mans_test::dist_name(dist));
            const Bytes stream = compress_both(raw, dt);
            Bytes back;
            CHECK(decode_both(stream, raw.size(), &back) == Errc::ok);
            CHECK(back == raw);
            ++streams;
        }
    }
    std::printf("  module: %zu streams byte-identical to the CPU's, decoded to the input\n", streams);
}

TEST_CASE("module streams of real fields are the CPU's and decode to the input", "[.][dispatch]") {
    const auto files = mans_test::list_shared_data_files();
    if (files.empty()) WARN("no real data files found; only generated data was decoded");
    for (const std::string& path : files) {
        const Bytes raw = mans_test::read_file(path, 4u << 20);
        for (mans::DType dt : {mans::DType::u8, mans::DType::u16, mans::DType::i32, mans::DType::u64}) {
            const std::size_t es = mans::dtype_size(dt);
            const Bytes part(raw.begin(), raw.begin() + static_cast<std::ptrdiff_t>(raw.size() / es * es));
            INFO(path << " as " << mans::dtype_name(dt));
            const Bytes stream = compress_both(part, dt);
            Bytes back;
            CHECK(decode_both(stream, part.size(), &back) == Errc::ok);
            CHECK(back == part);
        }
    }
}

TEST_CASE("module decode of damaged streams gives the CPU's error, never wrong data", "[.][dispatch]") {
    const Bytes raw = mans_test::generate_mixed(mans::DType::u16, 20000, 2048, 5);
    mans::CompressConfig cfg;
    cfg.dtype = mans::DType::u16;
    cfg.block_bytes = 4096;
    Errc e = Errc::ok;
    const Bytes stream = mans_test::compress(raw, cfg, &e);
    REQUIRE(e == Errc::ok);
    Bytes damaged = stream;
    std::size_t errors = 0, exact = 0;
    for (std::size_t pos = 0; pos < stream.size(); pos += 5) {
        for (std::uint8_t x : {std::uint8_t{0x01}, std::uint8_t{0xff}}) {
            damaged[pos] = static_cast<std::uint8_t>(stream[pos] ^ x);
            Bytes back;
            const Errc r = decode_both(damaged, raw.size(), &back);
            if (r == Errc::ok) {
                REQUIRE(back == raw);
                ++exact;
            } else {
                ++errors;
            }
            damaged[pos] = stream[pos];
        }
    }
    CHECK(errors > 0);
    std::printf("  module decode of %zu damaged streams: %zu errors (same code as the CPU), %zu exact\n",
                errors + exact, errors, exact);
}

TEST_CASE("a module failing at run time: forced fails cleanly, automatic falls back to the CPU",
          "[.][dispatch_fails]") {
    REQUIRE(mans::backend_status(module_backend(), Operation::decompress) == Errc::ok);
    const Bytes raw = mans_test::generate_mixed(mans::DType::u32, 40000, 1024, 9);
    mans::CompressConfig cfg;
    cfg.dtype = mans::DType::u32;
    Errc e = Errc::ok;
    const Bytes stream = mans_test::compress(raw, cfg, &e);
    REQUIRE(e == Errc::ok);
    mans_test::decompress(stream, raw.size(), on(module_backend()), &e);
    CHECK(e == Errc::backend_unavailable);
    CHECK(mans_test::decompress(stream, raw.size(), on(Backend::automatic), &e) == raw);
    CHECK(e == Errc::ok);
    mans_test::compress(raw, compress_on(module_backend(), mans::DType::u32), &e);
    CHECK(e == Errc::backend_unavailable);
    CHECK(mans_test::compress(raw, compress_on(Backend::automatic, mans::DType::u32), &e) == stream);
    CHECK(e == Errc::ok);
}
