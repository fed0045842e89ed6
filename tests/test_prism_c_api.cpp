// test_prism_c_api.cpp - the PRISM C API (mans/prism.h) agrees with the C++
// API, reads only what it reports, and rejects bad arguments with codes.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "mans/mans.hpp"
#include "mans/prism.h"
#include "mans/prism.hpp"

namespace {

std::vector<float> field(std::size_t nz, std::size_t ny, std::size_t nx) {
    std::vector<float> v(nz * ny * nx);
    for (std::size_t i = 0; i < v.size(); ++i)
        v[i] = static_cast<float>(250 + 30 * std::sin(0.05 * (i % nx)) * std::cos(0.07 * ((i / nx) % ny)) +
                                  0.5 * std::sin(0.3 * (i / (nx * ny))));
    return v;
}

struct Counter {
    const std::uint8_t* data;
    std::uint64_t fetched;
};

int read_at(void* user, std::uint64_t off, void* dst, std::size_t n) {
    auto* c = static_cast<Counter*>(user);
    std::memcpy(dst, c->data + off, n);
    c->fetched += n;
    return 1;
}

}  // namespace

TEST_CASE("prism C API: compress, retrieve, refine, info, sources", "[prism][c_api]") {
    const std::vector<float> x = field(12, 40, 56);
    mans_prism_params p;
    mans_prism_params_init(&p);
    p.rank = 3;
    p.dims[0] = 12, p.dims[1] = 40, p.dims[2] = 56;
    p.mode = MANS_PRISM_REL;
    p.error_bound = 1e-5;
    void* archive = nullptr;
    size_t size = 0;
    REQUIRE(mans_prism_compress(x.data(), x.size() * 4, &p, &archive, &size) == MANS_OK);
    REQUIRE(archive != nullptr);

    // Same bytes as the C++ API.
    mans::prism::CompressConfig cfg;
    cfg.rank = 3;
    cfg.dims[0] = 12, cfg.dims[1] = 40, cfg.dims[2] = 56;
    cfg.mode = mans::prism::ErrorMode::relative;
    cfg.error_bound = 1e-5;
    std::vector<std::uint8_t> cpp;
    REQUIRE(mans::prism::compress(x.data(), x.size() * 4, cfg, &cpp) == mans::Errc::ok);
    REQUIRE(cpp.size() == size);
    CHECK(std::memcmp(cpp.data(), archive, size) == 0);

    Counter counter{static_cast<const std::uint8_t*>(archive), 0};
    mans_prism_reader* r = nullptr;
    REQUIRE(mans_prism_open_callback(size, read_at, &counter, &r) == MANS_OK);
    mans_prism_info info;
    REQUIRE(mans_prism_get_info(r, &info) == MANS_OK);
    CHECK(info.type == MANS_PRISM_F32);
    CHECK(info.count == x.size());
    CHECK(info.dims[2] == 56);
    CHECK(counter.fetched == info.header_bytes);

    mans_prism_result* res = nullptr;
    REQUIRE(mans_prism_retrieve(r, MANS_PRISM_TARGET_REL, 1e-2, 1, &res) == MANS_OK);
    mans_prism_stats st;
    REQUIRE(mans_prism_result_stats(res, &st) == MANS_OK);
    CHECK(st.bytes_read == counter.fetched);
    CHECK(st.bytes_read < size);
    CHECK(st.complete == 0);
    REQUIRE(mans_prism_result_size(res) == x.size() * 4);
    const float* y = static_cast<const float*>(mans_prism_result_data(res));
    double err = 0;
    for (std::size_t i = 0; i < x.size(); ++i) err = std::fmax(err, std::fabs(double(x[i]) - y[i]));
    CHECK(err <= st.max_abs_error_bound);
    CHECK(err <= 1e-2 * (info.value_max - info.value_min));

    const std::uint64_t before = counter.fetched;
    REQUIRE(mans_prism_refine(r, res, MANS_PRISM_TARGET_FULL, 0, 0) == MANS_OK);
    REQUIRE(mans_prism_result_stats(res, &st) == MANS_OK);
    CHECK(st.complete == 1);
    CHECK(counter.fetched - before == st.bytes_read_step);
    CHECK(counter.fetched == size);
    CHECK(mans_prism_bytes_read(r) == size);

    // The file reader gives the same full result.
    const char* path = "prism_c_api_test.prism";
    std::FILE* f = std::fopen(path, "wb");
    REQUIRE(f);
    REQUIRE(std::fwrite(archive, 1, size, f) == size);
    std::fclose(f);
    mans_prism_reader* rf = nullptr;
    REQUIRE(mans_prism_open_file(path, &rf) == MANS_OK);
    mans_prism_result* full = nullptr;
    REQUIRE(mans_prism_retrieve(rf, MANS_PRISM_TARGET_FULL, 0, 0, &full) == MANS_OK);
    CHECK(std::memcmp(mans_prism_result_data(full), mans_prism_result_data(res), x.size() * 4) == 0);
    std::remove(path);

    // Errors are codes (a failed compress clears its outputs, so the
    // archive is released through counter.data below).
    mans_prism_result* none = nullptr;
    CHECK(mans_prism_retrieve(r, MANS_PRISM_TARGET_ABS, info.full_max_error / 4, 0, &none) ==
          MANS_ERR_TARGET_UNREACHABLE);
    CHECK(none == nullptr);
    CHECK(mans_prism_retrieve(r, static_cast<mans_prism_target>(42), 1, 0, &none) == MANS_ERR_INVALID_ARGUMENT);
    CHECK(mans_prism_refine(rf, res, MANS_PRISM_TARGET_FULL, 0, 0) == MANS_ERR_INVALID_ARGUMENT);  // other reader
    mans_prism_reader* bad = nullptr;
    CHECK(mans_prism_open_file("/nonexistent/x.prism", &bad) == MANS_ERR_IO);
    CHECK(bad == nullptr);
    CHECK(mans_prism_open_memory(archive, size - 1, &bad) != MANS_OK);
    CHECK(bad == nullptr);
    CHECK(mans_prism_compress(x.data(), x.size() * 4 - 1, &p, &archive, &size) == MANS_ERR_SIZE_NOT_MULTIPLE);
    CHECK(mans_prism_compress(x.data(), x.size() * 4, nullptr, &archive, &size) == MANS_ERR_INVALID_ARGUMENT);
    CHECK(mans_prism_get_info(nullptr, &info) == MANS_ERR_INVALID_ARGUMENT);

    mans_prism_result_free(full);
    mans_prism_result_free(res);
    mans_prism_close(rf);
    mans_prism_close(r);
    mans_prism_free(const_cast<std::uint8_t*>(counter.data));
}

