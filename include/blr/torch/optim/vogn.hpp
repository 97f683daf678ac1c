// VOGN and OGN, the (variational) online Gauss–Newton methods (Khan et al. 2018; Osawa et al.,
// NeurIPS 2019, "Practical deep learning with Bayesian principles"), in the paper-level form.
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
// OGN is the same without weight noise: the gradients and D are taken at μ (θ = μ).
// Not modelled: torchsso's KL weighting τ (τ = 1 here), its KL warm-up, and its first-step
// special case (s starts at hess_init and is always averaged).
#pragma once

#include <torch/arg.h>

#include "blr/torch/optim/mean_field.hpp"

namespace blr::torch {

/// Options of VOGN/OGN; "per group" fields may be set per param group (unset ones take the
/// defaults), the others are read from the optimizer's defaults.
struct VognOptions : public ::torch::optim::OptimizerCloneableOptions<VognOptions> {
  explicit VognOptions(double lr = 1e-3) : lr_(lr) {}
  /// Learning rate α ≥ 0 (per group).
  TORCH_ARG(double, lr);
  /// Training-set size N > 0 (per group; required).
  TORCH_ARG(c10::optional<double>, ess);
  /// Prior precision δ > 0 = 1/prior variance (per group; default 1).
  TORCH_ARG(c10::optional<double>, prior_precision);
  /// Damping γ ≥ 0 added to the curvature (per group; default 0).
  TORCH_ARG(c10::optional<double>, damping);
  /// Heavy-ball momentum β1 ∈ [0, 1) (per group; default 0.9).
  TORCH_ARG(c10::optional<double>, beta1);
  /// Weight w ∈ (0, 1] of the new squared-gradient statistic in s (per group; default 0.01).
  TORCH_ARG(c10::optional<double>, curvature_rate);
  /// Initial curvature s0 ≥ 0 (per group; default 0.01).
  TORCH_ARG(c10::optional<double>, hess_init);
  /// Monte Carlo samples per step (VOGN; OGN always uses 1).
  TORCH_ARG(int64_t, mc_samples) = 1;
  TORCH_ARG(uint64_t, seed) = 0;

 public:
  double get_lr() const override { return lr(); }
  void set_lr(const double value) override { lr(value); }
};

struct VognGroupOptions {
  double lr, ess, prior_precision, damping, beta1, curvature_rate, hess_init;
};

class Vogn : public MeanFieldOptimizer {
 public:
  Vogn(std::vector<::torch::optim::OptimizerParamGroup> param_groups, VognOptions defaults);
  Vogn(std::vector<::at::Tensor> params, VognOptions defaults);

  int training_samples() const override;
  VognGroupOptions group_options(size_t group) const;
  const VognOptions& options() const;

 protected:
  std::string name() const override { return "VOGN"; }
  Statistic statistic() const override { return Statistic::kExternalSquared; }
  uint64_t seed() const override { return options().seed(); }
  Precision precision(size_t group) const override;
  double initial_curvature(size_t group) const override;
  void validate() const override;
  void update(size_t group, size_t index, ::at::Tensor& param, Slot& slot, int64_t samples,
              bool fused) override;
};

/// OGN: VOGN without weight noise (gradients and squared gradients at the mean).
class Ogn : public Vogn {
 public:
  using Vogn::Vogn;
  int training_samples() const override { return 1; }

 protected:
  std::string name() const override { return "OGN"; }
  bool perturbs() const override { return false; }
};

}  // namespace blr::torch
