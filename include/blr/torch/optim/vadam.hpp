// Vadam (Khan et al., ICML 2018, "Fast and scalable Bayesian deep learning by weight-perturbation
// in Adam"), as in the authors' reference optimizer, computed by the core's Vadam policy
// (blr/algorithms/vadam.hpp) in the same units.
//
// Posterior q(θ) = N(μ, 1/(N·s + λp)), with N the training-set size, λp the prior precision and
// λ̃ = λp/N. With ĝ and q̄ the averages over the step's samples θ_s = μ + σ⊙ε_s of the gradient of
// the mean minibatch loss and of its square, step t does, per coordinate:
//
//   m ← β1·m + (1 − β1)·(ĝ + λ̃·μ)
//   s ← β2·s + (1 − β2)·q̄
//   μ ← μ − α·(m/(1 − β1^t)) / (sqrt(s/(1 − β2^t)) + λ̃)
//
// s starts at (prec_init − λp)/N, so the first samples have precision prec_init. Sampling uses
// the raw s (no bias correction), as the reference does.
#pragma once

#include <cstdint>

#include "blr/algorithms/vadam.hpp"
#include "blr/torch/optim/gaussian.hpp"

namespace blr::torch {

/// Vadam's options: the core preset's (lr, ess, beta1, beta2, prior_precision, prec_init,
/// mc_samples) and the noise seed.
struct VadamOptions : OptimizerOptionsFor<VadamOptions>, ::blr::VadamOptions {
  uint64_t seed = 0;  ///< seed of the weight noise

  static const OptionTable<VadamOptions>& table();
  void validate() const { validate_options(*this); }
};

/// ĝ, and Ĥ = q̄ (the squared minibatch gradient, Adam's second moment).
struct VadamRule : DirectEstimate<Statistic::kSquaredGradient> {
  using Options = VadamOptions;
  using Policy = ::blr::VadamPolicy;
  static constexpr const char* kName = "Vadam";
  static constexpr bool kPerturbs = true;
  static Policy policy(const Options& o) { return ::blr::vadam_policy(o); }
  static double precision_keep(const Options& o) { return o.beta2; }
  static Affine posterior(const Options& o) { return {o.ess, o.prior_precision}; }
  static double initial_precision(const Options& o) {
    return (o.prec_init - o.prior_precision) / o.ess;
  }
  static double curvature_offset(const Options&) { return 0.0; }
};

class Vadam : public GaussianOptimizer<VadamRule> {
 public:
  using GaussianOptimizer::GaussianOptimizer;
};

}  // namespace blr::torch
