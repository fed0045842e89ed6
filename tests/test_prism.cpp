// test_prism.cpp - PRISM: error bounds on real fields (full, every
// progressive step, refinement chains), shapes 1D-4D, non-finite and fill
// values, thread invariance, partial I/O, targets, corrupt archives.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <string>

#include "mans/prism.hpp"
#include "test_support.hpp"

using namespace mans::prism;
using mans::Errc;
using mans_test::Bytes;

namespace {

struct Field {
    std::string file;
    FloatType type;
    unsigned rank;
    std::uint64_t dims[4];
};

// The float fields of ../shared/data (dims slowest first, as in the names).
const Field kFields[] = {
    {"echam5_t_17x96x192.f32", FloatType::f32, 3, {17, 96, 192, 0}},
    {"navy_uwnd_132x73x144.f32", FloatType::f32, 3, {132, 73, 144, 0}},
    {"levitus_temp_20x180x360.f32", FloatType::f32, 3, {20, 180, 360, 0}},
    {"etopo20_rose_540x1081.f32", FloatType::f32, 2, {540, 1081, 0, 0}},
    {"cosmo_hsurf_438x450.f32", FloatType::f32, 2, {438, 450, 0, 0}},
    {"stageiv_precip_23x118x87.f32", FloatType::f32, 3, {23, 118, 87, 0}},
    {"sdo_aia171_128x128.f64", FloatType::f64, 2, {128, 128, 0, 0}},
};

Bytes load_field(const Field& f) {
    const std::string path = mans_test::find_data_file(f.file);
    if (path.empty()) return {};
    return mans_test::read_file(path);
}

CompressConfig config_for(FloatType t, unsigned rank, const std::uint64_t* dims, ErrorMode mode, double bound) {
    CompressConfig c;
    c.type = t;
    c.rank = rank;
    for (unsigned a = 0; a < rank; ++a) c.dims[a] = dims[a];
    c.mode = mode;
    c.error_bound = bound;
    return c;
}

Bytes compress_ok(const Bytes& raw, const CompressConfig& cfg) {
    Bytes out;
    REQUIRE(compress(raw.data(), raw.size(), cfg, &out) == Errc::ok);
    return out;
}

Reader open_ok(const Bytes& archive) {
    Reader r;
    REQUIRE(Reader::open(memory_source(archive.data(), archive.size()), &r) == Errc::ok);
    return r;
}

Quality quality(const Bytes& raw, const Retrieval& x, FloatType t, const std::vector<double>& fills) {
    Quality q;
    REQUIRE(x.bytes() == raw.size());
    REQUIRE(measure_quality(raw.data(), x.data(), t, x.count(), fills, &q) == Errc::ok);
    return q;
}

// Checks one retrieval: exact values exact, error within the requested
// bound and within the bound the retrieval reports.
void check_within(const Bytes& raw, const Retrieval& x, FloatType t, const ArchiveInfo& info, double bound) {
    const Quality q = quality(raw, x, t, info.fill_values);
    INFO("max error " << q.max_abs_error << " bound " << bound << " reported bound "
                      << x.stats().max_abs_error_bound << " bytes " << x.stats().bytes_read);
    CHECK(q.mismatch_count == 0);
    CHECK(q.max_abs_error <= bound);
    CHECK(q.max_abs_error <= x.stats().max_abs_error_bound);
}

// A smooth field with noise, for synthetic shapes.
template <typename T>
Bytes smooth_field(unsigned rank, const std::uint64_t* dims, std::uint64_t seed) {
    std::uint64_t n = 1;
    for (unsigned a = 0; a < rank; ++a) n *= dims[a];
    Bytes out(n * sizeof(T));
    std::mt19937_64 rng(seed);
    std::normal_distribution<double> noise(0.0, 0.01);
    for (std::uint64_t i = 0; i < n; ++i) {
        std::uint64_t rem = i;
        double v = 0;
        for (unsigned a = rank; a-- > 0;) {
            const double c = static_cast<double>(rem % dims[a]);
            rem /= dims[a];
            v += std::sin(0.3 * c + a) * (a + 1);
        }
        const T t = static_cast<T>(100 + v + noise(rng));
        std::memcpy(out.data() + i * sizeof(T), &t, sizeof(T));
    }
    return out;
}

template <typename T>
void put(Bytes* b, std::size_t i, T v) {
    std::memcpy(b->data() + i * sizeof(T), &v, sizeof(T));
}

}  // namespace

