// error_stats_hd.hpp - the encoder's statistics of the reconstruction
// error (the header's full / work max error, max |work|, and the mean
// squared errors, FORMAT.md 4.1) as MANS_HD code: points are added in
// point order within blocks of kErrorStatPoints points (a GPU runs a
// thread per block), then the blocks are merged in block order. Double
// sums depend on their order, so both orders are fixed; neither depends
// on the thread count.
#pragma once

#include <cmath>
#include <cstdint>

#include "core/hd.hpp"
#include "prism/point_math.hpp"  // to_element

namespace mans::detail::prism {

inline constexpr std::uint64_t kErrorStatPoints = 65536;

struct ErrorStats {
    double full_max = 0, work_max = 0, abs_max = 0, full_sq = 0, work_sq = 0;
};

// std::max's answer (the first unless the second is larger), also for NaN.
MANS_HD double max_of(double a, double b) { return a < b ? b : a; }

// Point with work value `work` (the double the prediction used) and
// original value x; exact: kept exactly (the anchor, masked points,
// outliers), which only counts toward max |work|. T: the element type the
// full reconstruction is rounded to.
template <typename T>
MANS_HD void add_point_error(ErrorStats* s, double work, double x, bool exact) {
    s->abs_max = max_of(s->abs_max, ::fabs(work));
    if (exact) return;
    const double ef = x - static_cast<double>(to_element<T>(work));
    const double ew = x - work;
    s->full_max = max_of(s->full_max, ::fabs(ef));
    s->work_max = max_of(s->work_max, ::fabs(ew));
    s->full_sq += ef * ef;
    s->work_sq += ew * ew;
}

// Adds block b into the running total; called for the blocks in order.
MANS_HD void merge_error_stats(ErrorStats* all, const ErrorStats& b) {
    all->full_max = max_of(all->full_max, b.full_max);
    all->work_max = max_of(all->work_max, b.work_max);
    all->abs_max = max_of(all->abs_max, b.abs_max);
    all->full_sq += b.full_sq;
    all->work_sq += b.work_sq;
}

}  // namespace mans::detail::prism
