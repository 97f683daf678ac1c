// IVON — Improved Variational Online Newton (Shen et al., ICML 2024) as a BLR preset.
//
// research/algorithms.md §1 (reference ivon-opt 0.1.3), in the BLR's coordinates. IVON keeps h
// (a Hessian estimate per example) and samples θ ~ N(μ, 1/(λ(h + δ))), λ = ess. As the diagonal
// Gaussian BLR with precision S = scale·(h + δ):
//   estimator  ReparamHessian ("price"): ĝ = ∇ℓ̄(θ), Ĥ = ĝ⊙(θ − μ)⊙S   (= scale·ĥ of IVON),
//   policy     Policy<GradientAverage, PriorInDirection, PriorInCurvature, IblrCorrection, Clip>:
//              gradient averaging β₁ with debiasing; the prior scale·δ added to Ĥ and scale·δ·μ
//              after the average; precision rate ρ = 1 − β₂ with the improved-BLR correction,
//              S ← (1−ρ)S + ρ(Ĥ + scale·δ) + (ρ²/2)(S − Ĥ − scale·δ)²/S, which is exactly
//              h ← β₂h + ρĥ + (ρ²/2)(h − ĥ)²/(h + δ); mean rate α(h₀ + δ) when rescale_lr (else α);
//              elementwise clip of (m̂ + δμ)/(h + δ) to ±clip_radius.
// Two unit systems, one policy (ivon_policy): scale = λ in the core, whose loss is the sum
// ℓ̄ = λ·(mean loss); scale = 1 in the LibTorch optimizer (blr/torch/optim/ivon.hpp), whose
// gradients are those of the mean loss and whose precision per example is h + δ.
// Tests: the scalar worked example of §1.7 to 1e-12 and a plainly written IVON on logistic
// regression (table1 row `ivon`); the LibTorch optimizer against this preset (parity test).
#pragma once

#include <limits>

#include "blr/core/option_table.hpp"
#include "blr/estimator/reparam_hessian.hpp"
#include "blr/family/gaussian_diag.hpp"
#include "blr/rule/algorithm.hpp"

namespace blr {

struct IvonOptions {
  double lr = 0.1;             ///< α ≥ 0
  double ess = 0.0;            ///< λ > 0 (usually N); must be given
  double hess_init = 1.0;      ///< h₀ > 0
  double beta1 = 0.9;          ///< [0, 1)
  double beta2 = 0.99999;      ///< [0, 1]
  double weight_decay = 1e-4;  ///< δ ≥ 0
  double clip_radius = std::numeric_limits<double>::infinity();  ///< > 0
  int64_t mc_samples = 1;      ///< ≥ 1
  bool debias = true;
  bool rescale_lr = true;

  static const OptionTable<IvonOptions>& table();
  void validate() const { validate_options(*this); }
};

using IvonPolicy = Policy<stage::GradientAverage, stage::PriorInDirection, stage::PriorInCurvature,
                          stage::IblrCorrection, stage::Clip>;

/// IVON's policy with precision S = scale·(h + δ) (see above).
IvonPolicy ivon_policy(const IvonOptions& o, double scale);

using Ivon = Algorithm<GaussianDiag, ReparamHessian, IvonPolicy>;

inline Ivon make_ivon(const IvonOptions& o) {
  o.validate();
  return {ReparamHessian({.samples = static_cast<int>(o.mc_samples)}), ivon_policy(o, o.ess)};
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