TEST_CASE("prism: full retrieval meets the bound on every real field", "[prism]") {
    for (const Field& f : kFields) {
        const Bytes raw = load_field(f);
        if (raw.empty()) {
            WARN("missing " << f.file);
            continue;
        }
        for (double rel : {1e-2, 1e-3, 1e-4, 1e-5, 1e-6}) {
            INFO(f.file << " rel " << rel);
            const Bytes archive = compress_ok(raw, config_for(f.type, f.rank, f.dims, ErrorMode::relative, rel));
            Reader r = open_ok(archive);
            const ArchiveInfo& info = r.info();
            CHECK(info.abs_bound == Approx(rel * (info.value_max - info.value_min)));
            Retrieval x;
            REQUIRE(r.retrieve(Target::full(), &x) == Errc::ok);
            CHECK(x.stats().complete);
            CHECK(r.bytes_read() == archive.size());
            check_within(raw, x, f.type, info, info.abs_bound);
            CHECK(archive.size() < raw.size());
        }
    }
}

TEST_CASE("prism: levitus fill values are kept exactly and excluded from the range", "[prism]") {
    const Field& f = kFields[2];
    const Bytes raw = load_field(f);
    if (raw.empty()) return;
    const Bytes archive = compress_ok(raw, config_for(f.type, f.rank, f.dims, ErrorMode::relative, 1e-4));
    Reader r = open_ok(archive);
    REQUIRE(r.info().fill_values.size() == 1);
    CHECK(r.info().fill_values[0] == static_cast<double>(-1e10f));
    CHECK(r.info().masked_count > raw.size() / 4 / 3);
    CHECK(r.info().value_min > -10);  // the range excludes the fill
    Retrieval x;
    REQUIRE(r.retrieve(Target::rel(1e-2), &x) == Errc::ok);
    check_within(raw, x, f.type, r.info(), 1e-2 * (r.info().value_max - r.info().value_min));
}

TEST_CASE("prism: every progressive step and refinement chain meets its bound", "[prism]") {
    for (const Field& f : kFields) {
        const Bytes raw = load_field(f);
        if (raw.empty()) continue;
        for (PlaneCoding coding : {PlaneCoding::negabinary, PlaneCoding::sign_magnitude}) {
            INFO(f.file << " coding " << static_cast<int>(coding));
            CompressConfig cfg = config_for(f.type, f.rank, f.dims, ErrorMode::relative, 1e-6);
            cfg.planes = coding;
            const Bytes archive = compress_ok(raw, cfg);
            Reader one = open_ok(archive);
            const double range = one.info().value_max - one.info().value_min;
            const double targets[] = {1e-1, 1e-2, 1e-3, 1e-4, 1e-5, 1e-6};
            // One-shot retrievals at each bound.
            std::vector<Retrieval> shots;
            for (double t : targets) {
                INFO("one-shot rel " << t);
                Retrieval x;
                REQUIRE(one.retrieve(Target::rel(t), &x) == Errc::ok);
                check_within(raw, x, f.type, one.info(), t * range);
                if (t >= 1e-2) CHECK(x.stats().bytes_read < archive.size() / 2);
                shots.push_back(std::move(x));
            }
            // A refinement chain through the same bounds, reading only new planes.
            Reader chain = open_ok(archive);
            Retrieval y;
            REQUIRE(chain.retrieve(Target::rel(targets[0]), &y) == Errc::ok);
            std::uint64_t read_before = chain.bytes_read();
            for (std::size_t i = 1; i < 6; ++i) {
                INFO("refine to rel " << targets[i]);
                REQUIRE(chain.refine(&y, Target::rel(targets[i])) == Errc::ok);
                check_within(raw, y, f.type, chain.info(), targets[i] * range);
                CHECK(chain.bytes_read() - read_before == y.stats().bytes_read_step);
                read_before = chain.bytes_read();
                if (y.stats().planes == shots[i].stats().planes)
                    CHECK(std::memcmp(y.data(), shots[i].data(), y.bytes()) == 0);
            }
            CHECK(chain.bytes_read() <= archive.size());
            // Refining to everything equals a one-shot full retrieval, bit for bit.
            REQUIRE(chain.refine(&y, Target::full()) == Errc::ok);
            Retrieval full;
            REQUIRE(one.retrieve(Target::full(), &full) == Errc::ok);
            REQUIRE(y.bytes() == full.bytes());
            CHECK(std::memcmp(y.data(), full.data(), y.bytes()) == 0);
        }
    }
}

