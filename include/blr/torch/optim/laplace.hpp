// The post-hoc Laplace posterior of a trained network (MacKay 1992; Ritter et al. 2018; Daxberger
// et al., "Laplace Redux", NeurIPS 2021 — what laplace-torch is used for), diagonal structure:
//
//   q(θ) = N(θ*, diag(σ²)),   σ_j² = 1 / (N·Ĝ_j + δ)   on the chosen subset of the weights,
//
// θ* the trained weights (the MAP or any minimum), Ĝ_j = (1/N) Σ_i [curvature of example i]_jj the
// per-example mean of the diagonal generalised Gauss–Newton diag(J_iᵀ Λ_i J_i) or of the empirical
// Fisher (∇ℓ_i)² (blr/torch/posterior/laplace_fit.hpp computes both), N the training-set size (`ess`) and δ
// the prior precision of N(0, δ⁻¹ I) (`blr laplace` chooses it by the Laplace marginal likelihood).
// Weights outside the subset (all but the last layer with `subset last_layer`) stay at θ* (σ = 0).
//
// Kronecker structure (`structure kron`; Ritter, Botev & Barber 2018; Daxberger et al. 2021 §2):
// each Linear/Conv2d weight W (out×in) of the subset has the precision N·(G ⊗ A) + δI on row-major
// vec(W) (= N·(A ⊗ G) + δI on column-stacked vec), A and G the training-set means of the K-FAC
// factors (kronecker_factors.hpp); with A = U_A diag(a) U_Aᵀ, G = U_G diag(g) U_Gᵀ its eigenvalues
// are D = N g aᵀ + δ, and draws, marginal variances and covariance are those of
// kronecker_gaussian.hpp. The other parameters of the subset (biases, norms) keep the diagonal.
//
// Predictive (`predictive`): mc, the Monte Carlo average over K draws (predictive.hpp), or probit,
// the linearised predictive with the multiclass probit approximation (laplace_predictive.hpp).
//
// Saved state, format 2: `blr/laplace_format` = 2, param{j}/curvature (diagonal) or
// param{j}/input_factor and param{j}/output_factor (A, G); format 1 (no format key, diagonal only)
// still loads. The eigendecompositions are recomputed on load.
//
// It is a VariationalOptimizer so that everything that predicts with a posterior — the predictive,
// `blr eval`, checkpoints — takes it unchanged: sample_parameters() sets θ = θ* + σ⊙ε, restore
// brings θ* back. It does not train: step() is refused with a sentence (a posterior fitted after
// training is not an update rule), and the registry lists it apart from the optimizers that train.
#pragma once

#include <ATen/core/Generator.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "blr/torch/optim/gaussian_posterior.hpp"
#include "blr/torch/optim/kronecker_gaussian.hpp"
#include "blr/torch/optim/options.hpp"
#include "blr/torch/optim/variational.hpp"

namespace blr::torch {

enum class LaplaceSubset { kAll, kLastLayer };
enum class LaplaceCurvature { kGaussNewton, kEmpiricalFisher };
enum class LaplaceStructure { kDiagonal, kKronecker };
enum class LaplacePredictive { kMonteCarlo, kProbit };

struct LaplacePosteriorOptions : ::torch::optim::OptimizerCloneableOptions<LaplacePosteriorOptions> {
  double prior_precision = 1.0;  ///< δ
  double ess = 0.0;              ///< N (default: the training-set size)
  LaplaceSubset subset = LaplaceSubset::kAll;
  LaplaceCurvature curvature = LaplaceCurvature::kGaussNewton;
  LaplaceStructure structure = LaplaceStructure::kDiagonal;
  LaplacePredictive predictive = LaplacePredictive::kMonteCarlo;
  uint64_t seed = 0;  ///< seed of the posterior samples

  static const OptionTable<LaplacePosteriorOptions>& table();
  void validate() const { validate_options(*this); }
  /// A posterior has no learning rate; LibTorch's param groups ask for one (schedules read 0).
  double get_lr() const override { return 0.0; }
  void set_lr(double) override {}
};

/// The posterior's choices as `blr laplace` and `blr.Laplace` take them: each (key, spelling) read
/// through the table, an earlier spelling (mc, last_layer) as its current one, and written back
/// in the current spelling for the reports. A bad choice is refused in the table's sentence.
struct LaplaceChoices {
  LaplacePosteriorOptions options;
  OptionValues spelled;  ///< each given key with its current spelling, in the order given
  const std::string& spelling(const std::string& key) const;
};
LaplaceChoices read_laplace_choices(const OptionValues& given);

class LaplacePosterior : public VariationalOptimizer, public GaussianPosterior {
 public:
  using Options = LaplacePosteriorOptions;

