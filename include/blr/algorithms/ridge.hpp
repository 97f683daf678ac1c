// Ridge regression in one BLR step (Khan & Rue 2023, §1.3.3, eq. 14).
//
// For ℓ̄(θ) = ½|y − Xθ|² + (δ/2)|θ|² the expectations are exact for any Gaussian q:
// ∇_μ E_q[ℓ̄] = (−Xᵀy, ½(XᵀX + δI)) (eq. 14), so one step with ρ = 1 from any q gives
// S = XᵀX + δI and m = (XᵀX + δI)⁻¹Xᵀy: the ridge estimate and the Bayesian posterior.
#pragma once

#include "blr/estimator/exact_quadratic.hpp"
#include "blr/family/gaussian_full.hpp"
#include "blr/rule/algorithm.hpp"

namespace blr {

using RidgeOneStep = Algorithm<GaussianFull, ExactQuadratic, Policy<>>;

inline RidgeOneStep make_ridge_one_step() {
  Policy<> policy;
  policy.mean_rate = Schedule::constant(1.0);
  policy.precision_rate = Schedule::constant(1.0);
  return {ExactQuadratic{}, policy};
}

}  // namespace blr
