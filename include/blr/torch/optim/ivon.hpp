// IVON, the improved variational online Newton method (Shen et al., ICML 2024, arXiv 2402.17641),
// as a LibTorch optimizer; the update of the reference implementation ivon-opt 0.1.3.
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
// Unlike the reference, the step counter t is saved with the state, and step() without a training
// sample is an error rather than a crash.
#pragma once

#include <torch/arg.h>

#include <cstdint>
#include <limits>

#include "blr/torch/optim/mean_field.hpp"

namespace blr::torch {

/// The Hessian estimator of IVON.
enum class IvonHessian {
  kPrice,        ///< ĥ = λ(h + δ)·(θ − μ)⊙ĝ, unbiased by Price's theorem (default)
  kGradSquared,  ///< ĥ = λ·ĝ²
};

/// Options of IVON. Fields marked "per group" may be set in a param group's own options; those
/// left unset there take the optimizer's defaults (LibTorch does not merge them for custom
/// optimizers; Ivon does). `lr` is always set (per group, as in LibTorch). The other fields are
/// read from the optimizer's defaults only.
struct IvonOptions : public ::torch::optim::OptimizerCloneableOptions<IvonOptions> {
  explicit IvonOptions(double lr = 0.1) : lr_(lr) {}
  /// Learning rate α ≥ 0 (per group).
  TORCH_ARG(double, lr);
  /// Effective sample size λ > 0, usually the training-set size (per group; required).
  TORCH_ARG(c10::optional<double>, ess);
  /// Initial Hessian estimate h0 > 0 (per group; default 1).
  TORCH_ARG(c10::optional<double>, hess_init);
  /// Momentum EMA factor β1 ∈ [0, 1] (per group; default 0.9).
  TORCH_ARG(c10::optional<double>, beta1);
  /// Hessian EMA factor β2 ∈ [0, 1] (per group; default 0.99999).
  TORCH_ARG(c10::optional<double>, beta2);
  /// Weight decay δ ≥ 0: prior precision per example (per group; default 1e-4).
  TORCH_ARG(c10::optional<double>, weight_decay);
  /// Elementwise clip c > 0 of the preconditioned step (per group; default +∞).
  TORCH_ARG(c10::optional<double>, clip_radius);
  /// Monte Carlo samples per step wanted from the training loop (≥ 1).
  TORCH_ARG(int64_t, mc_samples) = 1;
  TORCH_ARG(IvonHessian, hess_approx) = IvonHessian::kPrice;
  /// Divide the momentum by 1 − β1^t.
  TORCH_ARG(bool, debias) = true;
  /// Use α·(h0 + δ) as the step size, so that the first step is an SGD step of size α.
  TORCH_ARG(bool, rescale_lr) = true;
  /// Seed of the weight noise.
  TORCH_ARG(uint64_t, seed) = 0;

 public:
  double get_lr() const override { return lr(); }
  void set_lr(const double value) override { lr(value); }
};

/// The options of one param group after merging with the defaults.
struct IvonGroupOptions {
  double lr, ess, hess_init, beta1, beta2, weight_decay, clip_radius;
};

class Ivon : public MeanFieldOptimizer {
 public:
  Ivon(std::vector<::torch::optim::OptimizerParamGroup> param_groups, IvonOptions defaults);
  Ivon(std::vector<::at::Tensor> params, IvonOptions defaults);

  int training_samples() const override;
  /// The options in force for param group `group` (own fields, else the defaults, else built-in).
  IvonGroupOptions group_options(size_t group) const;
  const IvonOptions& options() const;

 protected:
  std::string name() const override { return "IVON"; }
  Statistic statistic() const override;
  uint64_t seed() const override { return options().seed(); }
  Precision precision(size_t group) const override;
  double initial_curvature(size_t group) const override;
  void validate() const override;
  void update(size_t group, size_t index, ::at::Tensor& param, Slot& slot, int64_t samples,
              bool fused) override;
};

}  // namespace blr::torch
