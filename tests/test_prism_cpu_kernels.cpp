// PRISM's CPU kernels (prism/cpu_kernels.hpp): the backend's choice (AVX2
// where the CPU has it) against the portable forms, bit for bit, for the
// mask passes, deposit_plane, quantization and the output conversion; the
// truncation statistics and the bit matrices are checked in
// test_prism_planes_hd.cpp.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "backend.hpp"
#include "cpu_features.hpp"
#include "prism/cpu_kernels.hpp"
#include "prism/point_math.hpp"
#include "test_support.hpp"

namespace dp = mans::detail::prism;

namespace {

template <typename T>
std::uint64_t bits_of(T v) {
    std::uint64_t u = 0;
    std::memcpy(&u, &v, sizeof v);
    return u;
}

// Equal as bits, so that -0 and +0 (and two NaNs) differ.
bool same(double a, double b) { return bits_of(a) == bits_of(b); }

template <typename T>
std::vector<std::uint8_t> as_bytes(const std::vector<T>& v) {
    std::vector<std::uint8_t> b(v.size() * sizeof(T));
    if (!v.empty()) std::memcpy(b.data(), v.data(), b.size());
    return b;
}

// Fields of n values: shape 0 smooth with specials; 1 zeros of both signs
// that are the range's minimum or maximum (the ties the kernels must break
// as the loop does); 2 a fill value (-1e10) in runs (the fill sets below
// also try a NaN payload, -0 and +0);
// 3 all non-finite; 4 random bit patterns.
template <typename T>
std::vector<T> make_field(std::size_t n, int shape, std::uint64_t seed) {
    std::mt19937_64 rng(seed);
    std::vector<T> v(n);
    const T inf = std::numeric_limits<T>::infinity(), nan = std::numeric_limits<T>::quiet_NaN();
    for (std::size_t i = 0; i < n; ++i) {
        const std::uint64_t r = rng();
        switch (shape) {
            case 0: v[i] = static_cast<T>(std::sin(0.01 * static_cast<double>(i)) * 100 + (r % 100) * 1e-3); break;
            case 1: {
                const T z = (r & 1) ? T(0) : -T(0);
                v[i] = r % 7 == 0 ? z : static_cast<T>((r >> 8) % 1000) * ((seed & 1) ? T(1) : T(-1));
                break;
            }
            case 2: v[i] = (i / 13) % 3 == 0 ? static_cast<T>(-1e10) : static_cast<T>((r % 1000) * 0.5); break;
            case 3: v[i] = r % 3 == 0 ? nan : (r % 3 == 1 ? inf : -inf); break;
            default: {
                std::uint64_t b = r;
                std::memcpy(&v[i], &b, sizeof(T));
                break;
            }
        }
        if (shape != 3 && r % 97 == 0) v[i] = (r >> 20) % 3 == 0 ? nan : (r >> 20) % 3 == 1 ? inf : -inf;
    }
    return v;
}

template <typename T>
void compare_mask_kernels(const dp::MaskKernels<T>& want, const dp::MaskKernels<T>& got, const char* name) {
    std::uint64_t cases = 0;
    for (std::size_t n : {0, 1, 7, 8, 9, 15, 16, 17, 63, 64, 65, 1000, 65536 + 3})
        for (int shape = 0; shape < 5; ++shape) {
            const std::vector<T> field = make_field<T>(n, shape, n * 31 + static_cast<std::uint64_t>(shape));
            const std::vector<std::uint8_t> src = as_bytes(field);
            // Whole field and subranges that start and end anywhere.
            std::vector<std::pair<std::uint64_t, std::uint64_t>> ranges{{0, n}};
            std::mt19937_64 rng(n + 17);
            for (int k = 0; k < 6 && n > 0; ++k) {
                std::uint64_t a = rng() % (n + 1), b = rng() % (n + 1);
                if (a > b) std::swap(a, b);
                ranges.push_back({a, b});
            }
            for (auto [first, last] : ranges) {
                INFO(name << " " << sizeof(T) * 8 << "-bit n " << n << " shape " << shape << " [" << first << ", "
                          << last << ")");
                const dp::ValueRange a = want.finite_range(src.data(), first, last);
                const dp::ValueRange b = got.finite_range(src.data(), first, last);
                REQUIRE(same(a.lo, b.lo));
                REQUIRE(same(a.hi, b.hi));
                for (double cand : {a.lo, a.hi, -1e10, 1e10 + 1.0 / 3, 0.5}) {
                    const dp::FillEvidence e = want.fill_evidence(src.data(), first, last, cand);
                    const dp::FillEvidence f = got.fill_evidence(src.data(), first, last, cand);
                    REQUIRE(e.hits == f.hits);
                    REQUIRE(same(e.other, f.other));
                }
                // Mask bytes of whole bytes of points, as the encoder's ranges;
                // at the field's end also with two bytes past it (no points:
                // zero bits).
                for (std::uint64_t past : {std::uint64_t{0}, std::uint64_t{2}}) {
                    if (past && last != n) continue;
                    const std::uint64_t byte_first = first / 8, byte_last = (last + 7) / 8 + past;
                    const T nan_fill = [] {
                        T v;
                        const std::uint64_t payload = sizeof(T) == 4 ? 0x7fc01234u : 0x7ff8000000001234ull;
                        std::memcpy(&v, &payload, sizeof v);
                        return v;
                    }();
                    const std::vector<std::vector<T>> fill_sets{{}, {static_cast<T>(-1e10)}, {-T(0)}, {T(0), nan_fill}};
                    for (const std::vector<T>& fills : fill_sets) {
                        std::vector<std::uint8_t> mw((n + 7) / 8 + 2, 0xA5), mg(mw);
                        const dp::MaskPartial p = want.mask_range(src.data(), n, fills.data(),
                                                                  static_cast<unsigned>(fills.size()), byte_first,
                                                                  byte_last, mw.data());
                        const dp::MaskPartial q = got.mask_range(src.data(), n, fills.data(),
                                                                 static_cast<unsigned>(fills.size()), byte_first,
                                                                 byte_last, mg.data());
                        REQUIRE(p.masked == q.masked);
                        REQUIRE(same(p.kept.lo, q.kept.lo));
                        REQUIRE(same(p.kept.hi, q.kept.hi));
                        REQUIRE(mw == mg);
                        ++cases;
                    }
                }
            }
        }
    CHECK(cases > 1000);
}

}  // namespace

