// test_prism_memory.cpp - the bounded-memory machinery of PRISM writes the
// same bytes as coding everything at once: chunk-at-a-time level coding
// (level_codes.hpp) against a whole-level reference, and the sweep
// (sweep.hpp) with many small steps, batches and ring wraps against its
// default sizes (whose bytes tests/golden and the real-field tests pin).
#include <catch2/catch.hpp>

#include <xxhash.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <random>
#include <vector>

#include "mans/prism.hpp"
#include "prism/level_codes.hpp"
#include "prism/plane_coding.hpp"
#include "prism/sweep.hpp"
#include "test_support.hpp"

namespace dp = mans::detail::prism;
using mans::Errc;
using mans_test::Bytes;

namespace {

// Codes of one level: chunks of very different magnitudes (all zero, small,
// the level's largest), negative ones, runs of zeros.
std::vector<std::int32_t> level_codes(std::uint64_t n, std::uint32_t chunk, std::uint64_t seed) {
    std::mt19937_64 rng(seed);
    std::vector<std::int32_t> q(n, 0);
    for (std::uint64_t c = 0; c * chunk < n; ++c) {
        const int kind = static_cast<int>(rng() % 5);
        const std::int32_t mag = kind == 0 ? 0 : kind == 1 ? 1 : kind == 2 ? 9 : kind == 3 ? 300 : 70000;
        for (std::uint64_t j = c * chunk; j < std::min(n, (c + 1) * chunk); ++j) {
            if (!mag || rng() % 4 == 0) continue;
            q[j] = static_cast<std::int32_t>(rng() % (2 * mag + 1)) - mag;
        }
    }
    return q;
}

// What the encoder did before level_codes: the whole level at once, with its P.
struct Reference {
    unsigned planes = 0;
    std::vector<double> max_err, sum_sq;
    std::vector<std::vector<std::uint8_t>> segments;  // plane-major
    std::vector<std::uint32_t> checksums;
};

Reference reference(const std::vector<std::int32_t>& q, std::uint32_t chunk, dp::Coding coding) {
    Reference r;
    std::uint32_t any = 0;
    for (std::int32_t v : q) any |= dp::encode_code(v, coding);
    const unsigned P = dp::planes_for(any, coding);
    r.planes = P;
    r.max_err.assign(P + 1, 0);
    r.sum_sq.assign(P + 1, 0);
    const std::uint64_t n = q.size(), nchunks = (n + chunk - 1) / chunk;
    std::vector<std::vector<std::vector<std::uint8_t>>> enc(nchunks);
    for (std::uint64_t c = 0; c < nchunks; ++c) {
        const std::uint64_t first = c * chunk, len = std::min<std::uint64_t>(chunk, n - first);
        std::vector<std::uint32_t> words(len);
        std::vector<double> mx(P + 1, 0), sq(P + 1, 0);
        for (std::uint64_t j = 0; j < len; ++j) {
            const std::int32_t v = q[first + j];
            words[j] = dp::encode_code(v, coding);
            if (v == 0) continue;
            for (unsigned kept = 0; kept < P; ++kept) {
                const double d = dp::truncation_error(words[j], v, kept, P, coding);
                mx[kept] = std::max(mx[kept], std::fabs(d));
                sq[kept] += d * d;
            }
        }
        for (unsigned b = 0; b <= P; ++b) r.max_err[b] = std::max(r.max_err[b], mx[b]), r.sum_sq[b] += sq[b];
        dp::encode_plane_chunks(words.data(), len, P, coding, &enc[c]);
    }
    for (unsigned b = 0; b <= P; ++b) r.sum_sq[b] = dp::decode_sum_sq(dp::encode_sum_sq(r.sum_sq[b]));
    for (unsigned b = 0; b < P; ++b) {
        std::vector<std::uint8_t> plane;
        for (std::uint64_t c = 0; c < nchunks; ++c) {
            plane.insert(plane.end(), enc[c][b].begin(), enc[c][b].end());
            r.segments.push_back(enc[c][b]);
        }
        r.checksums.push_back(static_cast<std::uint32_t>(XXH3_64bits(plane.data(), plane.size())));
    }
    return r;
}

}  // namespace