  LaplacePosterior(std::vector<::torch::optim::OptimizerParamGroup> param_groups, Options defaults);
  LaplacePosterior(std::vector<::at::Tensor> params, Options defaults);
  const Options& options() const { return static_cast<const Options&>(defaults()); }
  std::string name() const { return "Laplace"; }

  /// Sets the curvature (means over the N training examples, parameter order) at the current
  /// parameters, which become θ*: per parameter the Kronecker factors (A, G) where `factors[j]` is
  /// defined (structure kron only; at least one), else the diagonal Ĝ `curvature[j]`; both
  /// undefined: the parameter is outside the subset. `factors` empty: all diagonal.
  void set_curvature(const std::vector<::at::Tensor>& curvature,
                     const std::vector<KroneckerFactors>& factors = {});
  /// Sets the prior precision δ (every param group's and the defaults'), and restarts the draws
  /// at the seed, so that a search over δ (laplace_prior_search.hpp) compares them on the same ε.
  /// Refused while the parameters hold a sample, and unless every posterior variance stays finite.
  void set_prior_precision(double delta);
  /// Ĝ per parameter (undefined outside the subset and for Kronecker-factored weights).
  const std::vector<::at::Tensor>& curvature() const { return curvature_; }
  /// A, G per parameter (undefined unless Kronecker-factored).
  const std::vector<KroneckerFactors>& factors() const { return factors_; }
  /// U_A, a, U_G, g per parameter (undefined unless Kronecker-factored).
  const std::vector<KroneckerEigen>& eigen() const { return eigen_; }
  /// D = N g aᵀ + δ (out×in) of Kronecker-factored parameter j.
  ::at::Tensor kronecker_precision(size_t j) const;
  /// The dense posterior covariance of row-major flattened parameter j (small layers: tests).
  ::at::Tensor posterior_covariance(size_t j);
  bool fitted() const { return fitted_; }

  void sample_parameters(bool train) override;
  /// Test hook: θ = θ* + σ⊙ε with the given standard-normal draws (one per parameter).
  void sample_parameters(bool train, const std::vector<::at::Tensor>& noise);
  void sample_given_noise(bool train, const std::vector<::at::Tensor>& standard_normal) override {
    sample_parameters(train, standard_normal);
  }
  void restore_parameters() override;
  bool sampled() const override { return sampled_; }
  /// σ² = 1/(N Ĝ + δ) on the subset (Kronecker: the diagonal of the inverse), 0 elsewhere.
  std::vector<::at::Tensor> posterior_variance() override;
  /// GaussianPosterior: the variances above; ready once fitted.
  std::vector<::at::Tensor> marginal_variance() override { return posterior_variance(); }
  std::string posterior_name() const override {
    return options().structure == LaplaceStructure::kKronecker ? "Kronecker Laplace posterior"
                                                               : "Laplace posterior";
  }
  bool posterior_ready() const override { return fitted_; }
  bool kronecker() const override { return options().structure == LaplaceStructure::kKronecker; }
  /// Σ on the subset: 1/D in the eigenbasis of each Kronecker-factored weight, σ² = 1/(N Ĝ + δ)
  /// of each diagonal one; nothing outside it. Refused before the fit and while sampled.
  std::vector<CovarianceBlock> covariance_blocks() override;
  bool linearised_predictive() const override {
    return options().predictive == LaplacePredictive::kProbit;
  }
  /// Refused: a post-hoc posterior does not train.
  ::at::Tensor step(LossClosure closure = nullptr) override;

  void save(::torch::serialize::OutputArchive& archive) const override;
  void load(::torch::serialize::InputArchive& archive) override;

 private:
  std::vector<::at::Tensor*> parameters();
  void sample(const std::vector<::at::Tensor>* noise);

  std::vector<::at::Tensor> curvature_;  // per parameter, undefined outside the subset
  std::vector<KroneckerFactors> factors_;  // per parameter, defined for Kronecker-factored ones
  std::vector<KroneckerEigen> eigen_;
  std::vector<::at::Tensor> mode_;       // θ* while sampled
  ::at::Generator generator_;
  bool fitted_ = false;
  bool sampled_ = false;
};

struct OptimizerContext;

/// A Laplace posterior over `params` from option values by its table's keys, with the context's
/// defaults (ess from the training-set size, the seed): what the registry's "laplace" entry
/// builds, typed, for the post-hoc pipeline that fits it (posthoc_laplace.hpp).
std::unique_ptr<LaplacePosterior> make_laplace_posterior(std::vector<::at::Tensor> params,
                                                         const OptionValues& options,
                                                         const OptimizerContext& context);

}  // namespace blr::torch
