// bench_prism.cpp - PRISM throughput in process (Google Benchmark): compress
// and full / partial retrieval of real fields from ../shared/data, without
// the CLI's file reading and writing (which the CLI timings in
// docs/PERFORMANCE.md include, and which varied most between runs here).
//
// Fields: navy uwnd repeated 8 times along its slowest axis (1056 x 73 x 144,
// 44 MB: "navy x8" in docs/PERFORMANCE.md) and levitus temp (20 x 180 x 360).
// Arguments: the relative bound's exponent (1e-k) and the threads (0 = all).
// Retrieval reads the whole archive from memory; "retrieve_1e-2" asks the
// same archive for a coarser bound (fewer planes). A field that is missing
// skips its benchmarks with the reason.
#include <benchmark/benchmark.h>

#include <cmath>
#include <cstdint>
#include <fstream>
#include <string>
#include <vector>

#include "mans/prism.hpp"

namespace {

struct Field {
    const char* file;
    unsigned copies;  // along the slowest axis
    std::uint64_t dims[3];
};

constexpr Field kNavyX8{"navy_uwnd_132x73x144.f32", 8, {132, 73, 144}};
constexpr Field kLevitus{"levitus_temp_20x180x360.f32", 1, {20, 180, 360}};

std::vector<std::uint8_t> load(const Field& f) {
    std::ifstream in(std::string(MANS_SHARED_DATA_DIR) + "/" + f.file, std::ios::binary);
    const std::vector<std::uint8_t> one((std::istreambuf_iterator<char>(in)), {});
    if (one.size() != f.dims[0] * f.dims[1] * f.dims[2] * 4) return {};
    std::vector<std::uint8_t> all;
    for (unsigned c = 0; c < f.copies; ++c) all.insert(all.end(), one.begin(), one.end());
    return all;
}

mans::prism::CompressConfig config(const Field& f, int exponent, int threads) {
    mans::prism::CompressConfig cfg;
    cfg.type = mans::prism::FloatType::f32;
    cfg.rank = 3;
    cfg.dims[0] = f.dims[0] * f.copies, cfg.dims[1] = f.dims[1], cfg.dims[2] = f.dims[2];
    cfg.mode = mans::prism::ErrorMode::relative;
    cfg.error_bound = std::pow(10.0, -exponent);
    cfg.threads = threads;
    cfg.backend = mans::Backend::cpu;
    return cfg;
}

// target_exponent 0: the full archive; else a relative bound 1e-target_exponent.
void run(benchmark::State& state, const Field& f, bool retrieve, int target_exponent) {
    const int exponent = static_cast<int>(state.range(0));
    const int threads = static_cast<int>(state.range(1));
    const std::vector<std::uint8_t> raw = load(f);
    if (raw.empty()) {
        state.SkipWithError((std::string(f.file) + " not found in " MANS_SHARED_DATA_DIR).c_str());
        return;
    }
    const mans::prism::CompressConfig cfg = config(f, exponent, threads);
    std::vector<std::uint8_t> archive;
    mans::Errc e = mans::prism::compress(raw.data(), raw.size(), cfg, &archive);
    if (e != mans::Errc::ok) {
        state.SkipWithError(mans::errc_name(e));
        return;
    }
    const mans::prism::Target target =
        target_exponent ? mans::prism::Target::rel(std::pow(10.0, -target_exponent)) : mans::prism::Target::full();
    for (auto _ : state) {
        if (retrieve) {
            mans::prism::Reader reader;
            e = mans::prism::Reader::open(mans::prism::memory_source(archive.data(), archive.size()), &reader);
            if (e == mans::Errc::ok) e = reader.set_backend(mans::Backend::cpu);
            mans::prism::Retrieval out;
            if (e == mans::Errc::ok) e = reader.retrieve(target, &out, threads);
            benchmark::DoNotOptimize(out.data());
        } else {
            e = mans::prism::compress(raw.data(), raw.size(), cfg, &archive);
        }
        if (e != mans::Errc::ok) {
            state.SkipWithError(mans::errc_name(e));
            return;
        }
    }
    state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * raw.size()));
    state.counters["ratio"] = static_cast<double>(raw.size()) / static_cast<double>(archive.size());
}

void args(benchmark::internal::Benchmark* b) {
    b->ArgNames({"rel_1e-", "threads"});
    for (std::int64_t exponent : {4, 6}) b->Args({exponent, 1});
    b->Args({4, 0});
    b->UseRealTime()->Unit(benchmark::kMillisecond);
}

void BM_prism_compress_navy_x8(benchmark::State& s) { run(s, kNavyX8, false, 0); }
void BM_prism_retrieve_navy_x8(benchmark::State& s) { run(s, kNavyX8, true, 0); }
void BM_prism_retrieve_1e2_navy_x8(benchmark::State& s) { run(s, kNavyX8, true, 2); }
void BM_prism_compress_levitus(benchmark::State& s) { run(s, kLevitus, false, 0); }
void BM_prism_retrieve_levitus(benchmark::State& s) { run(s, kLevitus, true, 0); }
BENCHMARK(BM_prism_compress_navy_x8)->Apply(args);
BENCHMARK(BM_prism_retrieve_navy_x8)->Apply(args);
BENCHMARK(BM_prism_retrieve_1e2_navy_x8)->Apply(args);
BENCHMARK(BM_prism_compress_levitus)->Apply(args);
BENCHMARK(BM_prism_retrieve_levitus)->Apply(args);

}  // namespace

BENCHMARK_MAIN();