TEST_CASE("prism: PSNR and byte-budget targets", "[prism]") {
    const Field& f = kFields[1];
    const Bytes raw = load_field(f);
    if (raw.empty()) return;
    const Bytes archive = compress_ok(raw, config_for(f.type, f.rank, f.dims, ErrorMode::relative, 1e-6));
    Reader r = open_ok(archive);
    for (double db : {40.0, 60.0, 80.0, 100.0}) {
        INFO("psnr " << db);
        Retrieval x;
        REQUIRE(r.retrieve(Target::psnr(db), &x) == Errc::ok);
        const Quality q = quality(raw, x, f.type, r.info().fill_values);
        CHECK(q.psnr >= db);
        CHECK(q.max_abs_error <= x.stats().max_abs_error_bound);
    }
    std::uint64_t prev_read = 0;
    double prev_bound = std::numeric_limits<double>::infinity();
    for (std::uint64_t budget : {20000ull, 60000ull, 200000ull, 1000000ull}) {
        INFO("budget " << budget);
        Retrieval x;
        REQUIRE(r.retrieve(Target::bytes(budget), &x) == Errc::ok);
        CHECK(x.stats().bytes_read <= budget);
        CHECK(x.stats().bytes_read >= prev_read);
        CHECK(x.stats().max_abs_error_bound <= prev_bound);
        const Quality q = quality(raw, x, f.type, r.info().fill_values);
        CHECK(q.max_abs_error <= x.stats().max_abs_error_bound);
        prev_read = x.stats().bytes_read;
        prev_bound = x.stats().max_abs_error_bound;
    }
    Retrieval x;
    CHECK(r.retrieve(Target::bytes(10), &x) == Errc::target_unreachable);
    CHECK(r.retrieve(Target::abs(r.info().full_max_error / 2), &x) == Errc::target_unreachable);
}

TEST_CASE("prism: shapes 1D-4D, odd sizes, f32 and f64", "[prism]") {
    const std::vector<std::vector<std::uint64_t>> shapes = {
        {1}, {2}, {7}, {1000}, {65537}, {1, 1}, {3, 5}, {64, 1}, {1, 300}, {33, 47},
        {5, 1, 9}, {17, 9, 33}, {2, 3, 2}, {3, 4, 5, 6}, {9, 1, 7, 13}, {2, 2, 2, 2}};
    for (const auto& s : shapes) {
        for (FloatType t : {FloatType::f32, FloatType::f64}) {
            INFO("rank " << s.size() << " first " << s[0] << " type " << float_name(t));
            const Bytes raw = t == FloatType::f32 ? smooth_field<float>(static_cast<unsigned>(s.size()), s.data(), 7)
                                                  : smooth_field<double>(static_cast<unsigned>(s.size()), s.data(), 7);
            for (double eb : {1e-1, 1e-3, 1e-7}) {
                const Bytes archive =
                    compress_ok(raw, config_for(t, static_cast<unsigned>(s.size()), s.data(), ErrorMode::absolute, eb));
                Reader r = open_ok(archive);
                Retrieval x;
                REQUIRE(r.retrieve(Target::full(), &x) == Errc::ok);
                check_within(raw, x, t, r.info(), eb);
                REQUIRE(r.retrieve(Target::abs(eb * 1000), &x) == Errc::ok);
                check_within(raw, x, t, r.info(), eb * 1000);
            }
        }
    }
}

