// IVON — Improved Variational Online Newton (Shen et al., ICML 2024) as a BLR preset.
//
// research/algorithms.md §1 (reference ivon-opt 0.1.3), in the BLR's coordinates. IVON keeps h
// (a Hessian estimate per example) and samples θ ~ N(μ, 1/(λ(h + δ))), λ = ess. Writing the
// candidate's precision as S = λ(h + δ) and the loss as ℓ̄ = λ·(mean loss) (the sum over N = λ
// examples), IVON is the diagonal Gaussian BLR with
//   estimator  ReparamHessian ("price"): ĝ = ∇ℓ̄(θ), Ĥ = ĝ⊙(θ − μ)⊙S   (= λ·ĥ of IVON),
//   prior      λδ (a Gaussian prior N(0, (λδ)⁻¹I)): added to Ĥ, and δ·λμ added after the average,
//   policy     gradient averaging β₁ with debiasing; precision rate ρ = 1 − β₂ with the improved-BLR
//              correction, S ← (1−ρ)S + ρ(Ĥ + λδ) + (ρ²/2)(S − Ĥ − λδ)²/S, which is exactly
//              h ← β₂h + ρĥ + (ρ²/2)(h − ĥ)²/(h + δ);  mean rate α(h₀ + δ) when rescale_lr
//              (else α); elementwise clip of S⁻¹(λm̂ + λδμ) = (m̂ + δμ)/(h + δ) to ±clip_radius.
// Tests: the scalar worked example of §1.7 to 1e-12 and a plainly written IVON on logistic
// regression (table1 row `ivon`).
#pragma once

#include <limits>

#include "blr/estimator/reparam_hessian.hpp"
#include "blr/family/gaussian_diag.hpp"
#include "blr/rule/algorithm.hpp"

namespace blr {

struct IvonOptions {
  double lr = 0.1;             ///< α > 0
  double ess = 1.0;            ///< λ > 0 (usually N); the loss must be λ·(mean loss)
  double hess_init = 1.0;      ///< h₀ > 0
  double beta1 = 0.9;          ///< [0, 1)
  double beta2 = 0.99999;      ///< [0, 1]
  double weight_decay = 1e-4;  ///< δ ≥ 0
  double clip_radius = std::numeric_limits<double>::infinity();  ///< > 0
  int mc_samples = 1;          ///< ≥ 1
  bool debias = true;
  bool rescale_lr = true;
  void validate() const {
    check_positive("lr", lr);
    check_positive("ess", ess);
    check_positive("hess_init", hess_init);
    check_range("beta1", beta1, 0.0, 1.0, false, true);
    check_range("beta2", beta2, 0.0, 1.0);
    check_nonnegative("weight_decay", weight_decay);
    check(clip_radius > 0.0, "Option 'clip_radius' must be positive (infinity for no clipping).");
    check(mc_samples >= 1, fmt::format("Option 'mc_samples' must be at least 1; got {}.", mc_samples));
  }
};

using Ivon = Algorithm<GaussianDiag, ReparamHessian>;

inline Ivon make_ivon(const IvonOptions& o) {
  o.validate();
  StepPolicy policy;
  policy.mean_rate = Schedule::constant(o.rescale_lr ? o.lr * (o.hess_init + o.weight_decay) : o.lr);
  policy.precision_rate = Schedule::constant(1.0 - o.beta2);
  policy.prior_precision = o.ess * o.weight_decay;
  policy.gradient_averaging = o.beta1;
  policy.debias_gradient = o.debias;
  policy.pd_correction = true;
  policy.clip_radius = o.clip_radius;
  ReparamHessianOptions estimator;
  estimator.samples = o.mc_samples;
  return {ReparamHessian(estimator), policy};
}

/// IVON's starting candidate: mean μ₀ and precision λ(h₀ + δ).
inline GaussianDiag ivon_initial(const Vector& mean, const IvonOptions& o) {
  o.validate();
  return GaussianDiag(mean, Vector::Constant(mean.size(), o.ess * (o.hess_init + o.weight_decay)));
}

/// IVON's own state h from the candidate: h = S/λ − δ.
inline Vector ivon_hessian(const GaussianDiag& q, const IvonOptions& o) {
  return (q.precision.array() / o.ess - o.weight_decay).matrix();
}

}  // namespace blr
