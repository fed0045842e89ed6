// bench_codec.cpp - library throughput and ratio (Google Benchmark).
//
// Fixtures: codec direction x dtype x size x kernels (SIMD/scalar) x threads,
// on a real field when one is found (../shared/data, else datasets/cache) and
// on deterministic synthetic data otherwise. Counters: bytes/s of raw data
// and the compression ratio.
#include <benchmark/benchmark.h>

#include <cstdint>
#include <cstring>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include "mans/mans.hpp"

namespace {

std::vector<std::uint8_t> read_file(const std::string& path) {
    std::ifstream f(path, std::ios::binary);
    return std::vector<std::uint8_t>((std::istreambuf_iterator<char>(f)), {});
}

std::vector<std::uint8_t> find_real(const char* name) {
    for (const char* dir : {MANS_SHARED_DATA_DIR, MANS_DATASETS_CACHE_DIR}) {
        auto v = read_file(std::string(dir) + "/" + name);
        if (!v.empty()) return v;
    }
    return {};
}

// Input of `bytes` bytes: the real exafel slice (u16) or echam5 field (as
// u32/u64/u8 bytes) repeated, else a deterministic Laplacian-like series.
std::vector<std::uint8_t> make_input(mans::DType t, std::size_t bytes) {
    std::vector<std::uint8_t> src = find_real(t == mans::DType::u16 ? "exafel_1024kB.u16" : "echam5_t_17x96x192.f32");
    std::vector<std::uint8_t> out(bytes);
    if (!src.empty()) {
        for (std::size_t i = 0; i < bytes; i += src.size())
            std::memcpy(out.data() + i, src.data(), std::min(src.size(), bytes - i));
        return out;
    }
    std::mt19937_64 rng(42);
    std::geometric_distribution<int> g(0.05);
    for (std::size_t i = 0; i < bytes; ++i) out[i] = static_cast<std::uint8_t>(g(rng));
    return out;
}

void run(benchmark::State& state, mans::DType dtype, bool decompress) {
    const std::size_t bytes = static_cast<std::size_t>(state.range(0));
    const bool scalar = state.range(1) != 0;
    const int threads = static_cast<int>(state.range(2));
    const auto in = make_input(dtype, bytes - bytes % mans::dtype_size(dtype));
    std::vector<std::uint8_t> packed(mans::compress_bound(in.size())), back(in.size());
    mans::CompressConfig cfg;
    cfg.dtype = dtype;
    cfg.threads = threads;
    cfg.force_scalar = scalar;
    mans::DecompressConfig dcfg;
    dcfg.threads = threads;
    dcfg.force_scalar = scalar;
    mans::CompressContext cctx;
    mans::DecompressContext dctx;
    mans::Result r = cctx.compress(packed.data(), packed.size(), in.data(), in.size(), cfg);
    if (!r) {
        state.SkipWithError(mans::errc_name(r.code));
        return;
    }
    const std::size_t csize = r.size;
    for (auto _ : state) {
        if (decompress)
            r = dctx.decompress(back.data(), back.size(), packed.data(), csize, dcfg);
        else
            r = cctx.compress(packed.data(), packed.size(), in.data(), in.size(), cfg);
        benchmark::DoNotOptimize(r);
    }
    if (decompress && std::memcmp(back.data(), in.data(), in.size()) != 0) state.SkipWithError("mismatch");
    state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * in.size()));
    state.counters["ratio"] = static_cast<double>(in.size()) / static_cast<double>(csize);
}

void args(benchmark::internal::Benchmark* b) {
    b->ArgNames({"bytes", "scalar", "threads"});
    for (std::int64_t size : {4096, 65536, 1 << 20, 16 << 20})
        for (std::int64_t scalar : {0, 1}) b->Args({size, scalar, 1});
    b->Args({16 << 20, 0, 0});  // all threads
    b->UseRealTime();
}

#define MANS_BENCH(name, dtype)                                                                  \
    void BM_compress_##name(benchmark::State& s) { run(s, mans::DType::dtype, false); }          \
    void BM_decompress_##name(benchmark::State& s) { run(s, mans::DType::dtype, true); }         \
    BENCHMARK(BM_compress_##name)->Apply(args);                                                   \
    BENCHMARK(BM_decompress_##name)->Apply(args);

MANS_BENCH(u8, u8)
MANS_BENCH(u16, u16)
MANS_BENCH(u32, u32)
MANS_BENCH(u64, u64)

}  // namespace

BENCHMARK_MAIN();