TEST_CASE("prism level codes: chunk-at-a-time coding equals whole-level coding", "[prism][memory]") {
    const std::uint32_t chunk = 256;
    for (dp::Coding coding : {dp::Coding::negabinary, dp::Coding::sign_magnitude}) {
        for (std::uint64_t seed = 1; seed <= 12; ++seed) {
            // Held until 1, 3 or 40 chunks are full (40: more than the level has, so
            // finish codes them all).
            const unsigned batch = seed % 3 == 0 ? 3 : seed % 3 == 1 ? 1 : 40;
            const std::uint64_t n = 3000 + seed * 97;
            INFO("coding " << static_cast<int>(coding) << " seed " << seed << " batch " << batch);
            const std::vector<std::int32_t> q = level_codes(n, chunk, seed);
            const Reference ref = reference(q, chunk, coding);

            // Written in ranges out of order (as the finest level does), chunks coded as they fill.
            dp::LevelEncoder enc(n, chunk, coding, batch);
            std::size_t step_jobs = 0;
            std::mt19937_64 rng(seed);
            std::vector<dp::CodeRange> all;
            for (std::uint64_t a = 0; a < n;) {
                const std::uint64_t b = std::min(n, a + 1 + rng() % 700);
                all.push_back({a, b});
                a = b;
            }
            std::shuffle(all.begin(), all.end(), rng);
            for (std::size_t i = 0; i < all.size(); i += 3) {
                std::vector<dp::CodeRange> step(all.begin() + static_cast<std::ptrdiff_t>(i),
                                                all.begin() + static_cast<std::ptrdiff_t>(std::min(all.size(), i + 3)));
                const dp::StepJobs jobs = enc.prepare(step);
                CHECK((jobs.total == 0 || jobs.total >= batch));
                step_jobs += jobs.total;
                for (std::size_t j = 0; j < jobs.total; ++j) enc.job(j);
                for (const dp::CodeRange& r : step)
                    for (std::uint64_t k = r.first; k < r.last; ++k) enc.code(k) = q[k];
                enc.commit(step);
            }
            dp::LevelMeta m;
            std::vector<dp::Segment> segs;
            std::vector<std::vector<std::uint8_t>> bytes;
            std::vector<std::uint32_t> sums;
            REQUIRE(enc.finish(&m, &segs, &bytes, &sums, 2) == Errc::ok);
            // Chunks 0..n/chunk-1 fill in steps; with 40 none is coded before finish.
            if (batch == 40) CHECK(step_jobs == 0);
            else CHECK(step_jobs > 0);
            REQUIRE(m.planes == ref.planes);
            CHECK(m.max_err == ref.max_err);
            CHECK(m.sum_sq == ref.sum_sq);
            CHECK(sums == ref.checksums);
            REQUIRE(bytes.size() == ref.segments.size());
            for (std::size_t i = 0; i < bytes.size(); ++i) {
                CHECK(bytes[i] == ref.segments[i]);
                CHECK(segs[i].stored == bytes[i].size());
            }
        }
    }
}

TEST_CASE("prism level codes: at most kMaxBatchChunks full chunks are held", "[prism][memory]") {
    const std::uint32_t chunk = 256;
    const std::uint64_t nchunks = dp::LevelEncoder::kMaxBatchChunks + 8, n = nchunks * chunk - 100;
    const std::vector<std::int32_t> q = level_codes(n, chunk, 7);
    const Reference ref = reference(q, chunk, dp::Coding::negabinary);
    dp::LevelEncoder enc(n, chunk, dp::Coding::negabinary, 1000);
    // A chunk per step, in order: the first jobs come once kMaxBatchChunks are full.
    std::vector<std::size_t> jobs_at;
    for (std::uint64_t ch = 0; ch < nchunks; ++ch) {
        const std::vector<dp::CodeRange> step = {{ch * chunk, std::min(n, (ch + 1) * chunk)}};
        const dp::StepJobs jobs = enc.prepare(step);
        if (jobs.total) jobs_at.push_back(static_cast<std::size_t>(ch));
        CHECK((jobs.total == 0 || jobs.total == dp::LevelEncoder::kMaxBatchChunks));
        for (std::size_t j = 0; j < jobs.total; ++j) enc.job(j);
        for (std::uint64_t k = step[0].first; k < step[0].last; ++k) enc.code(k) = q[k];
        enc.commit(step);
    }
    CHECK(jobs_at == std::vector<std::size_t>{dp::LevelEncoder::kMaxBatchChunks});
    dp::LevelMeta m;
    std::vector<dp::Segment> segs;
    std::vector<std::vector<std::uint8_t>> bytes;
    std::vector<std::uint32_t> sums;
    REQUIRE(enc.finish(&m, &segs, &bytes, &sums, 2) == Errc::ok);
    CHECK(m.planes == ref.planes);
    CHECK(sums == ref.checksums);
    CHECK(bytes == ref.segments);
}

TEST_CASE("prism level codes: a level encoder with a code never written is an internal error", "[prism][memory]") {
    dp::LevelEncoder enc(1000, 256, dp::Coding::negabinary);
    const std::vector<dp::CodeRange> part = {{0, 999}};
    enc.prepare(part);
    for (std::uint64_t k = 0; k < 999; ++k) enc.code(k) = 1;
    enc.commit(part);
    dp::LevelMeta m;
    std::vector<dp::Segment> segs;
    std::vector<std::vector<std::uint8_t>> bytes;
    std::vector<std::uint32_t> sums;
    CHECK(enc.finish(&m, &segs, &bytes, &sums, 1) == Errc::internal);
}