TEST_CASE("PRISM mask passes: the CPU backend's kernels give the portable results bit for bit", "[prism][cpu_kernels]") {
    const dp::PrismCpuKernels& chosen = mans::detail::cpu_backend().prism_kernels();
    const dp::PrismCpuKernels& portable = dp::kPortablePrismKernels;
    if (&chosen == &portable) {
        WARN("no AVX2 kernels here (CPU or build): the portable forms were compared with themselves");
    } else {
        CHECK(std::string(chosen.name) == "avx2");
        CHECK(mans::cpu::cpu_features().avx2);
    }
    compare_mask_kernels<float>(portable.mask_f32, chosen.mask_f32, chosen.name);
    compare_mask_kernels<double>(portable.mask_f64, chosen.mask_f64, chosen.name);
}

TEST_CASE("PRISM mask passes: the kernels on the real float fields", "[prism][cpu_kernels]") {
    const dp::PrismCpuKernels& chosen = mans::detail::cpu_backend().prism_kernels();
    const dp::MaskKernels<float>& want = dp::kPortablePrismKernels.mask_f32;
    const dp::MaskKernels<float>& got = chosen.mask_f32;
    unsigned fields = 0;
    for (const std::string& path : mans_test::list_shared_data_files()) {
        if (path.size() < 4 || path.compare(path.size() - 4, 4, ".f32") != 0) continue;
        const mans_test::Bytes src = mans_test::read_file(path);
        const std::uint64_t n = src.size() / 4;
        INFO(path);
        const dp::ValueRange a = want.finite_range(src.data(), 0, n), b = got.finite_range(src.data(), 0, n);
        REQUIRE(same(a.lo, b.lo));
        REQUIRE(same(a.hi, b.hi));
        for (double cand : {a.lo, a.hi}) {
            const dp::FillEvidence e = want.fill_evidence(src.data(), 0, n, cand);
            const dp::FillEvidence f = got.fill_evidence(src.data(), 0, n, cand);
            REQUIRE(e.hits == f.hits);
            REQUIRE(same(e.other, f.other));
        }
        const std::vector<float> fills{static_cast<float>(a.lo)};
        std::vector<std::uint8_t> mw((n + 7) / 8), mg(mw.size());
        const dp::MaskPartial p = want.mask_range(src.data(), n, fills.data(), 1, 0, mw.size(), mw.data());
        const dp::MaskPartial q = got.mask_range(src.data(), n, fills.data(), 1, 0, mg.size(), mg.data());
        REQUIRE(p.masked == q.masked);
        REQUIRE(same(p.kept.lo, q.kept.lo));
        REQUIRE(same(p.kept.hi, q.kept.hi));
        REQUIRE(mw == mg);
        ++fields;
    }
    if (fields == 0) WARN("no real .f32 fields found: nothing compared");
    else CHECK(fields >= 5);
}

