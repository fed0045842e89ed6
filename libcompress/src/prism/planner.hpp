// planner.hpp - which planes a retrieval reads, and what that guarantees.
//
// The decoder is linear in the codes, so dropping the low planes of level l
// changes the output by the truncation errors pushed through the remaining
// interpolation passes. Each pass's stencils have weights of L1 norm at most
// rho (1.25 cubic, 1 linear), which bounds the worst case exactly:
// gain_l = product over the later passes, with +1 per pass of level l.
// The per-level code errors are the measured maxima (header tables), so
// bound(plan) = e_base + sum_l gain_l * step_l * max_err_l[planes_l]
//               + floating-point slack, and it holds for every point.
#pragma once

#include <cstdint>
#include <vector>

#include "mans/prism.hpp"
#include "prism/archive.hpp"

namespace mans::detail::prism {

struct ErrorModel {
    std::vector<double> gain;    // L-inf gain of each level's code errors
    std::vector<double> energy;  // squared-error gain per unit of sum_sq (estimate)
    double gain_all = 0;         // gain of an error injected at every point
};

ErrorModel error_model(const Header& h);

// Rigorous L-inf bound of a reconstruction from `planes` (one-shot).
double plan_bound(const Header& h, const ErrorModel& m, const std::vector<std::uint32_t>& planes);
// Model estimate of the mean squared error.
double plan_mse(const Header& h, const ErrorModel& m, const std::vector<std::uint32_t>& planes);
double psnr_from_mse(const Header& h, double mse);

// Plans `target` from `prev` planes (all zero for a first retrieval).
// fixed_bytes: header/base bytes this step must read besides planes.
Errc make_plan(const Header& h, const ErrorModel& m, const mans::prism::Target& target,
               const std::vector<std::uint32_t>& prev, std::uint64_t fixed_bytes, mans::prism::Plan* out);

}  // namespace mans::detail::prism
