// RMSprop and Adam as the BLR with square-root scaling (Khan & Rue 2023, eq. 38, App. F eq. 81).
//
// Candidate q = N(m, diag(s)⁻¹), delta method with the squared gradient in place of the
// Hessian diagonal (Ĥ = diag(ĝ⊙ĝ), a crude surrogate the paper discusses in §4.2), precision rate
// β = 1 − β₂:
//     s ← (1 − β)s + β ĝ⊙ĝ,     m ← m − α ĝ / (√(s + c_in) + c_out)         (RMSprop, eq. 38)
// Replacing s by √s in the mean step is the "square-root scaling" stage; it is not a BLR step
// (the exact BLR divides by s), which is why these are approximations of the BLR, not instances.
//
// Adam (Kingma & Ba 2015) adds gradient averaging with debiasing and precision debiasing:
//     u ← β₁u + (1−β₁)ĝ,  s ← β₂s + (1−β₂)ĝ²,  m ← m − α·[u/(1−β₁ᵗ)] / (√(s/(1−β₂ᵗ)) + ε).
// This preset coincides with Kingma & Ba's Adam exactly (test: `adam` row of table1) when s₀ = 0
// and L2 regularisation lives in the loss. Where it differs from the paper's eq. 81: eq. 81 uses
// the BLR's natural momentum γ(λ_t − λ_{t−1}) (eq. 80) instead of Adam's gradient average, and
// momentum on s; a policy with stage::NaturalMomentum instead of stage::GradientAverage gives
// that variant, which is not Adam. Decoupled weight decay (AdamW) is not a prior and is not offered here.
#pragma once

#include "blr/estimator/delta.hpp"
#include "blr/family/gaussian_diag.hpp"
#include "blr/rule/algorithm.hpp"

namespace blr {

using RmspropPolicy = Policy<stage::SqrtScaling>;
using AdamPolicy = Policy<stage::GradientAverage, stage::PrecisionDebias, stage::SqrtScaling>;
using Rmsprop = Algorithm<GaussianDiag, Delta<CurvatureSource::gradient_squared>, RmspropPolicy>;
using Adam = Algorithm<GaussianDiag, Delta<CurvatureSource::gradient_squared>, AdamPolicy>;

struct RmspropOptions {
  Schedule lr = Schedule::constant(1e-2);  ///< α
  double beta = 0.01;       ///< weight of the new ĝ² (eq. 38's β; PyTorch's alpha = 1 − β)
  double epsilon = 1e-8;    ///< c
  bool epsilon_inside = false;  ///< √(s + c) as eq. 38; false: √s + c as PyTorch
  void validate() const {
    lr.validate("lr");
    check(lr.initial > 0.0, "Option 'lr' must be positive.");
    check_range("beta", beta, 0.0, 1.0, true, false);
    check_positive("epsilon", epsilon);
  }
};

inline Rmsprop make_rmsprop(const RmspropOptions& options = {}) {
  options.validate();
  RmspropPolicy policy;
  policy.mean_rate = options.lr;
  policy.precision_rate = Schedule::constant(options.beta);
  auto& sqrt = policy.get<stage::SqrtScaling>();
  (options.epsilon_inside ? sqrt.inner : sqrt.outer) = options.epsilon;
  return {Delta<CurvatureSource::gradient_squared>{}, policy};
}

struct AdamOptions {
  Schedule lr = Schedule::constant(1e-3);  ///< α
  double beta1 = 0.9;
  double beta2 = 0.999;
  double epsilon = 1e-8;
  void validate() const {
    lr.validate("lr");
    check(lr.initial > 0.0, "Option 'lr' must be positive.");
    check_range("beta1", beta1, 0.0, 1.0, false, true);
    check_range("beta2", beta2, 0.0, 1.0, false, true);
    check_positive("epsilon", epsilon);
  }
};

inline Adam make_adam(const AdamOptions& options = {}) {
  options.validate();
  AdamPolicy policy;
  policy.mean_rate = options.lr;
  policy.precision_rate = Schedule::constant(1.0 - options.beta2);
  policy.get<stage::GradientAverage>() = {options.beta1, /*debias=*/true};
  policy.get<stage::SqrtScaling>().outer = options.epsilon;
  return {Delta<CurvatureSource::gradient_squared>{}, policy};
}

/// The initial candidate of RMSprop/Adam: mean θ₀ and s₀ = 0 (the preconditioner stays positive
/// through the offset).
inline GaussianDiag squared_gradient_initial(const Vector& theta0) {
  return GaussianDiag(theta0, Vector::Zero(theta0.size()));
}

}  // namespace blr
