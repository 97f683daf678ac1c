// A Kronecker-factored BLR optimizer: VOGN (Osawa et al. 2019; vogn.hpp) with the diagonal
// Gauss–Newton replaced, for Linear and Conv2d weights, by its K-FAC/KFC Kronecker factorisation —
// noisy K-FAC (Zhang, Sun, Duvenaud & Grosse, ICML 2018) in VOGN's units and step. Chosen over
// Aitchison's Kronecker filter because it is the Gaussian BLR of Khan & Rue (2023, §4) with a
// structured precision, so it keeps VOGN's options and reduces to VOGN (below), while the filter
// is a different (Kalman) recursion.
//
// Posterior per Linear/Conv2d weight W (out×in, a Conv2d's O×C×kh×kw viewed O×(C·kh·kw); its bias
// is a separate parameter): vec(W) ~ N(vec(M), (N·P)⁻¹) with M the parameter's value, N the
// training-set size (ess) and the precision per example, in the eigenbases A = Q_A diag(d_A) Q_Aᵀ
// and G = Q_G diag(d_G) Q_Gᵀ of the factors,
//
//   P = (Q_A ⊗ Q_G) diag(vec D) (Q_A ⊗ Q_G)ᵀ,   γ' = δ/N + γ  (prior precision δ, damping γ)
//   damping_split (default):  D_ij = (d_G,i + √γ'/π)(d_A,j + π√γ'),  π = √((tr A/in)/(tr G/out))
//        i.e. P = (A + π√γ' I) ⊗ (G + √γ'/π I), a matrix-normal posterior (Martens & Grosse 2015,
//        §6.3; Zhang et al. 2018, eq. 12: the prior and damping split between the factors);
//   exact:                    D_ij = d_G,i d_A,j + γ',   i.e. P = A ⊗ G + γ' I exactly.
//
// Sampling (training and predictive): W = M + Q_G (E ⊘ √(N·D)) Q_Aᵀ, E ~ N(0, I) out×in, whose
// covariance is exactly (N·P)⁻¹. With split damping D is an outer product, so the step and the
// sample use the precomputed (G + √γ'/π I)⁻¹, (A + π√γ' I)⁻¹ and their roots Q·diag(·)^½: two
// matrix products each instead of four. Step t, from the S samples of the step (gradients ĝ of the mean
// minibatch loss, and the factors Â, Ĝ of kronecker_factors.hpp, averaged over the samples):
//
//   u ← β₁u + (ĝ + (δ/N)·M)                          (heavy-ball momentum, as VOGN)
//   A ← (1 − w)A + wÂ,  G ← (1 − w)G + wĜ           (w = curvature_rate; A₀ = G₀ = √s₀·I)
//     only every `curvature_interval` steps (t = 1, 1 + T_c, ...): the steps between take a plain
//     backward and keep A, G and P (wants_curvature(); as K-FAC implementations amortise)
//   every `refresh` steps (t = 1, 1 + T, ...): Q_A, d_A, Q_G, d_G, π from A and G
//   M ← M − α·Q_G ((Q_Gᵀ U Q_A) ⊘ D) Q_Aᵀ           (= M − α P⁻¹u)
//
// Every other parameter (biases, norms, embeddings, weights used twice or on sequences, grouped or
// 1-d convolutions) takes VOGN's diagonal step exactly: P ← (1 − w)P + w(D̂ + δ/N + γ) with the
// per-example squared gradients D̂, M ← M − α u/P, samples M + ε/√(N·P). Before its first step every
// parameter is isotropic, P₀ = s₀ + δ/N + γ (VOGN's start).
//
// Reduction: a bias-free 1×1 Linear layer, one example per batch, w = 1 and exact damping gives
// A·G = (a·g)² = D̂, so every step equals VOGN's (tests/torch/optim/kfac_test.cpp). The curvature is the
// empirical Fisher (per-example gradients at the true labels, as VOGN's), not the sampled-label
// Fisher of K-FAC.
//
// Noise: a generator seeded by (seed, draw counter) per sample, on the CPU, so runs resume
// bit-for-bit. Saved state: step and draw counters, learning rates, and per parameter its kind,
// u, P or (A, G and the eigen-decompositions in force, π).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "blr/algorithms/ogn_vogn.hpp"
#include "blr/torch/optim/gaussian_posterior.hpp"
#include "blr/torch/curvature/kronecker_factors.hpp"
#include "blr/torch/optim/options.hpp"
#include "blr/torch/optim/variational.hpp"

namespace blr::torch {

/// VOGN's options (lr, ess, prior_precision, damping, beta1, curvature_rate, hess_init,
/// mc_samples), the refresh interval T, the damping split and the noise seed.
struct KfacOptions : OptimizerOptionsFor<KfacOptions>, ::blr::VognOptions {
  int64_t refresh = 10;        ///< T: steps between eigendecompositions of A and G
  int64_t curvature_interval = 1;  ///< T_c: steps between curvature updates (A, G, P)
  bool damping_split = true;   ///< π-split damping (matrix normal), else exact A ⊗ G + γ'I
  uint64_t seed = 0;           ///< seed of the weight noise

