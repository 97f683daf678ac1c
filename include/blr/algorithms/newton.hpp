// Newton's method and online Newton as the BLR (Khan & Rue 2023, §1.3.2, eq. 12).
//
// Candidate q = N(m, S⁻¹) (GaussianFull), delta method of second order (eqs. 65–66):
//     S ← (1 − ρ)S + ρ∇²ℓ̄(m),   m ← m − ρ S⁻¹∇ℓ̄(m).
// ρ = 1 gives Newton's method, m ← m − [∇²ℓ̄(m)]⁻¹∇ℓ̄(m), whatever S was; ρ < 1 gives the
// online Newton method with an exponentially smoothed Hessian (eq. 12). At the fixed point of
// Newton, q = N(θ*, [∇²ℓ̄(θ*)]⁻¹) is Laplace's approximation (laplace.hpp). A GaussianDiag candidate
// with the diagonal Hessian gives eq. 37 (`make_diagonal_newton`), the adaptive method of eq. 36
// when the mean and precision rates differ.
#pragma once

#include "blr/estimator/delta.hpp"
#include "blr/family/gaussian_diag.hpp"
#include "blr/family/gaussian_full.hpp"
#include "blr/rule/algorithm.hpp"

namespace blr {

struct NewtonOptions {
  double step_size = 1.0;       ///< ρ ∈ (0, 1]; 1 = Newton's method
  double prior_precision = 0.0;  ///< δ ≥ 0 (added to the loss: ĝ += δm, Ĥ += δI)
  bool pd_correction = false;   ///< improved BLR for indefinite Hessians
  void validate() const {
    check_range("step_size", step_size, 0.0, 1.0, true, false);
    check_nonnegative("prior_precision", prior_precision);
  }
};

/// A Gaussian prior N(0, δ⁻¹I) in the loss (ĝ += δm, Ĥ += δI) and the optional iBLR correction.
using NewtonPolicy = Policy<stage::PriorInDirection, stage::PriorInCurvature, stage::IblrCorrection>;

inline NewtonPolicy newton_policy(Schedule mean_rate, Schedule precision_rate, double prior,
                                  bool pd_correction) {
  NewtonPolicy policy;
  policy.mean_rate = mean_rate;
  policy.precision_rate = precision_rate;
  policy.get<stage::PriorInDirection>().precision = prior;
  policy.get<stage::PriorInCurvature>().precision = prior;
  policy.get<stage::IblrCorrection>().enabled = pd_correction;
  return policy;
}

using Newton = Algorithm<GaussianFull, Delta<CurvatureSource::hessian>, NewtonPolicy>;

inline Newton make_newton(const NewtonOptions& options = {}) {
  options.validate();
  return {Delta<CurvatureSource::hessian>{},
          newton_policy(Schedule::constant(options.step_size), Schedule::constant(options.step_size),
                        options.prior_precision, options.pd_correction)};
}

struct DiagonalNewtonOptions {
  Schedule lr = Schedule::constant(0.1);             ///< α (mean rate)
  Schedule hessian_rate = Schedule::constant(0.1);   ///< β (precision rate); = α gives eq. 37
  double prior_precision = 0.0;
  bool pd_correction = false;
  void validate() const {
    lr.validate("lr");
    hessian_rate.validate("hessian_rate");
    check(lr.initial > 0.0, "Option 'lr' must be positive.");
    check_range("hessian_rate", hessian_rate.initial, 0.0, 1.0);
    check_nonnegative("prior_precision", prior_precision);
  }
};

using DiagonalNewton = Algorithm<GaussianDiag, Delta<CurvatureSource::hessian>, NewtonPolicy>;

/// θ ← θ − α ∇ℓ̄/s,  s ← (1−β)s + β diag∇²ℓ̄ (eqs. 36–37).
inline DiagonalNewton make_diagonal_newton(const DiagonalNewtonOptions& options = {}) {
  options.validate();
  return {Delta<CurvatureSource::hessian>{},
          newton_policy(options.lr, options.hessian_rate, options.prior_precision,
                        options.pd_correction)};
}

}  // namespace blr
