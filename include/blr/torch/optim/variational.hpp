// Variational optimizers for LibTorch: the common interface of the BLR optimizers whose model
// parameters hold the mean μ of a diagonal Gaussian posterior q(θ) = N(μ, diag(σ²)).
//
// A training step draws S Monte Carlo samples θ_s = μ + σ⊙ε_s (ε_s ~ N(0, I)), computes the
// gradient of the mean minibatch loss at each, and updates μ and the curvature from their
// averages (Khan & Rue 2023, §4; IVON: Shen et al. 2024; VOGN: Osawa et al. 2019; Vadam: Khan et
// al. 2018):
//
//   for s = 1..training_samples(opt):
//     { SampledParameters sample(opt, /*train=*/true);   // θ ← μ + σ⊙ε
//       opt.zero_grad(); loss = f(model(x), y); loss.backward();
//       if (opt.needs_squared_gradients()) opt.add_squared_gradients(...); }  // θ ← μ, collect
//   opt.step();
//
// Prediction with the posterior: sample with train = false, forward, restore (nothing collected).
#pragma once

#include <torch/optim/optimizer.h>

#include <exception>
#include <vector>

namespace blr::torch {

/// Base of optimizers whose parameters are the mean μ of a Gaussian posterior q = N(μ, diag(σ²)).
class VariationalOptimizer : public ::torch::optim::Optimizer {
 public:
  using ::torch::optim::Optimizer::Optimizer;

  /// θ ← μ + σ⊙ε in every parameter (μ kept aside). `train`: gradients computed while sampled are
  /// collected as one Monte Carlo sample for the next step().
  virtual void sample_parameters(bool train) = 0;
  /// Restores μ; after a train sample, reads p.grad (and squared gradients if given) into the
  /// accumulators. (The mean-field optimizers with one Monte Carlo sample per step may instead
  /// remember p.grad and read it in step(), as torch optimizers do: see mean_field.hpp.)
  virtual void restore_parameters() = 0;
  /// σ² per parameter (same shapes as the parameters, same order as param_groups flattened).
  virtual std::vector<::torch::Tensor> posterior_variance() = 0;
  /// VOGN/OGN need per-example squared gradients (mean over the minibatch of the squared
  /// gradient of each example's loss), one tensor per parameter in parameter order, given inside
  /// a train sample after backward() and before restore_parameters().
  virtual bool needs_squared_gradients() const { return false; }
  virtual void add_squared_gradients(const std::vector<::torch::Tensor>& squared) { (void)squared; }

  /// Number of Monte Carlo training samples this optimizer wants per step (its `mc_samples`).
  virtual int training_samples() const { return 1; }
  /// Restores μ without collecting the current sample (a failed forward/backward must not count).
  /// Used by SampledParameters when an exception escapes; by default the same as
  /// restore_parameters().
  virtual void discard_sample() { restore_parameters(); }
  /// True between sample_parameters() and restore_parameters().
  virtual bool sampled() const = 0;
  /// False for optimizers that use training samples but hold no posterior (SAM: its second
  /// sample is the ascent point): the trainer then computes no posterior predictive.
  virtual bool has_posterior() const { return true; }
};

/// RAII guard: samples on construction, restores on destruction — also when an exception escapes
/// (then the sample is discarded, not collected).
class SampledParameters {
 public:
  SampledParameters(VariationalOptimizer& optimizer, bool train);
  ~SampledParameters();
  SampledParameters(const SampledParameters&) = delete;
  SampledParameters& operator=(const SampledParameters&) = delete;

 private:
  VariationalOptimizer& optimizer_;
  int uncaught_ = 0;
};

}  // namespace blr::torch
