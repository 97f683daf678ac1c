// Gradient descent and SGD as the BLR (Khan & Rue 2023, §1.3.1 and eq. 35).
//
// Candidate q = N(m, I) (GaussianFixed: the covariance never moves), delta method of first order
// (E_q[∇ℓ̄] ≈ ∇ℓ̄(m), eq. 65), step ρ_t = α_t:   m ← m − α_t ∇ℓ̄(m).
// With a minibatch loss (N/M)Σ_{i∈M}ℓ_i + R (eq. 34, `loss.with_rows`) this is SGD (eq. 35);
// `momentum` is the BLR's natural momentum (eq. 80), i.e. Polyak's heavy ball (eq. 75).
#pragma once

#include "blr/estimator/delta.hpp"
#include "blr/family/gaussian_fixed.hpp"
#include "blr/rule/algorithm.hpp"

namespace blr {

struct GradientDescentOptions {
  Schedule lr = Schedule::constant(0.1);  ///< α_t > 0
  double momentum = 0.0;                  ///< γ ∈ [0, 1)
  void validate() const {
    lr.validate("lr");
    check(lr.initial > 0.0, "Option 'lr' must be positive.");
    check_range("momentum", momentum, 0.0, 1.0, false, true);
  }
};

using GradientDescent =
    Algorithm<GaussianFixed, Delta<CurvatureSource::none>, Policy<stage::NaturalMomentum>>;

inline GradientDescent make_gradient_descent(const GradientDescentOptions& options = {}) {
  options.validate();
  Policy<stage::NaturalMomentum> policy;
  policy.mean_rate = options.lr;
  policy.precision_rate = Schedule::constant(0.0);
  policy.get<stage::NaturalMomentum>().gamma = options.momentum;
  return {Delta<CurvatureSource::none>{}, policy};
}

}  // namespace blr