namespace {

// A field whose noise grows along the first axis (so that the chunks of a
// level need different plane counts), with some NaN and fill values.
Bytes field(unsigned rank, const std::uint64_t* dims, bool f64, bool holes, std::uint64_t seed) {
    std::uint64_t n = 1;
    for (unsigned a = 0; a < rank; ++a) n *= dims[a];
    const std::size_t es = f64 ? 8 : 4;
    Bytes out(n * es);
    std::mt19937_64 rng(seed);
    std::uniform_real_distribution<double> u(-1.0, 1.0);
    for (std::uint64_t i = 0; i < n; ++i) {
        std::uint64_t rem = i;
        double v = 0;
        for (unsigned a = rank; a-- > 0;) {
            const double c = static_cast<double>(rem % dims[a]);
            rem /= dims[a];
            v += std::sin(0.05 * c + a) * (a + 2);
        }
        v += u(rng) * 1e-3 * (1.0 + 30.0 * static_cast<double>(i) / static_cast<double>(n));
        if (holes && i % 4099 == 7) v = std::nan("");
        if (holes && (i / 300) % 11 == 3) v = -1e10;
        if (f64) std::memcpy(out.data() + i * 8, &v, 8);
        else {
            const float f = static_cast<float>(v);
            std::memcpy(out.data() + i * 4, &f, 4);
        }
    }
    return out;
}

struct Run {
    Bytes archive;
    std::vector<Bytes> outputs;  // full, coarse, refined, refined to full
};

Run run_all(const Bytes& raw, const mans::prism::CompressConfig& cfg) {
    namespace prism = mans::prism;
    Run r;
    REQUIRE(prism::compress(raw.data(), raw.size(), cfg, &r.archive) == Errc::ok);
    prism::Reader reader;
    REQUIRE(prism::Reader::open(prism::memory_source(r.archive.data(), r.archive.size()), &reader) == Errc::ok);
    auto keep = [&](const prism::Retrieval& x) {
        r.outputs.emplace_back(static_cast<const std::uint8_t*>(x.data()),
                               static_cast<const std::uint8_t*>(x.data()) + x.bytes());
    };
    prism::Retrieval full, x;
    REQUIRE(reader.retrieve(prism::Target::full(), &full, cfg.threads) == Errc::ok);
    keep(full);
    REQUIRE(reader.retrieve(prism::Target::rel(1e-2), &x, cfg.threads) == Errc::ok);
    keep(x);
    REQUIRE(reader.refine(&x, prism::Target::rel(1e-4), cfg.threads) == Errc::ok);
    keep(x);
    REQUIRE(reader.refine(&x, prism::Target::full(), cfg.threads) == Errc::ok);
    keep(x);
    CHECK(r.outputs[3] == r.outputs[0]);
    return r;
}

}  // namespace

TEST_CASE("prism sweep: steps, batches and ring wraps never change a byte", "[prism][memory]") {
    namespace prism = mans::prism;
    struct Shape {
        unsigned rank;
        std::uint64_t dims[4];
        bool f64, holes;
    };
    const Shape shapes[] = {
        {1, {120001, 0, 0, 0}, false, false},   {2, {301, 433, 0, 0}, false, true},
        {3, {67, 45, 61, 0}, false, false},     {3, {40, 50, 66, 0}, true, true},
        {4, {13, 11, 17, 19}, false, false},    {3, {1, 1, 70001, 0}, false, false},
        {4, {1, 90, 1, 300}, false, true},      {3, {2, 3, 20000, 0}, false, false},
    };
    const std::uint64_t saved = dp::sweep_step_codes();
    for (const Shape& s : shapes) {
        const Bytes raw = field(s.rank, s.dims, s.f64, s.holes, s.rank * 7 + s.dims[0]);
        for (prism::PlaneCoding coding : {prism::PlaneCoding::negabinary, prism::PlaneCoding::sign_magnitude}) {
            prism::CompressConfig cfg;
            cfg.type = s.f64 ? prism::FloatType::f64 : prism::FloatType::f32;
            cfg.rank = s.rank;
            for (unsigned a = 0; a < s.rank; ++a) cfg.dims[a] = s.dims[a];
            cfg.mode = prism::ErrorMode::relative;
            cfg.error_bound = 1e-5;
            cfg.planes = coding;
            cfg.threads = 2;
            INFO("rank " << s.rank << " dims " << s.dims[0] << "x" << s.dims[1] << "x" << s.dims[2] << "x" << s.dims[3]
                         << " coding " << static_cast<int>(coding));
            dp::sweep_step_codes() = saved;
            const Run base = run_all(raw, cfg);
            for (std::uint64_t step : {std::uint64_t{64}, std::uint64_t{999}}) {
                INFO("step " << step);
                dp::sweep_step_codes() = step;
                const Run small = run_all(raw, cfg);
                CHECK(small.archive == base.archive);
                REQUIRE(small.outputs.size() == base.outputs.size());
                for (std::size_t i = 0; i < base.outputs.size(); ++i) CHECK(small.outputs[i] == base.outputs[i]);
            }
        }
    }
    dp::sweep_step_codes() = saved;
}