TEST_CASE("PRISM deposit_plane: the CPU backend's kernel ORs the digit into exactly the plane's codes",
          "[prism][cpu_kernels]") {
    const dp::PrismCpuKernels& chosen = mans::detail::cpu_backend().prism_kernels();
    const dp::PrismCpuKernels& portable = dp::kPortablePrismKernels;
    std::mt19937_64 rng(20261207);
    unsigned cases = 0;
    for (std::uint64_t len : {1, 7, 8, 9, 15, 63, 64, 65, 127, 1000, 4096 + 5, 131072})
        // Plane densities: none, sparse, half, every code, and every code of
        // the last (possibly partial) group only.
        for (int shape = 0; shape < 5; ++shape)
            for (std::uint32_t digit : {1u, 0x80000000u, 0x00010000u}) {
                INFO("len " << len << " shape " << shape << " digit " << digit);
                const std::uint64_t nw = len / 64 + (len % 64 != 0);
                std::vector<std::uint64_t> plane(nw, 0);
                for (std::uint64_t j = 0; j < len; ++j) {
                    const std::uint64_t r = rng();
                    const bool set = shape == 1 ? r % 61 == 0
                                     : shape == 2 ? (r & 1)
                                     : shape == 3 ? true
                                     : shape == 4 ? j >= (len - 1) / 8 * 8
                                                  : false;
                    if (set) plane[j / 64] |= std::uint64_t{1} << (j % 64);
                }
                // The words a decoder holds (other planes' digits; random,
                // so some already hold this digit and an XOR would show),
                // exactly len of them: ASan sees a kernel touch one past
                // them, even one that writes back the value it read.
                std::vector<std::uint32_t> before(len);
                for (std::uint32_t& v : before) v = static_cast<std::uint32_t>(rng());
                std::vector<std::uint32_t> want = before, a = before, b = before;
                for (std::uint64_t j = 0; j < len; ++j)
                    if (plane[j / 64] >> (j % 64) & 1) want[j] |= digit;
                portable.deposit_plane(plane.data(), len, digit, a.data());
                chosen.deposit_plane(plane.data(), len, digit, b.data());
                REQUIRE(a == want);
                REQUIRE(b == want);
                ++cases;
            }
    CHECK(cases == 12 * 5 * 3);
}

