// EM for Gaussian mixtures as coordinate-wise BLR with ρ = 1 (Khan & Rue 2023, §5.2, eqs. 55–56).
//
// Candidate q(z, θ) = Π_i q(z_i) · δ(θ) (point masses on θ = (π, μ_k, Σ_k) by the delta method).
// Loss ℓ̄(z, θ) = −log p(x, z | θ).
//
//   E-step (BLR on q(z_i), ρ = 1): the natural parameter of the categorical q(z_i) (log-odds,
//   stored as the K unnormalised log-probabilities) steps to its target
//       λ̂_i = (log π_k + log N(x_i | μ_k, Σ_k))_k,        λ_i ← natural_step_towards(λ_i, λ̂_i, 1).
//   M-step (BLR on θ, ρ = 1, delta method): the expected complete-data statistics are the target
//   natural parameter of the conjugate "posterior" of each block under a flat prior,
//       component k:  λ̂_k = Σ_i r_ik (1, x_i, vec x_i x_iᵀ)     (diagonal: (1, x_i, x_i²)),
//       weights:      λ̂_π = Σ_i r_i                              (Dirichlet with α = 1),
//   and θ_{t+1} = ∇A*(λ̂) is the mode of that block: N_k = λ_k[0], μ_k = λ_k[x]/N_k,
//   Σ_k = λ_k[xx]/N_k − μ_kμ_kᵀ (+ reg·I), π_k = N_k / N.
// The test proves the iterates equal to textbook EM written plainly, and the log-likelihoods of the
// Old Faithful oracle (research/peers.md §4(d) D1, D2).
// Initialisation: k-means++ seeding (Arthur & Vassilvitskii 2007) with a seeded Rng, then Lloyd
// iterations; weights, means and covariances from the resulting clusters.
// Stopping: after step t, with ℓ_t the log-likelihood of θ_t and N the number of points, EM has
// converged when |ℓ_t − ℓ_{t−1}| / N < tolerance (the change of the mean log-likelihood per point,
// scikit-learn's `tol` rule on the same quantity) and, unless parameter_tolerance is 0, no weight,
// mean or covariance entry moved by more than parameter_tolerance relative to its block's largest
// entry. scikit-learn tests the change of ℓ(θ_{t−1}) − ℓ(θ_{t−2}) after its step t, so from the same
// θ_0 it stops one step later than this rule with parameter_tolerance = 0. `fixed_iterations` > 0
// runs exactly that many steps (converged then says whether the rule holds after the last).
#pragma once

#include <vector>

#include "blr/core/rng.hpp"
#include "blr/core/option_table.hpp"
#include "blr/core/types.hpp"

namespace blr::inference {

enum class CovarianceType { full, diagonal };

struct GaussianMixture {
  Vector weights;                   ///< π (K)
  Matrix means;                     ///< K×D, row k = μ_k
  std::vector<Matrix> covariances;  ///< K of D×D (diagonal type: diagonal matrices)
  CovarianceType type = CovarianceType::full;

  Index components() const { return weights.size(); }
  Index dimension() const { return means.cols(); }
  void validate() const;
  /// log π_k + log N(x_i | μ_k, Σ_k): the E-step target, N×K.
  Matrix log_joint(const Matrix& x) const;
  /// Σ_i log Σ_k π_k N(x_i | μ_k, Σ_k).
  double log_likelihood(const Matrix& x) const;
};

/// Row-wise log-sum-exp of an N×K matrix.
Vector log_sum_exp_rows(const Matrix& a);

struct EmOptions {
  int components = 2;
  CovarianceType covariance = CovarianceType::full;
  int max_iterations = 1000;
  double tolerance = 1e-10;  ///< stop when the mean log-likelihood per point changes by less
  double parameter_tolerance = 1e-9;  ///< … and no parameter moves more (relative); 0: not tested
  int fixed_iterations = 0;           ///< > 0: exactly this many steps, no stopping rule
  double reg_covar = 1e-6;            ///< added to covariance diagonals in the M-step
  std::uint64_t seed = 0;             ///< k-means++ seeding
  int kmeans_iterations = 20;
  void validate() const;  ///< the table's ranges (and the cross-option checks)
  static const OptionTable<EmOptions>& table();
};

struct EmResult {
  GaussianMixture mixture;
  GaussianMixture initial;              ///< θ_0
  Matrix responsibilities;              ///< N×K at the last E-step
  std::vector<double> log_likelihoods;  ///< [0] at the initial θ, [t] after t steps
  double log_likelihood = 0;
  int iterations = 0;
  bool converged = false;
};

/// k-means++ seeding and Lloyd iterations, turned into a mixture.
GaussianMixture kmeans_plus_plus_init(const Matrix& x, int components, CovarianceType type,
                                      Rng& rng, int lloyd_iterations = 20, double reg_covar = 1e-6);
/// One coordinate-wise BLR step (E then M) from θ; returns the new θ and the responsibilities.
GaussianMixture em_step(const Matrix& x, const GaussianMixture& theta, double reg_covar,
                        Matrix* responsibilities = nullptr);
/// EM from a given mixture.
EmResult em(const Matrix& x, const GaussianMixture& init, const EmOptions& options);
/// EM from a k-means++ initialisation.
EmResult em(const Matrix& x, const EmOptions& options);

}  // namespace blr::inference