TEST_CASE("prism: NaN, Inf, fill values and huge outliers are kept exactly", "[prism]") {
    const std::uint64_t dims[3] = {19, 23, 31};
    for (FloatType t : {FloatType::f32, FloatType::f64}) {
        Bytes raw = t == FloatType::f32 ? smooth_field<float>(3, dims, 3) : smooth_field<double>(3, dims, 3);
        const std::size_t n = raw.size() / float_size(t);
        std::mt19937_64 rng(11);
        for (std::size_t k = 0; k < n / 10; ++k) {
            const std::size_t i = rng() % n;
            const double specials[] = {std::numeric_limits<double>::quiet_NaN(), std::numeric_limits<double>::infinity(),
                                       -std::numeric_limits<double>::infinity(), 9.97e36, -1e10, 1e30};
            const double v = specials[rng() % 6];
            if (t == FloatType::f32) put<float>(&raw, i, static_cast<float>(v));
            else put<double>(&raw, i, v);
        }
        // A block of fill (land) and the origin masked.
        for (std::size_t i = 0; i < 500; ++i) {
            if (t == FloatType::f32) put<float>(&raw, 2000 + i, 9.97e36f);
            else put<double>(&raw, 2000 + i, 9.97e36);
        }
        if (t == FloatType::f32) put<float>(&raw, 0, std::numeric_limits<float>::quiet_NaN());
        for (PlaneCoding coding : {PlaneCoding::negabinary, PlaneCoding::sign_magnitude}) {
            CompressConfig cfg = config_for(t, 3, dims, ErrorMode::absolute, 1e-3);
            cfg.planes = coding;
            cfg.fill_values = {-1e10};
            const Bytes archive = compress_ok(raw, cfg);
            Reader r = open_ok(archive);
            CHECK(r.info().masked_count > 0);
            for (Target target : {Target::full(), Target::abs(1e-2), Target::abs(1.0)}) {
                Retrieval x;
                REQUIRE(r.retrieve(target, &x) == Errc::ok);
                check_within(raw, x, t, r.info(), target.kind == Target::Kind::full ? 1e-3 : target.value);
            }
        }
    }
}

TEST_CASE("prism: level-wise bounds (alpha, beta) keep every bound", "[prism]") {
    const Field& f = kFields[0];
    Bytes raw = load_field(f);
    if (raw.empty()) raw = smooth_field<float>(3, f.dims, 1);
    for (double alpha : {1.5, 2.0}) {
        CompressConfig cfg = config_for(f.type, f.rank, f.dims, ErrorMode::relative, 1e-4);
        cfg.level_alpha = alpha;
        cfg.level_beta = 4;
        const Bytes archive = compress_ok(raw, cfg);
        Reader r = open_ok(archive);
        const double range = r.info().value_max - r.info().value_min;
        for (double t : {1e-2, 1e-3}) {
            Retrieval x;
            REQUIRE(r.retrieve(Target::rel(t), &x) == Errc::ok);
            check_within(raw, x, f.type, r.info(), t * range);
        }
        Retrieval x;
        REQUIRE(r.retrieve(Target::full(), &x) == Errc::ok);
        check_within(raw, x, f.type, r.info(), 1e-4 * range);
    }
    Bytes out;
    CompressConfig bad = config_for(f.type, f.rank, f.dims, ErrorMode::relative, 1e-4);
    bad.level_alpha = 0.5;
    CHECK(compress(raw.data(), raw.size(), bad, &out) == Errc::invalid_argument);
}

TEST_CASE("prism: f64 with a tiny bound takes the outlier path, never overflowing codes", "[prism]") {
    const std::uint64_t dims[1] = {5000};
    Bytes raw(5000 * 8);
    std::mt19937_64 rng(5);
    for (std::size_t i = 0; i < 5000; ++i) put<double>(&raw, i, 1e12 * std::sin(i * 0.01) + (rng() % 1000));
    const Bytes archive = compress_ok(raw, config_for(FloatType::f64, 1, dims, ErrorMode::absolute, 1e-9));
    Reader r = open_ok(archive);
    CHECK(r.info().outlier_count > 0);
    Retrieval x;
    REQUIRE(r.retrieve(Target::full(), &x) == Errc::ok);
    check_within(raw, x, FloatType::f64, r.info(), 1e-9);
}

TEST_CASE("prism: the bytes do not depend on the thread count", "[prism]") {
    // echam5's finest level is 3 plane chunks, navy's 10: the encoder holds
    // as many full chunks as it has threads before coding them together
    // (LevelEncoder's batch), so these cover a batch filled during the
    // sweep and one left to the level's end.
    for (const Field* f : {&kFields[0], &kFields[1]}) {
        Bytes raw = load_field(*f);
        if (raw.empty()) raw = smooth_field<float>(3, f->dims, 1);
        INFO(f->file);
        CompressConfig cfg = config_for(f->type, f->rank, f->dims, ErrorMode::relative, 1e-5);
        cfg.threads = 1;
        const Bytes ref = compress_ok(raw, cfg);
        Reader r = open_ok(ref);
        Retrieval ref_x;
        REQUIRE(r.retrieve(Target::rel(1e-3), &ref_x, 1) == Errc::ok);
        for (int threads : {2, 3, 4, 8}) {
            INFO("threads " << threads);
            cfg.threads = threads;
            CHECK(compress_ok(raw, cfg) == ref);
            Retrieval x;
            REQUIRE(r.retrieve(Target::rel(1e-3), &x, threads) == Errc::ok);
            CHECK(std::memcmp(x.data(), ref_x.data(), x.bytes()) == 0);
        }
    }
}

