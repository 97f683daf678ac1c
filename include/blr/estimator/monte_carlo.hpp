// Monte Carlo estimates of the Gaussian natural gradient by Bonnet's and Price's theorems
// (Khan & Rue 2023, eqs. 10–11 and App. D):
//
//     E_q[∇ℓ̄] ≈ ĝ = (1/K)Σ_k ∇ℓ̄(θ_k),   E_q[∇²ℓ̄] ≈ Ĥ = (1/K)Σ_k ∇²ℓ̄(θ_k),   θ_k ~ q,
//
// both unbiased. Ĥ is dense for GaussianFull (needs HasHessian) and diagonal for
// GaussianDiag/Fixed (needs HasDiagonalHessian); MonteCarlo<CurvatureSource::none> returns ĝ only
// and needs only a gradient (variational optimisation with a fixed covariance). With `antithetic`
// the noise comes in pairs (ε, −ε), which cancels the odd terms of the Taylor expansion of ∇ℓ̄
// about m (exact ĝ on quadratics with two samples). `loss` reports the mean of ℓ̄(θ_k), an
// unbiased estimate of E_q[ℓ̄].
#pragma once

#include <vector>

#include "blr/core/error.hpp"
#include "blr/core/rng.hpp"
#include "blr/estimator/estimate.hpp"
#include "blr/estimator/gaussian_sampling.hpp"
#include "blr/model/loss.hpp"

namespace blr {

struct MonteCarloOptions {
  int samples = 1;          ///< K ≥ 1 (even with `antithetic`)
  bool antithetic = false;  ///< draw (ε, −ε) pairs
  void validate() const {
    check(samples >= 1, fmt::format("Option 'samples' must be at least 1; got {}.", samples));
    check(!antithetic || samples % 2 == 0,
          fmt::format("Option 'samples' must be even when 'antithetic' is on; got {}.", samples));
  }
};

template <CurvatureSource C = CurvatureSource::hessian>
class MonteCarlo {
  static_assert(C != CurvatureSource::gradient_squared,
                "MonteCarlo supports CurvatureSource::none and CurvatureSource::hessian.");

 public:
  using Options = MonteCarloOptions;
  static constexpr CurvatureSource curvature_source = C;

  explicit MonteCarlo(Options options = {}) : options_(options) { options_.validate(); }
  const Options& options() const { return options_; }

  // (clang-format 14 mangles requires-clauses.)
  // clang-format off
  /// Draws options().samples noise vectors from `rng` and calls estimate_with_noise. The three
  /// overloads state what the loss must offer: a gradient (first order), diag ∇²ℓ̄ (diagonal q)
  /// or the dense ∇²ℓ̄ (full q).
  template <SampleableGaussian Q, HasGradient L>
    requires(C == CurvatureSource::none)
  GaussianEstimate estimate(const Q& q, const L& loss, Rng& rng) const {
    return estimate_with_noise(q, loss, draw(rng, q.dimension()));
  }
  template <DiagonalGaussian Q, HasDiagonalHessian L>
    requires(C == CurvatureSource::hessian)
  GaussianEstimate estimate(const Q& q, const L& loss, Rng& rng) const {
    return estimate_with_noise(q, loss, draw(rng, q.dimension()));
  }
  template <FullGaussian Q, HasHessian L>
    requires(C == CurvatureSource::hessian)
  GaussianEstimate estimate(const Q& q, const L& loss, Rng& rng) const {
    return estimate_with_noise(q, loss, draw(rng, q.dimension()));
  }

  /// θ_k = sample_with_noise(q, ε_k) for each given ε_k (K = eps.size(); options().samples and
  /// options().antithetic are not used).
  template <SampleableGaussian Q, HasGradient L>
    requires(C == CurvatureSource::none)
  GaussianEstimate estimate_with_noise(const Q& q, const L& loss,
                                       const std::vector<Vector>& eps) const {
    return compute(q, loss, eps);
  }
  template <DiagonalGaussian Q, HasDiagonalHessian L>
    requires(C == CurvatureSource::hessian)
  GaussianEstimate estimate_with_noise(const Q& q, const L& loss,
                                       const std::vector<Vector>& eps) const {
    return compute(q, loss, eps);
  }
  template <FullGaussian Q, HasHessian L>
    requires(C == CurvatureSource::hessian)
  GaussianEstimate estimate_with_noise(const Q& q, const L& loss,
                                       const std::vector<Vector>& eps) const {
    return compute(q, loss, eps);
  }

  // clang-format on

 private:
  std::vector<Vector> draw(Rng& rng, Index d) const {
    return standard_normal_noise(rng, d, options_.samples, options_.antithetic);
  }

  template <class Q, class L>
  GaussianEstimate compute(const Q& q, const L& loss, const std::vector<Vector>& eps) const {
    detail::check_dimensions(q, loss, "MonteCarlo");
    const Index d = q.dimension();
    detail::check_noise(eps, d, "MonteCarlo");
    const double inv_k = 1.0 / static_cast<double>(eps.size());
    GaussianEstimate e;
    e.gradient = Vector::Zero(d);
    Vector diag_sum;
    Matrix dense_sum;
    if constexpr (C == CurvatureSource::hessian) {
      if constexpr (FullGaussian<Q>) {
        dense_sum = Matrix::Zero(d, d);
      } else {
        diag_sum = Vector::Zero(d);
      }
    }
    Vector g;
    for (const Vector& noise : eps) {
      const Vector theta = sample_with_noise(q, noise);
      e.loss += value_and_gradient(loss, theta, g);
      e.gradient += g;
      if constexpr (C == CurvatureSource::hessian) {
        if constexpr (FullGaussian<Q>) {
          dense_sum += loss.hessian(theta);
        } else {
          diag_sum += loss.hessian_diagonal(theta);
        }
      }
    }
    e.loss *= inv_k;
    e.gradient *= inv_k;
    e.evaluations = static_cast<int>(eps.size());
    if constexpr (C == CurvatureSource::hessian) {
      if constexpr (FullGaussian<Q>) {
        e.curvature = Curvature::full(inv_k * dense_sum);
      } else {
        e.curvature = Curvature::diagonal(inv_k * diag_sum);
      }
    }
    return e;
  }

  Options options_;
};

using MonteCarloFirstOrder = MonteCarlo<CurvatureSource::none>;

}  // namespace blr