// mans_prism_params.backend and mans_prism_set_backend reach the C++ API's
// backend choice: the CPU forced gives the default's bytes and values, a
// GPU backend forced gives them too or, where none serves here,
// MANS_ERR_BACKEND_UNAVAILABLE; an unknown backend is an argument error.
namespace {
void check_c_api_backends() {
    const std::vector<float> x = field(6, 20, 28);
    mans_prism_params p;
    mans_prism_params_init(&p);
    CHECK(p.backend == MANS_BACKEND_AUTO);
    p.rank = 3;
    p.dims[0] = 6, p.dims[1] = 20, p.dims[2] = 28;
    p.error_bound = 1e-3;
    auto compress = [&](mans_backend b, mans_status* st) {
        p.backend = b;
        void* a = nullptr;
        size_t n = 0;
        *st = mans_prism_compress(x.data(), x.size() * 4, &p, &a, &n);
        std::vector<std::uint8_t> out;
        if (*st == MANS_OK) out.assign(static_cast<std::uint8_t*>(a), static_cast<std::uint8_t*>(a) + n);
        mans_prism_free(a);
        return out;
    };
    mans_status st = MANS_OK;
    const std::vector<std::uint8_t> automatic = compress(MANS_BACKEND_AUTO, &st);
    REQUIRE(st == MANS_OK);
    CHECK(compress(MANS_BACKEND_CPU, &st) == automatic);
    CHECK(st == MANS_OK);
    // Unknown values in the enum fields, stored as a C caller may (in C++ a
    // cast to the enum would itself be undefined): refused (an unknown type
    // as unsupported, as mans_compress's), also where the
    // value's low byte is a valid one (264 = 256 + MANS_PRISM_F32).
    auto refused_with = [&](void* field_addr, int value, mans_status expected = MANS_ERR_INVALID_ARGUMENT) {
        const mans_prism_params saved = p;
        std::memcpy(field_addr, &value, sizeof value);
        void* a = nullptr;
        size_t n = 0;
        const mans_status s = mans_prism_compress(x.data(), x.size() * 4, &p, &a, &n);
        mans_prism_free(a);
        p = saved;
        return s == expected;
    };
    for (int bad : {9, 4, -1, 256}) CHECK(refused_with(&p.backend, bad));
    for (int bad : {264, 0, 7}) CHECK(refused_with(&p.type, bad, MANS_ERR_UNSUPPORTED_DTYPE));
    for (int bad : {257, 0, 3}) CHECK(refused_with(&p.mode, bad));
    for (int bad : {258, 0, -2}) CHECK(refused_with(&p.planes, bad));
    CHECK(compress(MANS_BACKEND_AUTO, &st) == automatic);

    auto retrieve = [&](mans_backend b, mans_status* rst, std::string* where) {
        mans_prism_reader* r = nullptr;
        REQUIRE(mans_prism_open_memory(automatic.data(), automatic.size(), &r) == MANS_OK);
        REQUIRE(mans_prism_set_backend(r, b) == MANS_OK);
        mans_prism_result* res = nullptr;
        std::vector<std::uint8_t> values;
        *rst = mans_prism_retrieve(r, MANS_PRISM_TARGET_FULL, 0, 1, &res);
        if (*rst == MANS_OK) {
            mans_prism_stats s;
            REQUIRE(mans_prism_result_stats(res, &s) == MANS_OK);
            REQUIRE(s.backend != nullptr);
            *where = s.backend;
            const auto* d = static_cast<const std::uint8_t*>(mans_prism_result_data(res));
            values.assign(d, d + mans_prism_result_size(res));
        }
        mans_prism_result_free(res);
        mans_prism_close(r);
        return values;
    };
    std::string where;
    const std::vector<std::uint8_t> cpu = retrieve(MANS_BACKEND_CPU, &st, &where);
    REQUIRE(st == MANS_OK);
    CHECK(where == "cpu");
    CHECK(cpu.size() == x.size() * 4);
    for (mans_backend gpu : {MANS_BACKEND_CUDA, MANS_BACKEND_HIP}) {
        const mans::Backend b = static_cast<mans::Backend>(gpu);
        INFO(mans::backend_report(b, mans::Operation::prism_compress));
        const bool compresses = mans::backend_status(b, mans::Operation::prism_compress) == mans::Errc::ok;
        const std::vector<std::uint8_t> a = compress(gpu, &st);
        CHECK(st == (compresses ? MANS_OK : MANS_ERR_BACKEND_UNAVAILABLE));
        if (compresses) CHECK(a == automatic);
        const bool reads = mans::backend_status(b, mans::Operation::prism_decompress) == mans::Errc::ok;
        const std::vector<std::uint8_t> v = retrieve(gpu, &st, &where);
        CHECK(st == (reads ? MANS_OK : MANS_ERR_BACKEND_UNAVAILABLE));
        if (reads) {
            CHECK(v == cpu);
            CHECK(where == (gpu == MANS_BACKEND_CUDA ? "cuda" : "hip"));
        }
    }
    mans_prism_reader* r = nullptr;
    REQUIRE(mans_prism_open_memory(automatic.data(), automatic.size(), &r) == MANS_OK);
    CHECK(mans_prism_set_backend(r, static_cast<mans_backend>(-1)) == MANS_ERR_INVALID_ARGUMENT);
    CHECK(mans_prism_set_backend(nullptr, MANS_BACKEND_CPU) == MANS_ERR_INVALID_ARGUMENT);
    mans_prism_close(r);
}
}  // namespace

TEST_CASE("prism C API: the backend of compression and of retrieval", "[prism][c_api]") { check_c_api_backends(); }

// The same in the backend_dispatch run, where the stand-in serves as cuda.
TEST_CASE("prism C API: the backend of compression and of retrieval, through a module", "[.][dispatch]") {
    REQUIRE(mans::backend_status(mans::Backend::cuda, mans::Operation::prism_decompress) == mans::Errc::ok);
    check_c_api_backends();
}
