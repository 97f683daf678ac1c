// The Gauss–Newton (OGN) curvature from per-example gradients (Khan & Rue 2023, eq. 45):
//
//     Ĥ = c·Σ_i g_i g_iᵀ + ∇²R(θ),   g_i = ∇ℓ_i(θ),  c = N/M (example_scale),
//     ĝ = c·Σ_i g_i + ∇R(θ) = ∇ℓ̂(θ),
//
// evaluated at the mean θ = m (OGN, a delta method), or at samples θ_k ~ q when `sample` is on
// (VOGN, eq. 46, averaged over K samples). Ĥ is positive semi-definite by construction. For a
// full Gaussian it is returned as Curvature::outer(rows = the g_i, scale = c/K, shift = diag ∇²R),
// which the rule folds into the Cholesky factor by rank-one updates; the shift is left empty when
// the regulariser has no curvature, so that the O(d²)-per-example path applies. For a diagonal
// Gaussian it is returned as its diagonal c·Σ_i g_i⊙g_i + diag ∇²R.
#pragma once

#include <vector>

#include "blr/core/error.hpp"
#include "blr/core/rng.hpp"
#include "blr/estimator/estimate.hpp"
#include "blr/estimator/gaussian_sampling.hpp"
#include "blr/model/loss.hpp"

namespace blr {

struct GaussNewtonOptions {
  bool sample = false;  ///< evaluate at θ_k ~ q (VOGN) instead of at m (OGN)
  int samples = 1;      ///< K ≥ 1 samples when `sample` is on
  void validate() const {
    check(samples >= 1, fmt::format("Option 'samples' must be at least 1; got {}.", samples));
    check(sample || samples == 1,
          "Option 'samples' can exceed 1 only when 'sample' is on (OGN evaluates at the mean).");
  }
};

class GaussNewton {
 public:
  using Options = GaussNewtonOptions;

  explicit GaussNewton(Options options = {}) : options_(options) { options_.validate(); }
  const Options& options() const { return options_; }

  /// At m, or at options().samples draws θ_k ~ q when options().sample (via estimate_with_noise).
  template <SampleableGaussian Q, HasPerExampleGradients L>
  GaussianEstimate estimate(const Q& q, const L& loss, Rng& rng) const {
    if (!options_.sample) {
      return estimate_with_noise(q, loss, std::vector<Vector>{Vector::Zero(q.dimension())});
    }
    return estimate_with_noise(q, loss,
                               standard_normal_noise(rng, q.dimension(), options_.samples, false));
  }

  /// At θ_k = sample_with_noise(q, ε_k) for each given ε_k (a zero vector gives θ = m).
  template <SampleableGaussian Q, HasPerExampleGradients L>
  GaussianEstimate estimate_with_noise(const Q& q, const L& loss,
                                       const std::vector<Vector>& eps) const {
    detail::check_dimensions(q, loss, "GaussNewton");
    const Index d = q.dimension();
    detail::check_noise(eps, d, "GaussNewton");
    const double inv_k = 1.0 / static_cast<double>(eps.size());
    const double c = loss.example_scale();
    GaussianEstimate e;
    e.gradient = Vector::Zero(d);
    Vector reg_diag = Vector::Zero(d);
    Vector diag_sum = Vector::Zero(d);
    std::vector<Matrix> blocks;
    Index rows = 0;
    for (const Vector& noise : eps) {
      const Vector theta = sample_with_noise(q, noise);
      Matrix g = loss.per_example_gradients(theta);
      check(g.cols() == d,
            fmt::format("GaussNewton: the per-example gradients have {} columns for a "
                        "{}-dimensional loss.",
                        g.cols(), d));
      e.gradient += c * g.colwise().sum().transpose() + loss.regularizer_gradient(theta);
      e.loss += loss.value(theta);
      reg_diag += loss.regularizer_hessian_diagonal(theta);
      if constexpr (FullGaussian<Q>) {
        rows += g.rows();
        blocks.push_back(std::move(g));
      } else {
        diag_sum += g.array().square().colwise().sum().transpose().matrix();
      }
    }
    e.loss *= inv_k;
    e.gradient *= inv_k;
    reg_diag *= inv_k;
    e.evaluations = static_cast<int>(eps.size());
    if constexpr (FullGaussian<Q>) {
      Matrix factors(rows, d);
      Index at = 0;
      for (const Matrix& b : blocks) {
        factors.middleRows(at, b.rows()) = b;
        at += b.rows();
      }
      Vector shift;
      if ((reg_diag.array() != 0.0).any()) shift = std::move(reg_diag);
      e.curvature = Curvature::outer(std::move(factors), c * inv_k, std::move(shift));
    } else {
      e.curvature = Curvature::diagonal(c * inv_k * diag_sum + reg_diag);
    }
    return e;
  }

 private:
  Options options_;
};

}  // namespace blr
