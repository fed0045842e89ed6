// quality.cpp - error metrics of a reconstruction (SZ3 -a / zfp -s names).
#include <cmath>
#include <cstring>
#include <limits>

#include "core/byte_io.hpp"
#include "mans/prism.hpp"

namespace mans::prism {
namespace {

template <typename T>
Errc measure(const std::uint8_t* a, const std::uint8_t* b, std::uint64_t n, const std::vector<double>& fills,
             Quality* q) {
    using mans::detail::load_le;
    Quality r;
    double lo = std::numeric_limits<double>::infinity(), hi = -lo, sq = 0;
    std::uint64_t counted = 0;
    for (std::uint64_t i = 0; i < n; ++i) {
        const T x = load_le<T>(a + i * sizeof(T)), y = load_le<T>(b + i * sizeof(T));
        bool exact = !std::isfinite(x);
        for (double f : fills) exact = exact || x == static_cast<T>(f);
        if (exact) {  // must be kept bit for bit
            if (std::memcmp(&x, &y, sizeof(T)) != 0) ++r.mismatch_count;
            continue;
        }
        lo = std::min(lo, static_cast<double>(x));
        hi = std::max(hi, static_cast<double>(x));
        const double e = static_cast<double>(x) - static_cast<double>(y);
        if (!std::isfinite(e)) {
            ++r.mismatch_count;
            continue;
        }
        r.max_abs_error = std::max(r.max_abs_error, std::fabs(e));
        sq += e * e;
        ++counted;
    }
    r.value_range = counted ? hi - lo : 0;
    const double mse = counted ? sq / static_cast<double>(counted) : 0;
    r.rmse = std::sqrt(mse);
    r.nrmse = r.value_range > 0 ? r.rmse / r.value_range : 0;
    r.max_rel_error = r.value_range > 0 ? r.max_abs_error / r.value_range : 0;
    r.psnr = mse > 0 ? (r.value_range > 0 ? 20 * std::log10(r.value_range) - 10 * std::log10(mse) : 0)
                     : std::numeric_limits<double>::infinity();
    *q = r;
    return Errc::ok;
}

}  // namespace

Errc measure_quality(const void* original, const void* reconstructed, FloatType type, std::uint64_t count,
                     const std::vector<double>& fill_values, Quality* out) noexcept {
    if (!out || ((!original || !reconstructed) && count)) return Errc::invalid_argument;
    const auto* a = static_cast<const std::uint8_t*>(original);
    const auto* b = static_cast<const std::uint8_t*>(reconstructed);
    if (type == FloatType::f32) return measure<float>(a, b, count, fill_values, out);
    if (type == FloatType::f64) return measure<double>(a, b, count, fill_values, out);
    return Errc::unsupported_dtype;
}

}  // namespace mans::prism