TEST_CASE("prism: a coarse request reads far less than the file through a callback source", "[prism]") {
    const Field& f = kFields[1];
    const Bytes raw = load_field(f);
    if (raw.empty()) return;
    const Bytes archive = compress_ok(raw, config_for(f.type, f.rank, f.dims, ErrorMode::relative, 1e-6));
    std::uint64_t fetched = 0, calls = 0;
    auto source = callback_source(archive.size(), [&](std::uint64_t off, void* dst, std::size_t n) {
        std::memcpy(dst, archive.data() + off, n);
        fetched += n;
        ++calls;
        return true;
    });
    Reader r;
    REQUIRE(Reader::open(std::move(source), &r) == Errc::ok);
    CHECK(fetched == r.info().header_bytes);
    Retrieval x;
    REQUIRE(r.retrieve(Target::rel(1e-2), &x) == Errc::ok);
    CHECK(fetched == r.bytes_read());
    CHECK(fetched == x.stats().bytes_read);
    CHECK(fetched * 5 / 2 < archive.size());  // rigorous bound: about a third of the archive at 1e-2
    Plan p;
    REQUIRE(r.plan(Target::rel(1e-4), &x, &p) == Errc::ok);
    const std::uint64_t before = fetched;
    REQUIRE(r.refine(&x, Target::rel(1e-4)) == Errc::ok);
    CHECK(fetched - before == p.bytes_to_read);
    // A failing source is an error, not a crash.
    Reader bad;
    REQUIRE(Reader::open(callback_source(archive.size(),
                                         [&](std::uint64_t off, void* dst, std::size_t n) {
                                             if (off > 0) return false;
                                             std::memcpy(dst, archive.data(), n);
                                             return true;
                                         }),
                         &bad) == Errc::io);
}

TEST_CASE("prism: every truncation and single-byte corruption is an error", "[prism][corruption]") {
    const std::uint64_t dims[2] = {40, 61};
    Bytes raw = smooth_field<float>(2, dims, 9);
    put<float>(&raw, 100, std::numeric_limits<float>::quiet_NaN());
    const Bytes archive = compress_ok(raw, config_for(FloatType::f32, 2, dims, ErrorMode::absolute, 1e-4));
    auto full_retrieval = [](const Bytes& a) {
        Reader r;
        Errc e = Reader::open(memory_source(a.data(), a.size()), &r);
        if (e != Errc::ok) return e;
        Retrieval x;
        return r.retrieve(Target::full(), &x);
    };
    REQUIRE(full_retrieval(archive) == Errc::ok);
    for (std::size_t len = 0; len < archive.size(); ++len) {
        const Bytes cut(archive.begin(), archive.begin() + static_cast<std::ptrdiff_t>(len));
        INFO("length " << len);
        CHECK(full_retrieval(cut) != Errc::ok);
    }
    Bytes longer = archive;
    longer.push_back(0);
    CHECK(full_retrieval(longer) == Errc::trailing_bytes);
    std::mt19937_64 rng(1);
    for (std::size_t pos = 0; pos < archive.size(); ++pos) {
        Bytes bad = archive;
        bad[pos] ^= static_cast<std::uint8_t>(1 + rng() % 255);
        INFO("byte " << pos);
        CHECK(full_retrieval(bad) != Errc::ok);
    }
}

