// test_gpu_dispatch.cpp - MANS compression and decompression, and PRISM
// compression and retrieval, dispatched to a backend module: the
// cross-backend suite.
//
// Hidden tags: these tests need a module that codes. ctest runs them as
// `backend_dispatch` with MANS_BACKEND_PATH set to the host stand-in module
// (backend_fixture, FIXTURE_CODER: the GPU kernels' per-block code on the
// CPU), and scripts/device-check.sh runs them against the real CUDA module
// on a GPU. Every stream the module writes must be the CPU's, byte for
// byte, and every decode through it must equal the input and the CPU's
// result, error codes included.
#include <catch2/catch.hpp>

#include <dlfcn.h>

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <initializer_list>
#include <string>
#include <vector>

#include "core/frame.hpp"
#include "mans/mans.hpp"
#include "mans/prism.hpp"
#include "prism_hd_steps.hpp"  // special_field
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

TEST_CASE("a module that codes is chosen for MANS and PRISM, both directions", "[.][dispatch]") {
    INFO(mans::backend_report(module_backend(), Operation::decompress));
    for (Operation op : {Operation::compress, Operation::decompress}) {
        REQUIRE(mans::backend_status(module_backend(), op) == Errc::ok);
        CHECK(starts_with(mans::backend_report(module_backend(), op), "cuda ("));
        // automatic takes the module too.
        CHECK(starts_with(mans::backend_report(Backend::automatic, op), "cuda ("));
    }
    const std::string cpu = mans::backend_description(Backend::cpu, false);
    CHECK(mans::backend_status(module_backend(), Operation::prism_compress) == Errc::ok);
    CHECK(starts_with(mans::backend_report(Backend::automatic, Operation::prism_compress), "cuda ("));
    CHECK(mans::backend_status(module_backend(), Operation::prism_decompress) == Errc::ok);
    CHECK(starts_with(mans::backend_report(Backend::automatic, Operation::prism_decompress), "cuda ("));
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
                // automatic: the same bytes (the CPU's, below 16 MiB).
                CHECK(mans_test::compress(raw, compress_on(Backend::automatic, dt, block_bytes), &e) == stream);
                Bytes back;
                CHECK(decode_both(stream, raw.size(), &back) == Errc::ok);
                CHECK(back == raw);
                // automatic: the same (the CPU below 16 MiB).
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

// A counter the stand-in module exports (tests/backend_fixture), or -1 when
// the module in MANS_BACKEND_PATH is not the stand-in (a real GPU module).
long long stand_in_counter(const char* name) {
    const char* dir = std::getenv("MANS_BACKEND_PATH");
    if (!dir) return -1;
    void* h = ::dlopen((std::string(dir) + "/libmans_backend_cuda.so").c_str(), RTLD_NOW | RTLD_NOLOAD);
    if (!h) return -1;
    // Signed or unsigned long long there: either reads as long long.
    const auto* n = static_cast<const long long*>(::dlsym(h, name));
    const long long v = n ? *n : -1;
    ::dlclose(h);  // drops only the reference RTLD_NOLOAD took
    return v;
}

// Batches the stand-in module has coded.
long long stand_in_batches() { return stand_in_counter("mans_fixture_batches"); }

TEST_CASE("automatic runs inputs of 16 MiB or more on the module, smaller ones on the CPU", "[.][dispatch]") {
    // Both self-tests first: they count batches too.
    REQUIRE(mans::backend_status(module_backend(), Operation::compress) == Errc::ok);
    REQUIRE(mans::backend_status(module_backend(), Operation::decompress) == Errc::ok);
    const std::string line = mans::backend_report(Backend::automatic, Operation::compress);
    INFO(line);
    CHECK(line.find(" from 16 MiB, else cpu") != std::string::npos);
    const Bytes small = mans_test::generate_mixed(mans::DType::u16, 100000, 4096, 3);
    const Bytes big = mans_test::generate_mixed(mans::DType::u16, (std::size_t{16} << 20) / 2 + 5, 65536, 4);
    Errc e = Errc::ok;
    const long long before = stand_in_batches();
    const Bytes s_small = mans_test::compress(small, compress_on(Backend::automatic, mans::DType::u16), &e);
    CHECK(mans_test::decompress(s_small, small.size(), on(Backend::automatic), &e) == small);
    const long long after_small = stand_in_batches();
    const Bytes s_big = mans_test::compress(big, compress_on(Backend::automatic, mans::DType::u16), &e);
    REQUIRE(e == Errc::ok);
    CHECK(s_big == mans_test::compress(big, compress_on(Backend::cpu, mans::DType::u16), &e));
    CHECK(mans_test::decompress(s_big, big.size(), on(Backend::automatic), &e) == big);
    const long long after_big = stand_in_batches();
    if (before < 0) {
        WARN("not the stand-in module: where automatic ran is not observable here");
    } else {
        CHECK(after_small == before);     // small: the CPU
        CHECK(after_big >= before + 2);   // big: one encode and one decode batch at least
    }
}

// The host-memory protocol of ABI 8, as the stand-in records it: windows
// coded, host calls ended, host calls still open.
struct HostCalls {
    long long windows, ended, open;
};
HostCalls stand_in_host_calls() {
    return {stand_in_counter("mans_fixture_windows"), stand_in_counter("mans_fixture_host_calls_ended"),
            stand_in_counter("mans_fixture_open_host_calls")};
}
// What one API call added: `windows` windows, then one end_host_call, and
// nothing left open.
void check_one_host_call(const HostCalls& before, long long windows) {
    const HostCalls after = stand_in_host_calls();
    CHECK(after.windows - before.windows == windows);
    CHECK(after.ended - before.ended == 1);
    CHECK(after.open == 0);
}

TEST_CASE("a stream's windows on the module end with end_host_call, after a failed window too", "[.][dispatch]") {
    REQUIRE(mans::backend_status(module_backend(), Operation::compress) == Errc::ok);
    REQUIRE(mans::backend_status(module_backend(), Operation::decompress) == Errc::ok);
    if (stand_in_host_calls().windows < 0) {
        WARN("not the stand-in module: its windows are not observable here");
        return;
    }
    REQUIRE(stand_in_host_calls().open == 0);
    // 40 blocks of 4 KiB: the stand-in's windows of 64 KiB take 16, 16 and 8.
    const Bytes raw = mans_test::generate_mixed(mans::DType::u16, 40 * 2048, 2048, 21);
    HostCalls before = stand_in_host_calls();
    const Bytes stream = compress_both(raw, mans::DType::u16, 4096);
    check_one_host_call(before, 3);
    before = stand_in_host_calls();
    Bytes back;
    CHECK(decode_both(stream, raw.size(), &back) == Errc::ok);
    CHECK(back == raw);
    check_one_host_call(before, 3);

    // A damaged block in the second window: the core stops after that
    // window (the lowest failing block's error) and still ends the call.
    mans::detail::ParsedFrame f;
    REQUIRE(mans::detail::parse_frame(stream.data(), stream.size(), &f) == Errc::ok);
    REQUIRE(f.header.block_count() == 40);
    Bytes damaged = stream;
    bool failed = false;
    const std::uint64_t from = f.offsets[20], to = from + f.index[20].payload_bytes;
    for (std::uint64_t pos = from; pos < to && !failed; ++pos) {
        damaged[pos] ^= 0x5a;
        before = stand_in_host_calls();
        if (decode_both(damaged, raw.size(), nullptr) != Errc::ok) {
            failed = true;
            check_one_host_call(before, 2);
        }
        damaged[pos] = stream[pos];
    }
    CHECK(failed);

    // A stream of no blocks: no window, and the call still ends (a no-op
    // for a module with nothing open).
    before = stand_in_host_calls();
    const Bytes empty_stream = compress_both(Bytes{}, mans::DType::u16, 4096);
    CHECK(decode_both(empty_stream, 0, nullptr) == Errc::ok);
    const HostCalls after = stand_in_host_calls();
    CHECK(after.windows == before.windows);
    CHECK(after.open == 0);
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
    // Both self-tests first (small batches, which the stand-in codes), so
    // that the host calls counted below are the streams'.
    REQUIRE(mans::backend_status(module_backend(), Operation::decompress) == Errc::ok);
    REQUIRE(mans::backend_status(module_backend(), Operation::compress) == Errc::ok);
    // 40 blocks: more than the stand-in takes in one batch.
    const Bytes raw = mans_test::generate_mixed(mans::DType::u32, 40000, 1024, 9);
    mans::CompressConfig cfg;
    cfg.dtype = mans::DType::u32;
    cfg.block_bytes = 4096;
    cfg.backend = Backend::cpu;
    Errc e = Errc::ok;
    const Bytes stream = mans_test::compress(raw, cfg, &e);
    REQUIRE(e == Errc::ok);
    // The failed window (one: the core's default window holds all 40
    // blocks) still ends its host call, so the module's state is freed.
    const bool observable = stand_in_host_calls().windows >= 0;
    HostCalls before = stand_in_host_calls();
    mans_test::decompress(stream, raw.size(), on(module_backend()), &e);
    CHECK(e == Errc::backend_unavailable);
    if (observable) check_one_host_call(before, 1);
    CHECK(mans_test::decompress(stream, raw.size(), on(Backend::automatic), &e) == raw);
    CHECK(e == Errc::ok);
    before = stand_in_host_calls();
    mans_test::compress(raw, compress_on(module_backend(), mans::DType::u32, 4096), &e);
    CHECK(e == Errc::backend_unavailable);
    if (observable) check_one_host_call(before, 1);
    CHECK(mans_test::compress(raw, compress_on(Backend::automatic, mans::DType::u32, 4096), &e) == stream);
    CHECK(e == Errc::ok);
    if (observable) CHECK(stand_in_host_calls().open == 0);
}

TEST_CASE("a module that codes wrongly fails its self-test and is never used", "[.][dispatch_wrong]") {
    for (Operation op : {Operation::compress, Operation::decompress}) {
        const std::string why = mans::backend_report(module_backend(), op);
        INFO(why);
        CHECK(mans::backend_status(module_backend(), op) == Errc::backend_unavailable);
        CHECK(why.find("self-test failed") != std::string::npos);
        CHECK(starts_with(mans::backend_report(Backend::automatic, op), mans::backend_description(Backend::cpu, false)));
    }
    const Bytes raw = mans_test::generate_mixed(mans::DType::u16, 30000, 2048, 11);
    Errc e = Errc::ok;
    const Bytes cpu = mans_test::compress(raw, compress_on(Backend::cpu, mans::DType::u16), &e);
    REQUIRE(e == Errc::ok);
    CHECK(mans_test::compress(raw, compress_on(Backend::automatic, mans::DType::u16), &e) == cpu);
    CHECK(mans_test::decompress(cpu, raw.size(), on(Backend::automatic), &e) == raw);
    CHECK(e == Errc::ok);
}

// ---------------------------------------------------------------- PRISM

namespace {

struct PrismField {
    std::string what;
    Bytes raw;
    mans::prism::CompressConfig cfg;
};

PrismField prism_field(std::string what, Bytes raw, mans::prism::FloatType t, unsigned rank,
                       std::initializer_list<std::uint64_t> dims, double rel) {
    PrismField f{std::move(what), std::move(raw), {}};
    f.cfg.type = t;
    f.cfg.rank = rank;
    unsigned a = 0;
    for (std::uint64_t d : dims) f.cfg.dims[a++] = d;
    f.cfg.mode = mans::prism::ErrorMode::relative;
    f.cfg.error_bound = rel;
    return f;
}

// A smooth f32 field of 64 x 256 x 256 (16 MiB): automatic's threshold.
PrismField big_prism_field() {
    const std::uint64_t n = 64ull * 256 * 256;
    Bytes raw(n * 4);
    for (std::uint64_t i = 0; i < n; ++i) {
        const float v = std::sin(0.001f * static_cast<float>(i % 65536)) + 0.01f * static_cast<float>(i / 65536);
        std::memcpy(raw.data() + i * 4, &v, 4);
    }
    return prism_field("smooth f32 64x256x256", std::move(raw), mans::prism::FloatType::f32, 3, {64, 256, 256}, 1e-3);
}

Bytes prism_on(const PrismField& f, Backend b, Errc* e) {
    mans::prism::CompressConfig cfg = f.cfg;
    cfg.backend = b;
    Bytes archive;
    *e = mans::prism::compress(f.raw.data(), f.raw.size(), cfg, &archive);
    return archive;
}

// A retrieval of `archive` for `target` reconstructed on backend b: its
// values, and in *where the backend its stats name (e: its status).
Bytes retrieve_on(const Bytes& archive, const mans::prism::Target& target, Backend b, Errc* e,
                  std::string* where = nullptr) {
    mans::prism::Reader r;
    *e = mans::prism::Reader::open(mans::prism::memory_source(archive.data(), archive.size()), &r);
    if (*e != Errc::ok) return {};
    REQUIRE(r.set_backend(b) == Errc::ok);
    mans::prism::Retrieval out;
    *e = r.retrieve(target, &out);
    if (*e != Errc::ok) return {};
    if (where) *where = out.stats().backend;
    const auto* p = static_cast<const std::uint8_t*>(out.data());
    return Bytes(p, p + out.bytes());
}

// Synthetic fields with every kind of value, and real ones.
std::vector<PrismField> prism_fields() {
    std::vector<PrismField> fields;
    const std::uint64_t d3[] = {7, 19, 23}, d4[] = {3, 5, 6, 7}, d1[] = {1};
    fields.push_back(prism_field("f32 7x19x23 with NaN, Inf, fills, spikes", mans_test::special_field<float>(d3, 3, 80),
                                 mans::prism::FloatType::f32, 3, {7, 19, 23}, 1e-4));
    fields.back().cfg.fill_values = {-999.0};
    fields.push_back(prism_field("f64 3x5x6x7 with NaN, Inf, spikes", mans_test::special_field<double>(d4, 4, 80),
                                 mans::prism::FloatType::f64, 4, {3, 5, 6, 7}, 1e-6));
    fields.push_back(prism_field("f32 of one value", mans_test::special_field<float>(d1, 1, 0),
                                 mans::prism::FloatType::f32, 1, {1}, 1e-2));
    const struct {
        const char* file;
        mans::prism::FloatType type;
        unsigned rank;
        std::initializer_list<std::uint64_t> dims;
        double rel;
    } files[] = {
        {"levitus_temp_20x180x360.f32", mans::prism::FloatType::f32, 3, {20, 180, 360}, 1e-5},  // 44 % fill
        {"stageiv_precip_23x118x87.f32", mans::prism::FloatType::f32, 3, {23, 118, 87}, 1e-2},
        {"cosmo_hsurf_438x450.f32", mans::prism::FloatType::f32, 2, {438, 450}, 1e-3},
        {"sdo_aia171_128x128.f64", mans::prism::FloatType::f64, 2, {128, 128}, 1e-6},
    };
    for (const auto& f : files) {
        const std::string path = mans_test::find_data_file(f.file);
        if (path.empty()) {
            WARN("skipped: " << f.file << " not found");
            continue;
        }
        fields.push_back(prism_field(f.file, mans_test::read_file(path), f.type, f.rank, f.dims, f.rel));
    }
    if (fields.size() < 7) WARN("real fields missing: " << 7 - fields.size() << " of 4 skipped");
    return fields;
}

}  // namespace

TEST_CASE("module PRISM archives are the CPU's: real fields, specials, both codings, f32 and f64", "[.][dispatch]") {
    REQUIRE(mans::backend_status(module_backend(), Operation::prism_compress) == Errc::ok);
    const std::vector<PrismField> fields = prism_fields();
    const long long before = stand_in_batches();
    for (const PrismField& f : fields)
        for (auto coding : {mans::prism::PlaneCoding::negabinary, mans::prism::PlaneCoding::sign_magnitude}) {
            PrismField g = f;
            g.cfg.planes = coding;
            INFO(f.what << ", coding " << static_cast<int>(coding));
            Errc gpu_e = Errc::ok, cpu_e = Errc::ok;
            const Bytes gpu = prism_on(g, module_backend(), &gpu_e);
            const Bytes cpu = prism_on(g, Backend::cpu, &cpu_e);
            REQUIRE(cpu_e == Errc::ok);
            REQUIRE(gpu_e == Errc::ok);
            CHECK(gpu.size() == cpu.size());
            CHECK(gpu == cpu);
        }
    // Every forced compression ran on the module (the stand-in counts them).
    if (before >= 0) CHECK(stand_in_batches() == before + 2 * static_cast<long long>(fields.size()));
    // The encoder's own errors come back as the CPU's: an f64 range that
    // overflows under a relative bound is invalid_argument on both.
    {
        const std::uint64_t d[] = {64};
        PrismField huge = prism_field("f64 of +-1.7e308", Bytes(64 * 8), mans::prism::FloatType::f64, 1, {64}, 1e-3);
        (void)d;
        for (std::size_t i = 0; i < 64; ++i) {
            const double v = i % 2 ? 1.7e308 : -1.7e308;
            std::memcpy(huge.raw.data() + 8 * i, &v, 8);
        }
        Errc ge = Errc::ok, ce = Errc::ok;
        prism_on(huge, module_backend(), &ge);
        prism_on(huge, Backend::cpu, &ce);
        CHECK(ce != Errc::ok);
        CHECK(ge == ce);
    }
    // Arguments are checked before any module sees them.
    PrismField bad = fields[0];
    bad.cfg.error_bound = -1;
    Errc e = Errc::ok;
    prism_on(bad, module_backend(), &e);
    CHECK(e == Errc::invalid_argument);
    bad = fields[0];
    bad.raw.pop_back();
    prism_on(bad, module_backend(), &e);
    CHECK(e == Errc::size_not_multiple);
}

TEST_CASE("automatic runs PRISM fields of 16 MiB or more on the module, smaller ones on the CPU", "[.][dispatch]") {
    const std::uint64_t d3[] = {20, 30, 40};
    const PrismField small = prism_field("f32 20x30x40", mans_test::special_field<float>(d3, 3, 50),
                                         mans::prism::FloatType::f32, 3, {20, 30, 40}, 1e-3);
    const PrismField big = big_prism_field();
    // The module loaded and its self-test run first (they count batches too).
    REQUIRE(mans::backend_status(module_backend(), Operation::prism_compress) == Errc::ok);
    Errc e = Errc::ok;
    const long long before = stand_in_batches();
    const Bytes s_small = prism_on(small, Backend::automatic, &e);
    REQUIRE(e == Errc::ok);
    const long long after_small = stand_in_batches();
    const Bytes s_big = prism_on(big, Backend::automatic, &e);
    REQUIRE(e == Errc::ok);
    const long long after_big = stand_in_batches();
    CHECK(s_small == prism_on(small, Backend::cpu, &e));
    CHECK(s_big == prism_on(big, Backend::cpu, &e));
    if (before < 0) {
        WARN("not the stand-in module: where automatic ran is not observable here");
    } else {
        CHECK(after_small == before);     // small: the CPU
        CHECK(after_big == before + 1);   // big: the module
    }
}

TEST_CASE("a module failing PRISM at run time: forced fails cleanly, automatic falls back to the CPU",
          "[.][dispatch_fails]") {
    REQUIRE(mans::backend_status(module_backend(), Operation::prism_compress) == Errc::ok);
    const PrismField big = big_prism_field();
    Errc e = Errc::ok;
    const Bytes cpu = prism_on(big, Backend::cpu, &e);
    REQUIRE(e == Errc::ok);
    const Bytes forced = prism_on(big, module_backend(), &e);
    CHECK(e == Errc::backend_unavailable);
    CHECK(prism_on(big, Backend::automatic, &e) == cpu);
    CHECK(e == Errc::ok);
}

TEST_CASE("a module that compresses PRISM wrongly fails its self-test and is never used", "[.][dispatch_wrong]") {
    const std::string why = mans::backend_report(module_backend(), Operation::prism_compress);
    INFO(why);
    CHECK(mans::backend_status(module_backend(), Operation::prism_compress) == Errc::backend_unavailable);
    CHECK(why.find("self-test failed: PRISM compress of self-test field 1") != std::string::npos);
    const PrismField big = big_prism_field();
    Errc e = Errc::ok;
    const Bytes cpu = prism_on(big, Backend::cpu, &e);
    REQUIRE(e == Errc::ok);
    CHECK(prism_on(big, Backend::automatic, &e) == cpu);
    CHECK(e == Errc::ok);
    prism_on(big, module_backend(), &e);
    CHECK(e == Errc::backend_unavailable);
}

// ---------------------------------------------------------------- PRISM retrieval

TEST_CASE("module PRISM retrievals are the CPU's: full, coarse and refined, both codings, f32 and f64",
          "[.][dispatch]") {
    REQUIRE(mans::backend_status(module_backend(), Operation::prism_decompress) == Errc::ok);
    const std::vector<PrismField> fields = prism_fields();
    const long long before = stand_in_batches();
    long long forced = 0;
    for (const PrismField& f : fields)
        for (auto coding : {mans::prism::PlaneCoding::negabinary, mans::prism::PlaneCoding::sign_magnitude}) {
            PrismField g = f;
            g.cfg.planes = coding;
            INFO(f.what << ", coding " << static_cast<int>(coding));
            Errc e = Errc::ok;
            const Bytes archive = prism_on(g, Backend::cpu, &e);
            REQUIRE(e == Errc::ok);
            std::vector<mans::prism::Target> targets = {mans::prism::Target::full(),
                                                        mans::prism::Target::bytes(archive.size() / 4)};
            if (g.cfg.error_bound < 1e-2) targets.push_back(mans::prism::Target::rel(1e-2));
            for (const mans::prism::Target& t : targets) {
                INFO("target kind " << static_cast<int>(t.kind) << " value " << t.value);
                Errc ge = Errc::ok, ce = Errc::ok;
                std::string where;
                const Bytes gpu = retrieve_on(archive, t, module_backend(), &ge, &where);
                const Bytes cpu = retrieve_on(archive, t, Backend::cpu, &ce);
                CHECK(ge == ce);
                if (ce != Errc::ok) continue;  // a byte budget below the header and base: both refuse
                ++forced;
                CHECK(where == "cuda");
                CHECK(gpu.size() == cpu.size());
                CHECK(gpu == cpu);
            }
            // A refinement on the module equals a one-shot full retrieval.
            const mans::prism::Target first = mans::prism::Target::bytes(archive.size() / 2);
            retrieve_on(archive, first, Backend::cpu, &e);
            if (e == Errc::ok) {  // (a field of one value has nothing to cut)
                mans::prism::Reader r;
                REQUIRE(mans::prism::Reader::open(mans::prism::memory_source(archive.data(), archive.size()), &r) ==
                        Errc::ok);
                REQUIRE(r.set_backend(module_backend()) == Errc::ok);
                mans::prism::Retrieval out;
                REQUIRE(r.retrieve(first, &out) == Errc::ok);
                REQUIRE(r.refine(&out, mans::prism::Target::full()) == Errc::ok);
                forced += 2;
                CHECK(std::string(out.stats().backend) == "cuda");
                const Bytes full = retrieve_on(archive, mans::prism::Target::full(), Backend::cpu, &e);
                REQUIRE(out.bytes() == full.size());
                CHECK(std::memcmp(out.data(), full.data(), full.size()) == 0);
            }
            // A damaged plane is refused as on the CPU (its checksum, before any module).
            Bytes bad = archive;
            bad[bad.size() - 3] ^= 0x40;
            Errc ge = Errc::ok, ce = Errc::ok;
            retrieve_on(bad, mans::prism::Target::full(), module_backend(), &ge);
            retrieve_on(bad, mans::prism::Target::full(), Backend::cpu, &ce);
            CHECK(ce != Errc::ok);
            CHECK(ge == ce);
        }
    // Every forced reconstruction ran on the module (the stand-in counts them;
    // a refinement's retrieve and refine are one each).
    if (before >= 0) CHECK(stand_in_batches() == before + forced);
    CHECK(forced > 3 * static_cast<long long>(fields.size()));
}

TEST_CASE("automatic reconstructs PRISM fields of 16 MiB or more on the module, smaller ones on the CPU",
          "[.][dispatch]") {
    const std::uint64_t d3[] = {20, 30, 40};
    const PrismField small = prism_field("f32 20x30x40", mans_test::special_field<float>(d3, 3, 50),
                                         mans::prism::FloatType::f32, 3, {20, 30, 40}, 1e-3);
    const PrismField big = big_prism_field();
    REQUIRE(mans::backend_status(module_backend(), Operation::prism_decompress) == Errc::ok);
    for (const PrismField* f : {&small, &big}) {
        INFO(f->what);
        Errc e = Errc::ok;
        const Bytes archive = prism_on(*f, Backend::cpu, &e);
        REQUIRE(e == Errc::ok);
        std::string where;
        const long long before = stand_in_batches();
        const Bytes automatic = retrieve_on(archive, mans::prism::Target::rel(1e-2), Backend::automatic, &e, &where);
        REQUIRE(e == Errc::ok);
        const long long after = stand_in_batches();
        CHECK(automatic == retrieve_on(archive, mans::prism::Target::rel(1e-2), Backend::cpu, &e));
        CHECK(where == (f == &big ? "cuda" : "cpu"));
        if (before >= 0) CHECK(after == before + (f == &big ? 1 : 0));
    }
}

TEST_CASE("a module failing PRISM retrieval at run time: forced fails cleanly, automatic falls back to the CPU",
          "[.][dispatch_fails]") {
    REQUIRE(mans::backend_status(module_backend(), Operation::prism_decompress) == Errc::ok);
    const PrismField big = big_prism_field();
    Errc e = Errc::ok;
    const Bytes archive = prism_on(big, Backend::cpu, &e);
    REQUIRE(e == Errc::ok);
    const Bytes cpu = retrieve_on(archive, mans::prism::Target::full(), Backend::cpu, &e);
    REQUIRE(e == Errc::ok);
    retrieve_on(archive, mans::prism::Target::full(), module_backend(), &e);
    CHECK(e == Errc::backend_unavailable);
    std::string where;
    CHECK(retrieve_on(archive, mans::prism::Target::full(), Backend::automatic, &e, &where) == cpu);
    CHECK(e == Errc::ok);
    CHECK(where == "cpu");
}

TEST_CASE("a module that reconstructs PRISM wrongly fails its self-test and is never used", "[.][dispatch_wrong]") {
    const std::string why = mans::backend_report(module_backend(), Operation::prism_decompress);
    INFO(why);
    CHECK(mans::backend_status(module_backend(), Operation::prism_decompress) == Errc::backend_unavailable);
    CHECK(why.find("self-test failed: PRISM full retrieval of self-test field 1") != std::string::npos);
    const PrismField big = big_prism_field();
    Errc e = Errc::ok;
    const Bytes archive = prism_on(big, Backend::cpu, &e);
    REQUIRE(e == Errc::ok);
    const Bytes cpu = retrieve_on(archive, mans::prism::Target::full(), Backend::cpu, &e);
    std::string where;
    CHECK(retrieve_on(archive, mans::prism::Target::full(), Backend::automatic, &e, &where) == cpu);
    CHECK(e == Errc::ok);
    CHECK(where == "cpu");
    retrieve_on(archive, mans::prism::Target::full(), module_backend(), &e);
    CHECK(e == Errc::backend_unavailable);
}
