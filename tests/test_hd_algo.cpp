// test_hd_algo.cpp - the pieces of the shared (MANS_HD) coders that a GPU
// runs differently from the CPU: the GPU sorts with heap_sort_u64 and
// computes log2_small_fix16 instead of reading its table. Both must give
// the CPU's results, or GPU streams would differ.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdint>
#include <random>
#include <vector>

#include "core/hd_algo.hpp"
#include "entropy/cost_model.hpp"

using namespace mans::detail;

TEST_CASE("heap_sort_u64, unique_u64 and lower_bound_u64 equal the standard algorithms", "[hd]") {
    std::mt19937_64 rng(7);
    for (std::size_t n : {0, 1, 2, 3, 17, 256, 1000, 65537}) {
        for (int spread : {3, 1000, 0}) {
            std::vector<std::uint64_t> a(n);
            for (auto& v : a) v = spread ? rng() % static_cast<std::uint64_t>(spread) : rng();
            std::vector<std::uint64_t> heap = a, ref = a;
            heap_sort_u64(heap.data(), heap.size());
            std::sort(ref.begin(), ref.end());
            INFO("n=" << n << " spread=" << spread);
            REQUIRE(heap == ref);
            const std::size_t u = unique_u64(heap.data(), heap.size());
            ref.erase(std::unique(ref.begin(), ref.end()), ref.end());
            REQUIRE(u == ref.size());
            REQUIRE(std::equal(ref.begin(), ref.end(), heap.begin()));
            for (int probe = 0; probe < 50; ++probe) {
                const std::uint64_t v = spread ? rng() % static_cast<std::uint64_t>(spread + 2) : rng();
                CHECK(lower_bound_u64(heap.data(), u, v) ==
                      static_cast<std::size_t>(std::lower_bound(ref.begin(), ref.end(), v) - ref.begin()));
            }
        }
    }
}

TEST_CASE("log2_small_fix16's table equals log2_fix16, which the GPU computes", "[hd]") {
    for (std::uint32_t x = 0; x < 5000; ++x) REQUIRE(log2_small_fix16(x) == log2_fix16(x));
}
