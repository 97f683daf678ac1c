// Vadam (Khan et al., ICML 2018) as a BLR preset: Adam's steps on a variational Gaussian.
//
// research/algorithms.md §5. With mean-loss units (ℓ̄/N) and λ̃ = λ_p/N, Vadam samples
// θ ~ N(μ, 1/(N s + λ_p)) and updates
//     u ← β₁u + (1−β₁)(ĝ + λ̃μ),   s ← β₂s + (1−β₂)ĝ²,   μ ← μ − α û / (√ŝ + λ̃)
// with Adam's debiasing (û = u/(1−β₁ᵗ), ŝ = s/(1−β₂ᵗ)). As a composition: the rule's candidate holds
// (μ, s) and the policy is Policy<PriorInGradient, GradientAverage, PrecisionDebias, SqrtScaling>:
// the prior inside the average, precision rate 1 − β₂ with the prior kept out of s, precision
// debiasing and square-root scaling with offset λ̃; the estimator evaluates ĝ and ĝ² at θ drawn from
// the *posterior* N(μ, 1/(N s + λ_p)), which is the candidate the preset hands to it. The square
// root makes Vadam an approximation of the BLR (Khan et al. 2018, §3), not an instance. The
// LibTorch optimizer (blr/torch/optim/vadam.hpp) runs the same policy in the same units.
#pragma once

#include "blr/core/option_table.hpp"
#include "blr/estimator/delta.hpp"
#include "blr/estimator/gaussian_sampling.hpp"
#include "blr/family/gaussian_diag.hpp"
#include "blr/rule/algorithm.hpp"

namespace blr {

struct VadamOptions {
  double lr = 1e-3;              ///< α
  double ess = 0.0;              ///< N > 0 (the training-set size); must be given
  double beta1 = 0.9;
  double beta2 = 0.999;
  double prior_precision = 1.0;  ///< λ_p
  double prec_init = 1.0;        ///< initial posterior precision N s₀ + λ_p (≥ λ_p)
  int64_t mc_samples = 1;        ///< K

  static const OptionTable<VadamOptions>& table();
  /// prec_init ≥ prior_precision (the table checks each option alone).
  void check_consistency() const;
  void validate() const { validate_options(*this); }
};

using VadamPolicy = Policy<stage::PriorInGradient, stage::GradientAverage, stage::PrecisionDebias,
                           stage::SqrtScaling>;

/// Vadam's policy (the same in the core and the LibTorch optimizer).
VadamPolicy vadam_policy(const VadamOptions& o);

/// Vadam's estimator: K draws θ_k ~ N(μ, 1/(N s + λ_p)); ĝ = mean ∇ℓ̄(θ_k) and Ĥ = mean ĝ_k⊙ĝ_k,
/// ℓ̄ the mean loss.
struct VadamEstimator {
  double ess = 1.0;
  double prior_precision = 1.0;
  int mc_samples = 1;

  template <HasGradient L>
  GaussianEstimate estimate(const GaussianDiag& q, const L& loss, Rng& rng) const {
    const Index d = q.dimension();
    return estimate_with_noise(q, loss, standard_normal_noise(rng, d, mc_samples, false));
  }

  template <HasGradient L>
  GaussianEstimate estimate_with_noise(const GaussianDiag& q, const L& loss,
                                       const std::vector<Vector>& eps) const {
    const GaussianDiag posterior(q.mean, (ess * q.precision.array() + prior_precision).matrix());
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

using Vadam = Algorithm<GaussianDiag, VadamEstimator, VadamPolicy>;

inline Vadam make_vadam(const VadamOptions& o) {
  o.validate();
  return {VadamEstimator{o.ess, o.prior_precision, static_cast<int>(o.mc_samples)}, vadam_policy(o)};
}

/// Vadam's starting candidate: μ₀ and s₀ = (prec_init − λ_p)/N.
inline GaussianDiag vadam_initial(const Vector& mean, const VadamOptions& o) {
  o.validate();
  return GaussianDiag(mean, Vector::Constant(mean.size(), (o.prec_init - o.prior_precision) / o.ess));
}

/// The posterior precision N s + λ_p of Vadam's candidate.
inline Vector vadam_posterior_precision(const GaussianDiag& q, const VadamOptions& o) {
  return (o.ess * q.precision.array() + o.prior_precision).matrix();
}

}  // namespace blr
