// IVON, the improved variational online Newton method (Shen et al., ICML 2024, arXiv 2402.17641),
// as a LibTorch optimizer: the update of the reference implementation ivon-opt 0.1.3, computed by
// the core's IVON policy (blr/algorithms/ivon.hpp) in mean-loss units.
//
// Posterior q(θ) = N(μ, diag(σ²)), σ² = 1/(λ(h + δ)); μ lives in the model parameters. With ĝ, x̄
// and q̄ the averages over the step's S samples θ_s = μ + σ⊙ε_s of the gradient, of (θ_s − μ)⊙ĝ_s
// and of ĝ_s², step t does, per coordinate (ρ = 1 − β2):
//
//   m ← β1·m + (1 − β1)·ĝ
//   ĥ = λ(h + δ)·x̄   ('price', the reparameterisation/Price estimator)   or   ĥ = λ·q̄ ('gradsq')
//   h ← β2·h + ρ·ĥ + (ρ²/2)·(h − ĥ)²/(h + δ)          (improved BLR: h + δ stays positive)
//   m̂ = m/(1 − β1^t) (debias)        α' = α·(h0 + δ) (rescale_lr)
//   μ ← μ − α'·clip((m̂ + δ·μ)/(h + δ), −c, c)          (new h)
//
// The state is kept as the precision per example P = h + δ (curvature() returns h). A general
// prior N(m₀, diag(1/(λp₀))) (MeanFieldOptimizer::set_prior; continual learning with the posterior
// as the next prior) replaces δ by p₀ and δ·μ by p₀⊙(μ − m₀) above; P = h + p₀. Unlike the
// reference, the step counter t is saved with the state, and step() without a training sample is
// an error rather than a crash.
//
// Usage (see docs/torch.md):
//   blr::torch::IvonOptions options;
//   options.lr = 0.1;
//   options.ess = train_size;
//   blr::torch::Ivon optimizer(model->parameters(), options);
#pragma once

#include <cstdint>

#include "blr/algorithms/ivon.hpp"
#include "blr/torch/optim/gaussian.hpp"

namespace blr::torch {

/// The Hessian estimator of IVON.
enum class IvonHessian {
  kPrice,        ///< ĥ = λ(h + δ)·(θ − μ)⊙ĝ, unbiased by Price's theorem (default)
  kGradSquared,  ///< ĥ = λ·ĝ²
};

/// IVON's options: the core preset's (lr, ess, hess_init, beta1, beta2, weight_decay,
/// clip_radius, mc_samples, debias, rescale_lr) and the Hessian estimator and noise seed.
struct IvonOptions : OptimizerOptionsFor<IvonOptions>, ::blr::IvonOptions {
  IvonHessian hess_approx = IvonHessian::kPrice;
  uint64_t seed = 0;  ///< seed of the weight noise

  static const OptionTable<IvonOptions>& table();
  void validate() const { validate_options(*this); }
};

struct IvonRule {
  using Options = IvonOptions;
  using Policy = ::blr::IvonPolicy;
  static constexpr const char* kName = "IVON";
  static constexpr bool kPerturbs = true;
  static constexpr int kVariants = 2;  ///< price, gradsq
  static constexpr Statistic kStatistics[kVariants] = {Statistic::kNoiseTimesGradient,
                                                       Statistic::kSquaredGradient};
  static int variant(const Options& o) { return o.hess_approx == IvonHessian::kPrice ? 0 : 1; }
  static Statistic statistic(const Options& o) { return kStatistics[variant(o)]; }
  static Policy policy(const Options& o) { return ::blr::ivon_policy(o, 1.0); }
  static double precision_keep(const Options& o) { return o.beta2; }  ///< β₂ exactly
  static Affine posterior(const Options& o) { return {o.ess, 0.0}; }
  static double initial_precision(const Options& o) { return o.hess_init + o.weight_decay; }
  static double curvature_offset(const Options& o) { return o.weight_decay; }
  /// δ enters only through the prior stages: a prior N(m₀, 1/(λp₀)) per coordinate replaces it.
  static constexpr bool kGeneralPrior = true;

  template <class T>
  struct Estimate {
    T lambda;
  };
  template <class T>
  static Estimate<T> estimate_coefficients(const Options& o) {
    return {static_cast<T>(o.ess)};
  }
  /// ĝ, and ĥ = λ·P·x̄ (price: P = h + δ, x̄ the average of noise⊙ĝ) or λ·q̄ (gradsq).
  template <int kVariant, class V, class T>
  static void estimate(const Estimate<T>& e, const V& g, const V& stat, stage::Coordinate<V>& c) {
    c.gradient = g;
    if constexpr (kVariant == 0) {
      c.curvature = e.lambda * c.precision * stat;
    } else {
      c.curvature = e.lambda * stat;
    }
  }
};

class Ivon : public GaussianOptimizer<IvonRule> {
 public:
  using GaussianOptimizer::GaussianOptimizer;
};

}  // namespace blr::torch