namespace {

// Points around every case of encode_point: codes near a half (the floor),
// near kMaxCode, values past the element type's range, predictions far off
// or infinite, and steps from tiny to large.
template <typename T>
void compare_quantize(const dp::QuantizeKernels& want, const dp::QuantizeKernels& got, unsigned* cases,
                      unsigned* outliers, unsigned* kept) {
    std::mt19937_64 rng(sizeof(T) * 1000 + 7);
    const auto kernel = [](const dp::QuantizeKernels& k) { return sizeof(T) == 4 ? k.f32 : k.f64; };
    const double big = sizeof(T) == 4 ? static_cast<double>(std::numeric_limits<float>::max()) : 1e300;
    // FLT_MAX / 3.6: -FLT_MAX reconstructs as -4 steps, past -FLT_MAX by a
    // ninth of it, where to_element's clamp decides the float check.
    for (double step : {1e-9, 0.01, 0.5, 3.0, 1e6, static_cast<double>(std::numeric_limits<float>::max()) / 3.6, 0.0})
        for (std::uint64_t m : {1, 3, 4, 5, 8, 63, 64}) {
            std::vector<double> x(m), pred(m);
            for (std::uint64_t i = 0; i < m; ++i) {
                const std::uint64_t r = rng();
                const double u = static_cast<double>(r % 1000003) / 1000003.0 - 0.5;
                pred[i] = u * 100;
                switch ((r >> 32) % 7) {
                    case 0: x[i] = pred[i] + step * (std::floor(u * 1000) + 0.5); break;  // a half: floor decides
                    case 1: x[i] = pred[i] + step * dp::kMaxCode * (1 + u * 1e-6); break;   // near kMaxCode
                    case 6: x[i] = pred[i] + step * dp::kMaxCode; break;                    // at it
                    case 2: x[i] = u > 0 ? big * 0.999 : -big; break;                       // at the type's edge
                    case 3: pred[i] = (r & 1) ? std::numeric_limits<double>::infinity() : big * 2; x[i] = u; break;
                    case 4: x[i] = static_cast<double>(static_cast<T>(pred[i] + u * step * 17)); break;
                    default: x[i] = pred[i] + u * step * 3; break;
                }
            }
            const double eb = step * 0.5, abs_bound = step > 0 ? step * 0.5 : 1e-3;
            std::vector<std::int32_t> ca(m), cb(m);
            std::vector<std::uint8_t> oa(m), ob(m);
            std::vector<double> wa(m), wb(m);
            kernel(want)(x.data(), pred.data(), m, step, eb, abs_bound, ca.data(), oa.data(), wa.data());
            kernel(got)(x.data(), pred.data(), m, step, eb, abs_bound, cb.data(), ob.data(), wb.data());
            INFO("step " << step << " m " << m);
            REQUIRE(ca == cb);
            REQUIRE(oa == ob);
            for (std::uint64_t i = 0; i < m; ++i) REQUIRE(same(wa[i], wb[i]));
            // The portable kernel is encode_point itself.
            for (std::uint64_t i = 0; i < m; ++i) {
                const dp::EncodedPoint p = dp::encode_point<T>(x[i], false, pred[i], step, eb, abs_bound);
                REQUIRE(p.code == ca[i]);
                REQUIRE(p.outlier == (oa[i] != 0));
                REQUIRE(same(p.work, wa[i]));
                ++*(p.outlier ? outliers : kept);
            }
            ++*cases;
        }
}

}  // namespace

TEST_CASE("PRISM quantization: the CPU backend's kernel gives encode_point's codes, outliers and work values",
          "[prism][cpu_kernels]") {
    const dp::PrismCpuKernels& chosen = mans::detail::cpu_backend().prism_kernels();
    const dp::PrismCpuKernels& portable = dp::kPortablePrismKernels;
    if (&chosen == &portable) WARN("no AVX2 kernels here (CPU or build): the portable form was compared with itself");
    unsigned cases = 0, outliers = 0, kept = 0;
    compare_quantize<float>(portable.quantize, chosen.quantize, &cases, &outliers, &kept);
    compare_quantize<double>(portable.quantize, chosen.quantize, &cases, &outliers, &kept);
    CHECK(cases == 2 * 7 * 7);
    INFO(outliers << " outliers, " << kept << " kept");
    CHECK(outliers > 200);
    CHECK(kept > 400);
}

