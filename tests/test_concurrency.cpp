// test_concurrency.cpp - many threads using the library at once, each with
// its own contexts (the documented contract), give the serial results.
#include <catch2/catch.hpp>

#include <thread>
#include <vector>

#include "test_support.hpp"

using namespace mans_test;

TEST_CASE("threads with their own contexts reproduce serial results", "[concurrency]") {
    struct Job {
        mans::DType dtype;
        Bytes raw;
        Bytes expected;  // serial stream
    };
    std::vector<Job> jobs;
    std::uint64_t seed = 11;
    for (mans::DType dt : {mans::DType::u16, mans::DType::i32, mans::DType::u64, mans::DType::u8})
        for (Dist d : {Dist::skewed, Dist::quant_runs, Dist::sparse_values, Dist::random_walk})
            jobs.push_back({dt, generate(dt, d, 40000, seed++), {}});
    for (Job& j : jobs) {
        mans::CompressConfig cfg;
        cfg.dtype = j.dtype;
        cfg.threads = 1;
        j.expected = compress(j.raw, cfg);
        REQUIRE(!j.expected.empty());
    }
    // 4 threads, each reusing one compression and one decompression context
    // over all jobs (in a different order), library-internal OpenMP on too.
    std::vector<int> failures(4, 0);
    std::vector<std::thread> pool;
    for (int t = 0; t < 4; ++t) {
        pool.emplace_back([&, t] {
            mans::CompressContext cctx;
            mans::DecompressContext dctx;
            for (std::size_t k = 0; k < jobs.size(); ++k) {
                const Job& j = jobs[(k * 5 + static_cast<std::size_t>(t) * 3) % jobs.size()];
                mans::CompressConfig cfg;
                cfg.dtype = j.dtype;
                cfg.threads = 2;
                Bytes stream(mans::compress_bound(j.raw.size()));
                const mans::Result c = cctx.compress(stream.data(), stream.size(), j.raw.data(), j.raw.size(), cfg);
                stream.resize(c ? c.size : 0);
                Bytes back(j.raw.size());
                const mans::Result d = dctx.decompress(back.data(), back.size(), stream.data(), stream.size());
                if (!c || stream != j.expected || !d || back != j.raw) ++failures[t];
            }
        });
    }
    for (auto& th : pool) th.join();
    for (int t = 0; t < 4; ++t) CHECK(failures[t] == 0);
}
