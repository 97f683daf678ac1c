// Vadam (Khan et al., ICML 2018) as a BLR preset: Adam's steps on a variational Gaussian.
//
// research/algorithms.md §5. With mean-loss units (ℓ̄/N) and λ̃ = λ_p/N, Vadam samples
// θ ~ N(μ, 1/(N s + λ_p)) and updates
//     u ← β₁u + (1−β₁)(ĝ + λ̃μ),   s ← β₂s + (1−β₂)ĝ²,   μ ← μ − α û / (√ŝ + λ̃)
// with Adam's debiasing (û = u/(1−β₁ᵗ), ŝ = s/(1−β₂ᵗ)). As a composition: the rule's candidate holds
// (μ, s) and the policy is gradient averaging with the prior inside the average, precision rate
// 1 − β₂ with the prior kept out of s, precision debiasing and square-root scaling with offset λ̃;
// the estimator evaluates ĝ and ĝ² at θ drawn from the *posterior* N(μ, 1/(N s + λ_p)), which is
// the candidate the preset hands to it. The square root makes Vadam an approximation of the BLR
// (Khan et al. 2018, §3), not an instance.
#pragma once

#include "blr/estimator/delta.hpp"
#include "blr/estimator/gaussian_sampling.hpp"
#include "blr/family/gaussian_diag.hpp"
#include "blr/rule/algorithm.hpp"

namespace blr {

struct VadamOptions {
  double lr = 1e-3;              ///< α
  double beta1 = 0.9;
  double beta2 = 0.999;
  double prior_precision = 1.0;  ///< λ_p
  double prec_init = 1.0;        ///< initial posterior precision N s₀ + λ_p (≥ λ_p)
  double train_set_size = 1.0;   ///< N
  int samples = 1;               ///< K
  void validate() const {
    check_positive("lr", lr);
    check_range("beta1", beta1, 0.0, 1.0, false, true);
    check_range("beta2", beta2, 0.0, 1.0, false, true);
    check_positive("prior_precision", prior_precision);
    check(prec_init >= prior_precision,
          "Option 'prec_init' must be at least 'prior_precision' (s₀ = (prec_init − λp)/N ≥ 0).");
    check_positive("train_set_size", train_set_size);
    check(samples >= 1, "Option 'samples' must be at least 1.");
  }
};

/// Vadam's estimator: K draws θ_k ~ N(μ, 1/(N s + λ_p)); ĝ = mean ∇ℓ̄(θ_k) and Ĥ = mean ĝ_k⊙ĝ_k,
/// ℓ̄ the mean loss.
struct VadamEstimator {
  double train_set_size = 1.0;
  double prior_precision = 1.0;
  int samples = 1;

  template <HasGradient L>
  GaussianEstimate estimate(const GaussianDiag& q, const L& loss, Rng& rng) const {
    const Index d = q.dimension();
    return estimate_with_noise(q, loss, standard_normal_noise(rng, d, samples, false));
  }

  template <HasGradient L>
  GaussianEstimate estimate_with_noise(const GaussianDiag& q, const L& loss,
                                       const std::vector<Vector>& eps) const {
    const GaussianDiag posterior(q.mean, (train_set_size * q.precision.array() + prior_precision).matrix());
    GaussianEstimate total;
    total.gradient = Vector::Zero(q.dimension());
    Vector squares = Vector::Zero(q.dimension());
    const Delta<CurvatureSource::gradient_squared> at_point;
    Rng unused(0);
    for (const Vector& e : eps) {
      const GaussianDiag point(sample_with_noise(posterior, e), posterior.precision);
      const GaussianEstimate one = at_point.estimate(point, loss, unused);
      total.gradient += one.gradient;
      squares += one.curvature.diag;
      total.loss += one.loss;
    }
    const double inv_k = 1.0 / static_cast<double>(eps.size());
    total.gradient *= inv_k;
    total.loss *= inv_k;
    total.curvature = Curvature::diagonal(squares * inv_k);
    total.evaluations = static_cast<int>(eps.size());
    return total;
  }
};

using Vadam = Algorithm<GaussianDiag, VadamEstimator>;

inline Vadam make_vadam(const VadamOptions& o) {
  o.validate();
  const double prior = o.prior_precision / o.train_set_size;  // λ̃
  StepPolicy policy;
  policy.mean_rate = Schedule::constant(o.lr);
  policy.precision_rate = Schedule::constant(1.0 - o.beta2);
  policy.prior_precision = prior;
  policy.prior_in_average = true;
  policy.prior_in_curvature = false;
  policy.gradient_averaging = o.beta1;
  policy.debias_gradient = true;
  policy.debias_precision = true;
  policy.sqrt_scaling = true;
  policy.sqrt_outer_offset = prior;
  return {VadamEstimator{o.train_set_size, o.prior_precision, o.samples}, policy};
}

/// Vadam's starting candidate: μ₀ and s₀ = (prec_init − λ_p)/N.
inline GaussianDiag vadam_initial(const Vector& mean, const VadamOptions& o) {
  o.validate();
  return GaussianDiag(mean, Vector::Constant(mean.size(), (o.prec_init - o.prior_precision) / o.train_set_size));
}

/// The posterior precision N s + λ_p of Vadam's candidate.
inline Vector vadam_posterior_precision(const GaussianDiag& q, const VadamOptions& o) {
  return (o.train_set_size * q.precision.array() + o.prior_precision).matrix();
}

}  // namespace blr