TEST_CASE("prism: extreme magnitudes keep their bounds (near FLT_MAX, subnormal, f64 1e200)", "[prism]") {
    // Review findings: partial f32 reconstructions beyond FLT_MAX, the
    // subnormal spacing in the f32 rounding slack, f64 squared errors that
    // overflow the header's MSE fields.
    const std::uint64_t n = 4096;
    Bytes big(n * 4);
    for (std::uint64_t i = 0; i < n; ++i) put<float>(&big, i, (i % 3 ? 0.999f : 0.3f) * std::numeric_limits<float>::max());
    Bytes tiny(3000 * 4);
    std::mt19937_64 rng(0);
    std::uniform_real_distribution<double> u(-1, 1);
    for (std::size_t i = 0; i < 3000; ++i) put<float>(&tiny, i, static_cast<float>(u(rng) * 1e-40));
    Bytes huge(2000 * 8);
    for (std::size_t i = 0; i < 2000; ++i) put<double>(&huge, i, std::sin(i * 0.05) * 1e200);
    struct Case {
        const Bytes* raw;
        FloatType type;
        ErrorMode mode;
        double bound;
        std::vector<double> targets;  // absolute
    };
    const Case cases[] = {
        {&big, FloatType::f32, ErrorMode::relative, 1e-3, {1e36, 1e37, 1e38}},
        {&tiny, FloatType::f32, ErrorMode::absolute, 1e-45, {3.375e-45, 1e-44, 1e-42}},
        {&huge, FloatType::f64, ErrorMode::relative, 1e-3, {1e196, 1e197, 1e198}},
    };
    for (const Case& c : cases) {
        const std::uint64_t dims[1] = {c.raw->size() / float_size(c.type)};
        for (PlaneCoding coding : {PlaneCoding::negabinary, PlaneCoding::sign_magnitude}) {
            CompressConfig cfg = config_for(c.type, 1, dims, c.mode, c.bound);
            cfg.planes = coding;
            cfg.detect_fill = false;
            const Bytes archive = compress_ok(*c.raw, cfg);
            Reader r = open_ok(archive);
            for (double t : c.targets) {
                Retrieval x;
                const Errc e = r.retrieve(Target::abs(t), &x);
                if (e == Errc::target_unreachable) continue;
                REQUIRE(e == Errc::ok);
                check_within(*c.raw, x, c.type, r.info(), t);
            }
        }
    }
}

TEST_CASE("prism: a retrieval is refined only by the reader that made it", "[prism]") {
    const std::uint64_t dims_a[1] = {40000}, dims_b[1] = {65536};
    const Bytes a = compress_ok(smooth_field<float>(1, dims_a, 1), config_for(FloatType::f32, 1, dims_a, ErrorMode::absolute, 1e-3));
    const Bytes b = compress_ok(smooth_field<float>(1, dims_b, 2), config_for(FloatType::f32, 1, dims_b, ErrorMode::absolute, 1e-3));
    Retrieval x;
    {
        Reader ra = open_ok(a);
        REQUIRE(ra.retrieve(Target::abs(50), &x) == Errc::ok);
    }  // ra is gone; a new reader may reuse its memory
    for (int i = 0; i < 4; ++i) {
        Reader rb = open_ok(b);
        CHECK(rb.refine(&x, Target::full()) == Errc::invalid_argument);
        Plan p;
        CHECK(rb.plan(Target::full(), &x, &p) == Errc::invalid_argument);
    }
}

TEST_CASE("prism: invalid arguments", "[prism]") {
    const std::uint64_t dims[1] = {10};
    const Bytes raw(40, 0);
    Bytes out;
    CompressConfig cfg = config_for(FloatType::f32, 1, dims, ErrorMode::absolute, 0);
    CHECK(compress(raw.data(), raw.size(), cfg, &out) == Errc::invalid_argument);
    cfg.error_bound = std::numeric_limits<double>::quiet_NaN();
    CHECK(compress(raw.data(), raw.size(), cfg, &out) == Errc::invalid_argument);
    cfg.error_bound = 1e-3;
    CHECK(compress(raw.data(), 39, cfg, &out) == Errc::size_not_multiple);
    cfg.rank = 5;
    CHECK(compress(raw.data(), raw.size(), cfg, &out) == Errc::invalid_argument);
    cfg.rank = 1;
    CHECK(compress(raw.data(), raw.size(), cfg, nullptr) == Errc::invalid_argument);
    REQUIRE(compress(raw.data(), raw.size(), cfg, &out) == Errc::ok);  // constant zero field
    Reader r = open_ok(out);
    Retrieval x;
    REQUIRE(r.retrieve(Target::abs(1), &x) == Errc::ok);
    CHECK(std::memcmp(x.data(), raw.data(), raw.size()) == 0);
    Retrieval other;
    Reader r2 = open_ok(out);
    CHECK(r2.refine(&x, Target::full()) == Errc::invalid_argument);  // x belongs to r
    CHECK(Reader::open(nullptr, &r2) == Errc::invalid_argument);
    CHECK(is_archive(out.data(), out.size()));
    CHECK_FALSE(is_archive(raw.data(), raw.size()));
}
