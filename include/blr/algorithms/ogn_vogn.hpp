// OGN and VOGN (Khan & Rue 2023, eqs. 44–46; Osawa et al., NeurIPS 2019).
//
// Candidate q = N(m, diag(S)⁻¹). The Hessian diagonal is replaced by the Gauss–Newton
// approximation from per-example gradients (eq. 45): ĥ = Σ_{i∈M} g_i⊙g_i (scaled to the data set).
//   OGN  (eq. 44): gradients at the mean (delta method):  S ← (1−β)S + β(ĥ + δ),  m ← m − α(ĝ + δm)/S
//   VOGN (eq. 46): gradients at a sample θ ~ q (weight perturbation, K samples averaged).
// With α = β = ρ these are the BLR exactly (up to the Gauss–Newton approximation). The deep-
// learning form of Osawa et al. (research/algorithms.md §3.1) adds heavy-ball momentum on the
// regularised gradient, m_u ← β₁m_u + (ĝ + δm), and a damping γ added to the precision: the policy
// Policy<PriorInGradient, GradientAverage (heavy ball), PriorInCurvature>, which with β₁ = 0 is
// eq. 44/46 exactly. Two unit systems, one policy (vogn_policy): the core's sum loss (precision
// S = N(s + δ/N + γ)) and the LibTorch optimizer's mean loss (precision per example s + δ/N + γ).
#pragma once

#include "blr/core/option_table.hpp"
#include "blr/estimator/gauss_newton.hpp"
#include "blr/family/gaussian_diag.hpp"
#include "blr/rule/algorithm.hpp"

namespace blr {

struct VognOptions {
  double lr = 1e-3;              ///< α
  double ess = 0.0;              ///< N > 0, the training-set size; must be given
  double prior_precision = 1.0;  ///< δ > 0: prior N(0, δ⁻¹I)
  double damping = 0.0;          ///< γ ≥ 0, added to the precision per example
  double beta1 = 0.9;            ///< heavy-ball momentum β₁ ∈ [0, 1)
  double curvature_rate = 0.01;  ///< β: weight of the new squared gradients, (0, 1]
  double hess_init = 0.01;       ///< s₀ ≥ 0, the initial curvature per example
  int64_t mc_samples = 1;        ///< K (VOGN; OGN uses none)

  static const OptionTable<VognOptions>& table();
  void validate() const { validate_options(*this); }
};

using VognPolicy = Policy<stage::PriorInGradient, stage::GradientAverage, stage::PriorInCurvature>;

/// VOGN's policy with precision scale·(s + δ/N + γ): scale = N in the core (sum loss), 1 in the
/// LibTorch optimizer (mean loss).
VognPolicy vogn_policy(const VognOptions& o, double scale);

using GaussNewtonMethod = Algorithm<GaussianDiag, GaussNewton, VognPolicy>;

/// OGN: Gauss–Newton curvature at the mean.
inline GaussNewtonMethod make_ogn(const VognOptions& o) {
  o.validate();
  return {GaussNewton(GaussNewtonOptions{false, 1}), vogn_policy(o, o.ess)};
}

/// VOGN: Gauss–Newton curvature at mc_samples draws θ ~ q.
inline GaussNewtonMethod make_vogn(const VognOptions& o) {
  o.validate();
  return {GaussNewton(GaussNewtonOptions{true, static_cast<int>(o.mc_samples)}),
          vogn_policy(o, o.ess)};
}

/// The starting candidate: μ₀ and precision N(s₀ + δ/N + γ).
inline GaussianDiag vogn_initial(const Vector& mean, const VognOptions& o) {
  o.validate();
  return GaussianDiag(mean, Vector::Constant(mean.size(), o.ess * o.hess_init + o.prior_precision +
                                                              o.ess * o.damping));
}

}  // namespace blr