  KfacOptions() { damping = 1e-3; }
  static const OptionTable<KfacOptions>& table();
  void validate() const { validate_options(*this); }
};

class Kfac : public VariationalOptimizer, public KroneckerCurvatureInput, public GaussianPosterior {
 public:
  using Options = KfacOptions;

  Kfac(std::vector<::torch::optim::OptimizerParamGroup> param_groups, Options defaults);
  Kfac(std::vector<::at::Tensor> params, Options defaults);

  const Options& options() const { return static_cast<const Options&>(defaults()); }
  const Options& options(size_t group) const;
  std::string name() const { return "K-FAC"; }
  int training_samples() const override { return static_cast<int>(options().mc_samples); }

  void sample_parameters(bool train) override;
  /// Test hook: samples with the given standard-normal E (one tensor per parameter, its shape).
  void sample_parameters(bool train, const std::vector<::at::Tensor>& standard_normal);
  void sample_given_noise(bool train, const std::vector<::at::Tensor>& standard_normal) override {
    sample_parameters(train, standard_normal);
  }
  void restore_parameters() override;
  void discard_sample() override;
  bool sampled() const override { return sampled_; }
  /// The diagonal of (N·P)⁻¹ per parameter.
  std::vector<::at::Tensor> posterior_variance() override;
  /// GaussianPosterior: the exact diagonal of each Kronecker block's inverse (and σ² elsewhere).
  std::vector<::at::Tensor> marginal_variance() override { return posterior_variance(); }
  std::string posterior_name() const override { return "K-FAC posterior"; }
  /// The exact Σ of each parameter for the linearised predictive: 1/(N·D) in the eigenbasis of a
  /// Kronecker-factored weight (its correlations kept), σ² elsewhere. Refused while sampled.
  std::vector<CovarianceBlock> covariance_blocks() override;
  bool kronecker() const override { return true; }
  void add_curvature(const std::vector<ParameterCurvature>& curvature) override;
  /// True on the steps t = 1, 1 + T_c, 1 + 2T_c, ... (curvature_interval T_c).
  bool wants_curvature() const override;

  ::at::Tensor step(LossClosure closure = nullptr) override;

  int64_t step_count() const { return step_; }
  /// Parameter `index` (parameter order) is Kronecker-factored (after its first curvature).
  bool kronecker(size_t index) const;
  /// A and G of a Kronecker-factored parameter.
  KroneckerFactors factors(size_t index) const;
  /// The dense posterior covariance (N·P)⁻¹ of the row-major flattened parameter (small layers:
  /// tests and docs).
  ::at::Tensor posterior_covariance(size_t index) const;

  void save(::torch::serialize::OutputArchive& archive) const override;
  void load(::torch::serialize::InputArchive& archive) override;

 private:
  enum class Kind : int64_t { kIsotropic = 0, kDiagonal = 1, kKronecker = 2 };
  struct Slot {
    Kind kind = Kind::kIsotropic;
    ::at::Tensor mean, grad_sum, average;
    ::at::Tensor precision;                       ///< P (isotropic, diagonal)
    ::at::Tensor input_factor, output_factor;     ///< A, G
    ::at::Tensor input_basis, input_eigen, output_basis, output_eigen;  ///< in force
    double pi = 1.0;
    /// Split damping: the factors' inverses and roots Q·diag(1/(d + c))^½ for the γ' in force
    /// (derived from the eigen-decompositions, rebuilt after a refresh or a change of γ').
    ::at::Tensor input_inverse, output_inverse, input_root, output_root;
    double cached_gamma = -1.0;
    ::at::Tensor input_sum, output_sum, diagonal_sum;  ///< Σ over the step's samples
  };
  void validate() const;
  void ensure_state();
  size_t parameter_count() const;
  Slot& slot_at(size_t index);
  const Slot& slot_at(size_t index) const;
  /// D (out×in) of a Kronecker-factored slot for the options of its group.
  ::at::Tensor eigen_precision(const Slot& s, const Options& o) const;
  /// Makes the split-damping inverses and roots of a Kronecker-factored slot current.
  static void prepare_split(Slot& s, const Options& o);
  void sample(bool train, const std::vector<::at::Tensor>* standard_normal);
  void restore(bool collect);

  std::vector<std::vector<Slot>> slots_;
  std::vector<ParameterCurvature> pending_curvature_;  ///< the current sample's, until restored
  int64_t step_ = 0;
  uint64_t draws_ = 0;
  int64_t samples_ = 0, curvature_samples_ = 0;
  bool sampled_ = false, train_sample_ = false, curvature_given_ = false;
};

}  // namespace blr::torch
