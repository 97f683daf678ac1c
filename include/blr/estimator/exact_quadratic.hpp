// Exact Gaussian expectations for a loss that is quadratic in θ (Khan & Rue 2023, eqs. 13–14):
//
//     E_q[∇ℓ̄] = ∇ℓ̄(m),   E_q[∇²ℓ̄] = ∇²ℓ̄ (constant),   E_q[ℓ̄] = ℓ̄(m) + ½tr(∇²ℓ̄·S⁻¹).
//
// For `Quadratic`, `DiagonalQuadratic` and `LinearRegression` (any QuadraticLoss). With ρ = 1 one
// BLR step then lands on the exact posterior (conjugate Gaussian case). Ĥ is dense for
// GaussianFull and diagonal for GaussianDiag/Fixed; `loss` is the exact expectation E_q[ℓ̄]
// (not ℓ̄(m)). Deterministic: the Rng is not used.
#pragma once

#include "blr/core/rng.hpp"
#include "blr/estimator/estimate.hpp"
#include "blr/estimator/gaussian_sampling.hpp"
#include "blr/model/loss.hpp"

namespace blr {

struct ExactQuadraticOptions {
  void validate() const {}
};

class ExactQuadratic {
 public:
  using Options = ExactQuadraticOptions;

  explicit ExactQuadratic(Options options = {}) : options_(options) { options_.validate(); }
  const Options& options() const { return options_; }

  template <SampleableGaussian Q, QuadraticLoss L>
  GaussianEstimate estimate(const Q& q, const L& loss, Rng& /*rng*/) const {
    detail::check_dimensions(q, loss, "ExactQuadratic");
    GaussianEstimate e;
    const double at_mean = value_and_gradient(loss, q.mean, e.gradient);
    e.evaluations = 1;
    if constexpr (FullGaussian<Q>) {
      Matrix h = loss.hessian(q.mean);
      e.loss = at_mean + 0.5 * h.cwiseProduct(q.precision.inverse()).sum();
      e.curvature = Curvature::full(std::move(h));
    } else {
      Vector h;
      if constexpr (HasDiagonalHessian<L>) {
        h = loss.hessian_diagonal(q.mean);
      } else {
        h = loss.hessian(q.mean).diagonal();
      }
      e.loss = at_mean + 0.5 * h.cwiseQuotient(q.precision).sum();
      e.curvature = Curvature::diagonal(std::move(h));
    }
    return e;
  }

 private:
  Options options_;
};

}  // namespace blr
