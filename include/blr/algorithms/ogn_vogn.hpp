// OGN and VOGN (Khan & Rue 2023, eqs. 44–46; Osawa et al. 2019).
//
// Candidate q = N(m, diag(s)⁻¹). The Hessian diagonal is replaced by the Gauss–Newton
// approximation from per-example gradients (eq. 45): ĥ = (N/M)Σ_{i∈M} g_i⊙g_i + diag∇²R.
//   OGN  (eq. 44): gradients at the mean (delta method):  s ← (1−β)s + βĥ(m),  m ← m − α∇̂ℓ̄(m)/s
//   VOGN (eq. 46): gradients at a sample θ ~ q (weight perturbation, K samples averaged).
// With α = β = ρ these are the BLR exactly (up to the Gauss–Newton approximation); `momentum`
// (gradient averaging, β₁) is the deep-learning variant of research/algorithms.md §3.1.
#pragma once

#include "blr/estimator/gauss_newton.hpp"
#include "blr/family/gaussian_diag.hpp"
#include "blr/rule/algorithm.hpp"

namespace blr {

struct OgnOptions {
  Schedule lr = Schedule::constant(0.1);            ///< α (mean rate)
  Schedule hessian_rate = Schedule::constant(0.1);  ///< β (precision rate)
  double prior_precision = 0.0;                     ///< δ: prior N(0, δ⁻¹I), if not in the loss
  double momentum = 0.0;                            ///< β₁ gradient averaging (0: none)
  bool sample = false;                              ///< false: OGN; true: VOGN
  int samples = 1;                                  ///< K (VOGN)
  void validate() const {
    lr.validate("lr");
    hessian_rate.validate("hessian_rate");
    check(lr.initial > 0.0, "Option 'lr' must be positive.");
    check_range("hessian_rate", hessian_rate.initial, 0.0, 1.0);
    check_nonnegative("prior_precision", prior_precision);
    check_range("momentum", momentum, 0.0, 1.0, false, true);
    check(samples >= 1, "Option 'samples' must be at least 1.");
  }
};

using GaussNewtonMethod = Algorithm<GaussianDiag, GaussNewton>;

inline GaussNewtonMethod make_ogn(OgnOptions options = {}) {
  options.sample = false;
  options.samples = 1;
  options.validate();
  StepPolicy policy;
  policy.mean_rate = options.lr;
  policy.precision_rate = options.hessian_rate;
  policy.prior_precision = options.prior_precision;
  policy.gradient_averaging = options.momentum;
  return {GaussNewton(GaussNewtonOptions{false, 1}), policy};
}

inline GaussNewtonMethod make_vogn(OgnOptions options = {}) {
  options.sample = true;
  options.validate();
  StepPolicy policy;
  policy.mean_rate = options.lr;
  policy.precision_rate = options.hessian_rate;
  policy.prior_precision = options.prior_precision;
  policy.gradient_averaging = options.momentum;
  return {GaussNewton(GaussNewtonOptions{true, options.samples}), policy};
}

}  // namespace blr
