// VOGN and OGN, the (variational) online Gauss–Newton methods (Khan et al. 2018; Osawa et al.,
// NeurIPS 2019, "Practical deep learning with Bayesian principles"), in the paper-level form,
// computed by the core's VOGN policy (blr/algorithms/ogn_vogn.hpp) in mean-loss units.
//
// Posterior q(θ) = N(μ, diag(σ²)), σ² = 1/(N(s + δ̃ + γ)), with N the training-set size,
// δ̃ = δ/N (δ the prior precision, i.e. 1/prior variance), γ the damping. With ĝ the average
// over the step's samples of the gradient of the mean minibatch loss, and D the average of the
// per-example squared gradients (1/M)Σ_i (∇ℓ_i)² given by add_squared_gradients() (exact for
// Linear and Conv2d, see per_example.hpp), step t does, per coordinate:
//
//   m ← β1·m + (ĝ + δ̃·μ)                 (heavy-ball momentum, as in the paper)
//   s ← (1 − w)·s + w·D                   (w: weight of the new statistic, the paper's β2)
//   μ ← μ − α·m/(s + δ̃ + γ)               (new s)
//
// The state is kept as the precision per example P = s + δ̃ + γ (curvature() returns s).
// OGN is the same without weight noise: the gradients and D are taken at μ (θ = μ).
// Not modelled: torchsso's KL weighting τ (τ = 1 here), its KL warm-up, and its first-step
// special case (s starts at hess_init and is always averaged).
#pragma once

#include <cstdint>

#include "blr/algorithms/ogn_vogn.hpp"
#include "blr/torch/optim/gaussian.hpp"

namespace blr::torch {

/// VOGN's options: the core preset's (lr, ess, prior_precision, damping, beta1, curvature_rate,
/// hess_init, mc_samples) and the noise seed.
struct VognOptions : OptimizerOptionsFor<VognOptions>, ::blr::VognOptions {
  uint64_t seed = 0;  ///< seed of the weight noise

  static const OptionTable<VognOptions>& table();
  void validate() const { validate_options(*this); }
};

/// OGN's options: VOGN's without weight noise (no mc_samples, no seed).
struct OgnOptions : OptimizerOptionsFor<OgnOptions>, ::blr::VognOptions {
  static const OptionTable<OgnOptions>& table();
  void validate() const { validate_options(*this); }
};

/// ĝ, and Ĥ = D (the average per-example squared gradient, the Gauss–Newton diagonal).
template <class O, bool kSample>
struct GaussNewtonRule : DirectEstimate<Statistic::kExternalSquared> {
  using Options = O;
  using Policy = ::blr::VognPolicy;
  static constexpr const char* kName = kSample ? "VOGN" : "OGN";
  static constexpr bool kPerturbs = kSample;
  static Policy policy(const Options& o) { return ::blr::vogn_policy(o, 1.0); }
  static double precision_keep(const Options& o) { return 1.0 - o.curvature_rate; }
  static Affine posterior(const Options& o) { return {o.ess, 0.0}; }
  static double curvature_offset(const Options& o) { return o.prior_precision / o.ess + o.damping; }
  static double initial_precision(const Options& o) { return o.hess_init + curvature_offset(o); }
};

using VognRule = GaussNewtonRule<VognOptions, true>;
using OgnRule = GaussNewtonRule<OgnOptions, false>;

class Vogn : public GaussianOptimizer<VognRule> {
 public:
  using GaussianOptimizer::GaussianOptimizer;
};

/// OGN: VOGN without weight noise (gradients and squared gradients at the mean).
class Ogn : public GaussianOptimizer<OgnRule> {
 public:
  using GaussianOptimizer::GaussianOptimizer;
};

}  // namespace blr::torch