namespace {

// to_elements of both kernel sets against to_element, value by value as
// bits, over lengths 0..13 (the vector loop's tail) into exactly n elements
// at an odd byte offset (no alignment promise). nextafter(FLT_MAX, inf)
// rounds to FLT_MAX by itself; FLT_MAX + 2^103 only through the clamp.
template <typename T>
void compare_to_elements(const dp::ElementKernels& portable, const dp::ElementKernels& chosen, unsigned* cases) {
    const double inf = std::numeric_limits<double>::infinity();
    const double flt_max = static_cast<double>(std::numeric_limits<float>::max());
    const double half_ulp_above = flt_max + std::ldexp(1.0, 103);  // halfway to 2^128: +inf unless clamped
    std::vector<double> special{0.0, -0.0, 1.0, -1.5, 1e-40, -1e-320, 0.1, 1.0 / 3.0,
                                flt_max, -flt_max, half_ulp_above, -half_ulp_above, std::nextafter(flt_max, inf),
                                3.5e38, -3.5e38, 1e300, -1e300, std::numeric_limits<double>::max(),
                                -std::numeric_limits<double>::max(), inf, -inf,
                                std::numeric_limits<double>::quiet_NaN(), -std::numeric_limits<double>::quiet_NaN()};
    double payload_nan;  // a signalling NaN with payload bits in both halves
    const std::uint64_t snan = 0x7ff4000000012345ull;
    std::memcpy(&payload_nan, &snan, 8);
    special.push_back(payload_nan);
    std::mt19937_64 rng(sizeof(T) * 101);
    std::uniform_real_distribution<double> u(-1e6, 1e6);
    for (int round = 0; round < 40; ++round)
        for (std::uint64_t n = 0; n <= 13; ++n) {
            std::vector<double> w(n);
            for (double& v : w) v = rng() % 3 ? special[rng() % special.size()] : u(rng);
            std::vector<std::uint8_t> want(n * sizeof(T) + 1), got(n * sizeof(T) + 1, 0xa5);
            for (std::uint64_t i = 0; i < n; ++i) {
                const T e = dp::to_element<T>(w[i]);
                std::memcpy(want.data() + 1 + i * sizeof(T), &e, sizeof(T));
            }
            std::vector<std::uint8_t> by_portable(want.size(), 0xa5);
            (sizeof(T) == 4 ? portable.f32 : portable.f64)(w.data(), n, by_portable.data() + 1);
            (sizeof(T) == 4 ? chosen.f32 : chosen.f64)(w.data(), n, got.data() + 1);
            INFO("n " << n << " round " << round);
            REQUIRE(std::equal(want.begin() + 1, want.end(), by_portable.begin() + 1));
            REQUIRE(std::equal(want.begin() + 1, want.end(), got.begin() + 1));
            REQUIRE(got[0] == 0xa5);  // nothing before out
            ++*cases;
        }
}

}  // namespace

TEST_CASE("PRISM output: the CPU backend's to_elements gives to_element's bits", "[prism][cpu_kernels]") {
    const dp::PrismCpuKernels& chosen = mans::detail::cpu_backend().prism_kernels();
    const dp::PrismCpuKernels& portable = dp::kPortablePrismKernels;
    if (&chosen == &portable) WARN("no AVX2 kernels here (CPU or build): the portable form was compared with itself");
    unsigned cases = 0;
    compare_to_elements<float>(portable.to_elements, chosen.to_elements, &cases);
    compare_to_elements<double>(portable.to_elements, chosen.to_elements, &cases);
    CHECK(cases == 2 * 40 * 14);
}
