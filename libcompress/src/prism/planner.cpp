// planner.cpp - error model and the knapsack over (level, planes).
#include "prism/planner.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

namespace mans::detail::prism {
namespace {

// Largest weight L1 norm and (estimated) weight energy of a level's stencils.
double level_rho(const LevelMeta& m) { return m.kinds == KindMode::all_linear ? 1.0 : 1.25; }
// Truncation errors are biased (negabinary drops are not zero-mean), and
// interpolation passes a bias on with weight 1, so the energy gain per pass
// is taken as 1 (coherent), not the sum of squared weights.
double level_energy(const LevelMeta&) { return 1.0; }

// Rounding of one double reconstruction, per point and per unit of magnitude:
// a prediction (<= 4 axes x 4 terms, a mean, a scale) and one multiply-add,
// each rounding by at most 2^-53 of a value bounded by 1.25 V.
// Safety factor of the (model) mean squared error of truncated planes.
constexpr double kMseMargin = 2.0;

constexpr double kRoundPerPoint = 24.0 * 1.25 * 0x1p-53;

double half_ulp_f32(double v) {
    if (!(v > 0)) return 0;
    int e = 0;
    std::frexp(v, &e);  // v < 2^e
    return std::max(std::ldexp(1.0, e - 25), 0x1p-150);  // subnormals are spaced 2^-149
}

bool is_complete(const Header& h, const std::vector<std::uint32_t>& planes) {
    for (unsigned l = 0; l < h.levels; ++l)
        if (planes[l] < h.level[l].planes) return false;
    return true;
}

struct Option {
    std::uint32_t planes;
    double err;           // additive L-inf error (data units)
    std::uint64_t bytes;  // this step
};

// Chooses one option per level minimising sum(value) subject to
// sum(weight) <= capacity, with weights rounded up to units of capacity/G so
// that the constraint holds exactly. Returns false when nothing fits.
bool knapsack(const std::vector<std::vector<Option>>& opts, bool weight_is_err, double capacity,
              std::vector<std::uint32_t>* choice) {
    constexpr int G = 2048;
    if (!(capacity >= 0)) return false;
    const double unit = capacity / G;
    auto weight = [&](const Option& o) -> long {
        const double w = weight_is_err ? o.err : static_cast<double>(o.bytes);
        if (w <= 0) return 0;
        if (!(unit > 0)) return G + 1;
        const double units = std::ceil(w / unit * (1 + 1e-12));
        return units > G ? G + 1 : static_cast<long>(units);
    };
    auto value = [&](const Option& o) { return weight_is_err ? static_cast<double>(o.bytes) : o.err; };
    const double inf = std::numeric_limits<double>::infinity();
    std::vector<double> dp(G + 1, 0.0), next(G + 1);
    std::vector<std::vector<std::uint8_t>> pick(opts.size(), std::vector<std::uint8_t>(G + 1, 0));
    for (std::size_t l = 0; l < opts.size(); ++l) {
        std::fill(next.begin(), next.end(), inf);
        for (std::size_t i = 0; i < opts[l].size(); ++i) {
            const long w = weight(opts[l][i]);
            if (w > G) continue;
            const double v = value(opts[l][i]);
            for (long g = w; g <= G; ++g) {
                const double cand = dp[static_cast<std::size_t>(g - w)] + v;
                if (cand < next[static_cast<std::size_t>(g)]) {
                    next[static_cast<std::size_t>(g)] = cand;
                    pick[l][static_cast<std::size_t>(g)] = static_cast<std::uint8_t>(i);
                }
            }
        }
        dp.swap(next);
    }
    if (!(dp[G] < inf)) return false;
    choice->assign(opts.size(), 0);
    long g = G;
    for (std::size_t l = opts.size(); l-- > 0;) {
        const Option& o = opts[l][pick[l][static_cast<std::size_t>(g)]];
        (*choice)[l] = o.planes;
        g -= weight(o);
    }
    return true;
}

std::uint64_t step_bytes(const Header& h, const std::vector<std::uint32_t>& prev,
                         const std::vector<std::uint32_t>& planes) {
    std::uint64_t b = 0;
    for (unsigned l = 0; l < h.levels; ++l) b += h.plane_range_bytes(l, prev[l], planes[l]);
    return b;
}

}  // namespace

ErrorModel error_model(const Header& h) {
    ErrorModel m;
    m.gain.assign(h.levels, 0);
    m.energy.assign(h.levels, 0);
    const unsigned r = h.grid.rank;
    // Point counts per pass, coarse to fine.
    std::vector<std::vector<std::uint64_t>> pass_points(h.levels);
    for (unsigned l = 0; l < h.levels; ++l)
        for (const Pass& p : level_passes(h.grid, level_unit(h.levels, l), h.level[l].scheme)) {
            std::uint64_t n = 0;
            for (const Box& b : p.boxes) n += b.size();
            pass_points[l].push_back(n);
        }
    for (unsigned src = 0; src < h.levels; ++src) {
        double M = 0;                 // worst |error| of any point so far, per unit code error
        double S = 0, C = 1;          // summed variance and points so far (the anchor)
        for (unsigned l = 0; l < h.levels; ++l) {
            const double rho = level_rho(h.level[l]);
            for (unsigned k = 0; k < r; ++k) {
                const double inject = l == src ? 1.0 : 0.0;
                if (l >= src) M = inject + rho * M;
                const double axes = h.level[l].scheme == Scheme::multi_dim ? k + 1.0 : 1.0;
                const double var = inject + level_energy(h.level[l]) / axes * (S / C);
                const double n = static_cast<double>(pass_points[l][k]);
                S += n * var;
                C += n;
            }
        }
        m.gain[src] = M;
        const double codes = static_cast<double>(h.level[src].codes);
        m.energy[src] = codes > 0 ? S / codes : 0;
    }
    double M = 0;
    for (unsigned l = 0; l < h.levels; ++l)
        for (unsigned k = 0; k < r; ++k) M = 1 + level_rho(h.level[l]) * M;
    m.gain_all = M;
    return m;
}

double plan_bound(const Header& h, const ErrorModel& m, const std::vector<std::uint32_t>& planes) {
    if (is_complete(h, planes)) return h.full_max_error;  // bit-identical to the encoder's reconstruction
    double trunc = 0;
    for (unsigned l = 0; l < h.levels; ++l) trunc += m.gain[l] * h.level[l].step * h.level[l].max_err[planes[l]];
    const double v = h.max_abs_work + h.work_max_error + trunc;
    // Encoder and decoder each round: 2 x (gain of an error at every point).
    const double rounding = 2 * m.gain_all * kRoundPerPoint * v;
    double e = h.work_max_error + trunc + rounding;
    if (h.type == mans::prism::FloatType::f32) e += std::min(e, half_ulp_f32(v + e));
    return e * (1 + 1e-12);
}

double plan_mse(const Header& h, const ErrorModel& m, const std::vector<std::uint32_t>& planes) {
    if (is_complete(h, planes)) return h.full_mse;
    const double n = std::max(1.0, static_cast<double>(h.grid.count - h.masked_count));  // as PSNR counts
    double mse = std::max(h.work_mse, h.full_mse);
    for (unsigned l = 0; l < h.levels; ++l) {
        const double step = h.level[l].step;
        mse += kMseMargin * m.energy[l] * step * step * h.level[l].sum_sq[planes[l]] / n;
    }
    return mse;
}

double psnr_from_mse(const Header& h, double mse) {
    const double range = h.value_max - h.value_min;
    if (mse <= 0) return std::numeric_limits<double>::infinity();
    if (range <= 0) return 0;
    return 20 * std::log10(range) - 10 * std::log10(mse);
}

Errc make_plan(const Header& h, const ErrorModel& m, const mans::prism::Target& target,
               const std::vector<std::uint32_t>& prev, std::uint64_t fixed_bytes, mans::prism::Plan* out) {
    using TK = mans::prism::Target::Kind;
    std::vector<std::uint32_t> complete(h.levels), chosen;
    for (unsigned l = 0; l < h.levels; ++l) complete[l] = h.level[l].planes;
    const std::uint64_t complete_bytes = step_bytes(h, prev, complete);

    // Options per level: keep prev..planes planes, each with the L-inf
    // error it adds (the rigorous bound's per-level term) and its bytes.
    std::vector<std::vector<Option>> linf_options(h.levels);
    for (unsigned l = 0; l < h.levels; ++l) {
        const LevelMeta& lm = h.level[l];
        for (std::uint32_t b = prev[l]; b <= lm.planes; ++b)
            linf_options[l].push_back({b, m.gain[l] * lm.step * lm.max_err[b], h.plane_range_bytes(l, prev[l], b)});
    }

    // Cheapest plan whose rigorous bound is <= t (t >= full_max_error).
    auto linf_plan = [&](double t) {
        std::vector<std::uint32_t> best = complete, pick;
        // Budget for truncation: everything else at its largest for an error <= t.
        const double v = h.max_abs_work + t;
        double budget = t - h.work_max_error - 2 * m.gain_all * kRoundPerPoint * v;
        if (h.type == mans::prism::FloatType::f32) budget -= half_ulp_f32(v + t);
        budget /= 1 + 1e-9;
        if (budget > 0 && knapsack(linf_options, true, budget, &pick) &&
            step_bytes(h, prev, pick) < complete_bytes && plan_bound(h, m, pick) <= t)
            best = pick;
        return best;
    };

    const double range = h.value_max - h.value_min;
    switch (target.kind) {
        case TK::full:
            chosen = complete;
            break;
        case TK::absolute:
        case TK::relative: {
            const double t = target.kind == TK::absolute ? target.value : target.value * range;
            if (!(t >= 0) || std::isnan(t)) return Errc::invalid_argument;
            if (t < h.full_max_error) return Errc::target_unreachable;
            chosen = linf_plan(t);
            break;
        }
        case TK::psnr: {
            // The L-inf plans spread the error over the levels the way the
            // rigorous bound does; among them, take the cheapest whose PSNR
            // estimate meets the target. (Optimising the MSE model directly
            // lets the search exploit the model's errors on coarse levels.)
            if (std::isnan(target.value)) return Errc::invalid_argument;
            chosen = complete;
            if (psnr_from_mse(h, plan_mse(h, m, complete)) < target.value) return Errc::target_unreachable;
            if (range <= 0) break;
            double lo = std::log(std::max(h.full_max_error, range * 1e-12)), hi = std::log(range);
            for (int it = 0; it < 40 && hi - lo > 1e-2; ++it) {  // 1 % steps of the bound
                const double mid = 0.5 * (lo + hi);
                const std::vector<std::uint32_t> pick = linf_plan(std::exp(mid));
                if (psnr_from_mse(h, plan_mse(h, m, pick)) >= target.value) {
                    if (step_bytes(h, prev, pick) <= step_bytes(h, prev, chosen)) chosen = pick;
                    lo = mid;
                } else {
                    hi = mid;
                }
            }
            break;
        }
        case TK::bytes: {
            if (!(target.value >= 0)) return Errc::invalid_argument;
            if (target.value < static_cast<double>(fixed_bytes)) return Errc::target_unreachable;
            const double cap = target.value - static_cast<double>(fixed_bytes);
            if (static_cast<double>(complete_bytes) <= cap) {
                chosen = complete;
                break;
            }
            if (!knapsack(linf_options, false, cap, &chosen)) chosen = prev;
            break;
        }
    }
    out->planes = chosen;
    out->bytes_to_read = fixed_bytes + step_bytes(h, prev, chosen);
    out->max_abs_error_bound = plan_bound(h, m, chosen);
    out->psnr_estimate = psnr_from_mse(h, plan_mse(h, m, chosen));
    out->complete = is_complete(h, chosen);
    return Errc::ok;
}

}  // namespace mans::detail::prism
