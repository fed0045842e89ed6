// encode_plan.cpp - see encode_plan.hpp.
#include "prism/encode_plan.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include "core/frame.hpp"  // checksum32
#include "prism/geometry.hpp"

namespace mans::detail::prism {

void start_header(Header* h, const Grid& g, const mans::prism::CompressConfig& cfg) {
    h->type = cfg.type;
    h->grid = g;
    h->mode = cfg.mode;
    h->coding = static_cast<Coding>(cfg.planes);
    h->requested_bound = cfg.error_bound;
    h->levels = g.count ? level_count(g) : 0;
    h->level.resize(h->levels);
}

Errc set_value_range(Header* h, const mans::prism::CompressConfig& cfg, const MaskPartial& m,
                     const std::vector<double>& fills, double* cast_slack) {
    const std::uint64_t n = h->grid.count;
    h->masked_count = m.masked;
    h->value_min = m.masked == n ? 0 : m.kept.lo;
    h->value_max = m.masked == n ? 0 : m.kept.hi;
    h->fill_values = fills;
    const double range = h->value_max - h->value_min;
    h->abs_bound = cfg.mode == ErrorMode::relative ? cfg.error_bound * range : cfg.error_bound;
    if (!std::isfinite(h->abs_bound)) return Errc::invalid_argument;
    const bool f32 = h->type == mans::prism::FloatType::f32;
    int exponent = 0;
    std::frexp(std::max(std::fabs(h->value_min), std::fabs(h->value_max)), &exponent);
    *cast_slack = std::max(std::ldexp(1.0, exponent - (f32 ? 25 : 54)), f32 ? 0x1p-150 : 0x1p-1074);  // subnormal spacing
    return Errc::ok;
}

void plan_level(Header* h, const mans::prism::CompressConfig& cfg, unsigned l, double cast_slack) {
    LevelMeta& m = h->level[l];
    // Level-wise bound (full bound by default, see CompressConfig). Leave
    // room for rounding the reconstruction to T, so that points near the
    // bound do not all become outliers.
    const double finer_levels = static_cast<double>(h->levels - 1 - l);
    const double level_bound = h->abs_bound / std::min(std::pow(cfg.level_alpha, finer_levels), cfg.level_beta);
    m.eb = level_bound > 2 * cast_slack ? std::min(level_bound, h->abs_bound - cast_slack) : level_bound;
    m.step = 2 * m.eb;
    m.codes = level_code_count(h->grid, level_unit(h->levels, l));
}

void finish_error_stats(Header* h, const ErrorStats& all) {
    h->full_max_error = all.full_max;
    h->work_max_error = all.work_max;
    h->max_abs_work = all.abs_max;
    // Means over the values that PSNR is measured on (masked ones excluded).
    const double counted = static_cast<double>(h->grid.count - h->masked_count);
    // Saturated: squared errors of values near the top of f64 overflow.
    h->full_mse = counted > 0 ? std::min(all.full_sq / counted, std::numeric_limits<double>::max()) : 0;
    h->work_mse = counted > 0 ? std::min(all.work_sq / counted, std::numeric_limits<double>::max()) : 0;
}

Errc write_archive(Header* h, const std::vector<std::uint8_t>& base,
                   std::vector<std::vector<std::uint8_t>>* segment_bytes, std::vector<std::uint8_t>* archive) {
    h->base_bytes = base.size();
    h->base_checksum = checksum32(base.data(), base.size());
    std::vector<std::uint8_t> out = write_header(h);
    out.reserve(static_cast<std::size_t>(h->total_bytes));
    out.insert(out.end(), base.begin(), base.end());
    for (auto& s : *segment_bytes) {
        out.insert(out.end(), s.begin(), s.end());
        std::vector<std::uint8_t>().swap(s);
    }
    if (out.size() != h->total_bytes) return Errc::internal;
    // Never hand out an archive that a reader would refuse.
    Header check;
    if (parse_header(out.data(), static_cast<std::size_t>(h->header_bytes), out.size(), &check) != Errc::ok)
        return Errc::internal;
    archive->swap(out);
    return Errc::ok;
}

}  // namespace mans::detail::prism
