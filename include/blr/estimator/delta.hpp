// The delta method (Khan & Rue 2023, App. C, eqs. 65–66): the expectations are replaced by the
// value at the mean,
//
//     ĝ = ∇ℓ̄(m)                (first order, eq. 65; with Bonnet's theorem E_q[∇ℓ̄] ≈ ∇ℓ̄(m))
//     Ĥ = ∇²ℓ̄(m)               (second order, eq. 66; with Price's theorem E_q[∇²ℓ̄] ≈ ∇²ℓ̄(m))
//
// With it the BLR gives gradient descent (GaussianFixed, first order), Newton's method
// (GaussianFull, second order, ρ = 1) and online Newton on the diagonal (GaussianDiag, eq. 37).
// The template argument picks the curvature:
//   Delta<CurvatureSource::none>              no Ĥ; any loss with a gradient
//   Delta<CurvatureSource::hessian>           Ĥ = ∇²ℓ̄(m), dense for GaussianFull (needs
//                                             HasHessian), its diagonal for GaussianDiag/Fixed
//                                             (needs HasDiagonalHessian)
//   Delta<CurvatureSource::gradient_squared>  Ĥ = diag(ĝ⊙ĝ), the RMSprop/Adam surrogate of eq. 38;
//                                             the square root and the offset of RMSprop are step
//                                             stages (StepPolicy::sqrt_scaling), not part of Ĥ
// Deterministic: the Rng is not used.
#pragma once

#include "blr/core/rng.hpp"
#include "blr/estimator/estimate.hpp"
#include "blr/estimator/gaussian_sampling.hpp"
#include "blr/model/loss.hpp"

namespace blr {

struct DeltaOptions {
  void validate() const {}
};

template <CurvatureSource C = CurvatureSource::hessian>
class Delta {
 public:
  using Options = DeltaOptions;
  static constexpr CurvatureSource curvature_source = C;

  explicit Delta(Options options = {}) : options_(options) { options_.validate(); }
  const Options& options() const { return options_; }

  // (clang-format 14 mangles requires-clauses.)
  // clang-format off
  /// First order, or the gradient-squared surrogate: needs only ∇ℓ̄.
  template <SampleableGaussian Q, HasGradient L>
    requires(C != CurvatureSource::hessian)
  GaussianEstimate estimate(const Q& q, const L& loss, Rng& /*rng*/) const {
    return compute(q, loss);
  }
  /// Second order for a diagonal Gaussian: needs diag ∇²ℓ̄.
  template <DiagonalGaussian Q, HasDiagonalHessian L>
    requires(C == CurvatureSource::hessian)
  GaussianEstimate estimate(const Q& q, const L& loss, Rng& /*rng*/) const {
    return compute(q, loss);
  }
  /// Second order for a full Gaussian: needs the dense ∇²ℓ̄.
  template <FullGaussian Q, HasHessian L>
    requires(C == CurvatureSource::hessian)
  GaussianEstimate estimate(const Q& q, const L& loss, Rng& /*rng*/) const {
    return compute(q, loss);
  }

  // clang-format on

 private:
  template <class Q, class L>
  GaussianEstimate compute(const Q& q, const L& loss) const {
    detail::check_dimensions(q, loss, "Delta");
    GaussianEstimate e;
    e.evaluations = 1;
    if constexpr (C == CurvatureSource::hessian && FullGaussian<Q> &&
                  HasValueGradientAndHessian<L>) {
      Matrix hessian;
      e.loss = loss.value_gradient_and_hessian(q.mean, e.gradient, hessian);
      e.curvature = Curvature::full(std::move(hessian));
      return e;
    }
    e.loss = value_and_gradient(loss, q.mean, e.gradient);
    if constexpr (C == CurvatureSource::gradient_squared) {
      e.curvature = Curvature::diagonal(e.gradient.cwiseAbs2());
    } else if constexpr (C == CurvatureSource::hessian) {
      if constexpr (FullGaussian<Q>) {
        e.curvature = Curvature::full(loss.hessian(q.mean));
      } else {
        e.curvature = Curvature::diagonal(loss.hessian_diagonal(q.mean));
      }
    }
    return e;
  }

  Options options_;
};

using DeltaFirstOrder = Delta<CurvatureSource::none>;
using DeltaSecondOrder = Delta<CurvatureSource::hessian>;
using DeltaGradientSquared = Delta<CurvatureSource::gradient_squared>;

}  // namespace blr
