// The post-hoc Laplace posterior of a trained network (MacKay 1992; Ritter et al. 2018; Daxberger
// et al., "Laplace Redux", NeurIPS 2021 — what laplace-torch is used for), diagonal structure:
//
//   q(θ) = N(θ*, diag(σ²)),   σ_j² = 1 / (N·Ĝ_j + δ)   on the chosen subset of the weights,
//
// θ* the trained weights (the MAP or any minimum), Ĝ_j = (1/N) Σ_i [curvature of example i]_jj the
// per-example mean of the diagonal generalised Gauss–Newton diag(J_iᵀ Λ_i J_i) or of the empirical
// Fisher (∇ℓ_i)² (blr/torch/laplace_fit.hpp computes both), N the training-set size (`ess`) and δ
// the prior precision of N(0, δ⁻¹ I) (`blr laplace` chooses it by the Laplace marginal likelihood).
// Weights outside the subset (all but the last layer with `subset last_layer`) stay at θ* (σ = 0).
//
// It is a VariationalOptimizer so that everything that predicts with a posterior — the predictive,
// `blr eval`, checkpoints — takes it unchanged: sample_parameters() sets θ = θ* + σ⊙ε, restore
// brings θ* back. It does not train: step() is refused with a sentence (a posterior fitted after
// training is not an update rule), and the registry lists it apart from the optimizers that train.
#pragma once

#include <ATen/core/Generator.h>

#include <cstdint>
#include <string>
#include <vector>

#include "blr/torch/optim/options.hpp"
#include "blr/torch/optim/variational.hpp"

namespace blr::torch {

enum class LaplaceSubset { kAll, kLastLayer };
enum class LaplaceCurvature { kGaussNewton, kEmpiricalFisher };

struct LaplacePosteriorOptions : ::torch::optim::OptimizerCloneableOptions<LaplacePosteriorOptions> {
  double prior_precision = 1.0;  ///< δ
  double ess = 0.0;              ///< N (default: the training-set size)
  LaplaceSubset subset = LaplaceSubset::kAll;
  LaplaceCurvature curvature = LaplaceCurvature::kGaussNewton;
  uint64_t seed = 0;  ///< seed of the posterior samples

  static const OptionTable<LaplacePosteriorOptions>& table();
  void validate() const { validate_options(*this); }
  /// A posterior has no learning rate; LibTorch's param groups ask for one (schedules read 0).
  double get_lr() const override { return 0.0; }
  void set_lr(double) override {}
};

class LaplacePosterior : public VariationalOptimizer {
 public:
  using Options = LaplacePosteriorOptions;

  LaplacePosterior(std::vector<::torch::optim::OptimizerParamGroup> param_groups, Options defaults);
  LaplacePosterior(std::vector<::at::Tensor> params, Options defaults);
  const Options& options() const { return static_cast<const Options&>(defaults()); }
  std::string name() const { return "Laplace"; }

  /// Sets the curvature Ĝ (mean over the N training examples, one tensor per parameter in
  /// parameter order; an undefined tensor: the parameter is outside the subset) at the current
  /// parameters, which become θ*.
  void set_curvature(const std::vector<::at::Tensor>& curvature);
  /// Ĝ per parameter (undefined outside the subset).
  const std::vector<::at::Tensor>& curvature() const { return curvature_; }
  bool fitted() const { return fitted_; }

  void sample_parameters(bool train) override;
  /// Test hook: θ = θ* + σ⊙ε with the given standard-normal draws (one per parameter).
  void sample_parameters(bool train, const std::vector<::at::Tensor>& noise);
  void restore_parameters() override;
  bool sampled() const override { return sampled_; }
  /// σ² = 1/(N Ĝ + δ) on the subset, 0 elsewhere.
  std::vector<::at::Tensor> posterior_variance() override;
  /// Refused: a post-hoc posterior does not train.
  ::at::Tensor step(LossClosure closure = nullptr) override;

  void save(::torch::serialize::OutputArchive& archive) const override;
  void load(::torch::serialize::InputArchive& archive) override;

 private:
  std::vector<::at::Tensor*> parameters();
  void sample(const std::vector<::at::Tensor>* noise);

  std::vector<::at::Tensor> curvature_;  // per parameter, undefined outside the subset
  std::vector<::at::Tensor> mode_;       // θ* while sampled
  ::at::Generator generator_;
  bool fitted_ = false;
  bool sampled_ = false;
};

}  // namespace blr::torch
