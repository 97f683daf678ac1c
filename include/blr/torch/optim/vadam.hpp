// Vadam (Khan et al., ICML 2018, "Fast and scalable Bayesian deep learning by weight-perturbation
// in Adam"), as in the authors' reference optimizer.
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

#include <torch/arg.h>

#include "blr/torch/optim/mean_field.hpp"

namespace blr::torch {

/// Options of Vadam; "per group" fields may be set per param group (unset ones take the
/// defaults), the others are read from the optimizer's defaults.
struct VadamOptions : public ::torch::optim::OptimizerCloneableOptions<VadamOptions> {
  explicit VadamOptions(double lr = 1e-3) : lr_(lr) {}
  /// Learning rate α ≥ 0 (per group).
  TORCH_ARG(double, lr);
  /// Training-set size N > 0 (per group; required).
  TORCH_ARG(c10::optional<double>, ess);
  /// β1 ∈ [0, 1) (per group; default 0.9).
  TORCH_ARG(c10::optional<double>, beta1);
  /// β2 ∈ [0, 1) (per group; default 0.999).
  TORCH_ARG(c10::optional<double>, beta2);
  /// Prior precision λp > 0 (per group; default 1).
  TORCH_ARG(c10::optional<double>, prior_precision);
  /// Initial posterior precision ≥ λp (per group; default 1).
  TORCH_ARG(c10::optional<double>, prec_init);
  TORCH_ARG(int64_t, mc_samples) = 1;
  TORCH_ARG(uint64_t, seed) = 0;

 public:
  double get_lr() const override { return lr(); }
  void set_lr(const double value) override { lr(value); }
};

struct VadamGroupOptions {
  double lr, ess, beta1, beta2, prior_precision, prec_init;
};

class Vadam : public MeanFieldOptimizer {
 public:
  Vadam(std::vector<::torch::optim::OptimizerParamGroup> param_groups, VadamOptions defaults);
  Vadam(std::vector<::at::Tensor> params, VadamOptions defaults);

  int training_samples() const override;
  VadamGroupOptions group_options(size_t group) const;
  const VadamOptions& options() const;

 protected:
  std::string name() const override { return "Vadam"; }
  Statistic statistic() const override { return Statistic::kSquaredGradient; }
  uint64_t seed() const override { return options().seed(); }
  Precision precision(size_t group) const override;
  double initial_curvature(size_t group) const override;
  void validate() const override;
  void update(size_t group, size_t index, ::at::Tensor& param, Slot& slot, int64_t samples,
              bool fused) override;
};

}  // namespace blr::torch
