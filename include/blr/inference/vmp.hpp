// Variational message passing and stochastic variational inference as BLR steps
// (Khan & Rue 2023, §5.3; Winn & Bishop 2005; Hoffman et al. 2013; Bishop PRML §10.1.3, §10.2).
//
// VMP: q factorises over nodes; each node's natural parameter takes one BLR step with ρ = 1
// towards its target — the prior's natural parameter plus the expected messages of its
// children/co-parents under the current q of the other nodes:
//     λ_node ← natural_step_towards(λ_node, λ₀ + Σ_i E_{q_rest}[λ̃_i], 1).
// Each such step maximises the ELBO over that node, so the ELBO never decreases (tested).
// SVI: local nodes (the assignments z_i of a minibatch) take ρ = 1 steps, the global nodes step
// towards the minibatch target λ₀ + (N/M) Σ_{i∈batch} E[λ̃_i] with ρ_t = (t + τ)^(−κ) < 1.
//
// Normal–Gamma (mean-field q(μ)q(τ); τ ~ Gamma(a₀, rate b₀), μ | τ ~ N(μ₀, (κ₀τ)⁻¹),
// x_n ~ N(μ, τ⁻¹)):
//     q(μ) = N(m, s⁻¹), λ_μ = (s m, s):            target E[τ]·(κ₀μ₀ + Σ x_n, κ₀ + N)
//     q(τ) = Gamma(a, b), λ_τ = (a − 1, −b):        target (a₀ − 1 + (N+1)/2,
//                                                        −b₀ − ½κ₀E[(μ−μ₀)²] − ½Σ E[(x_n−μ)²])
// Bayesian Gaussian mixture (Dirichlet(α₀) weights, Normal–Wishart(m₀, β₀, W₀, ν₀) components):
//     q(z_i): λ_i = (E log π_k + ½E log|Λ_k| − (D/2) log 2π − ½E[(x_i−μ_k)ᵀΛ_k(x_i−μ_k)])_k
//     q(π) = Dir(α):   λ_π = α,          target α₀ + Σ_i r_i
//     q(μ_k, Λ_k) = NW in the linear coordinates η_k = (β, βm, W⁻¹ + βmmᵀ, ν) (affine in the
//     natural parameters), target η₀ + Σ_i r_ik (1, x_i, x_i x_iᵀ, 1).
// The ELBO is PRML eqs. 10.70–10.77.
#pragma once

#include <vector>

#include "blr/core/rng.hpp"
#include "blr/core/option_table.hpp"
#include "blr/core/types.hpp"

namespace blr::inference {

// ---- Normal–Gamma ---------------------------------------------------------------------------

struct NormalGammaPrior {
  double mu0 = 0.0, kappa0 = 1.0, a0 = 1.0, b0 = 1.0;
  void validate() const;
};

/// Mean-field posterior q(μ) q(τ).
struct NormalGammaMeanField {
  Vector mu_natural;   ///< (s m, s)
  Vector tau_natural;  ///< (a − 1, −b)
  double mean() const { return mu_natural[0] / mu_natural[1]; }
  double mean_variance() const { return 1.0 / mu_natural[1]; }
  double shape() const { return tau_natural[0] + 1.0; }
  double rate() const { return -tau_natural[1]; }
};

struct VmpOptions {
  int max_iterations = 1000;
  double tolerance = 1e-10;  ///< stop when no natural parameter moves by more than this (relative)
  void validate() const;  ///< the table's ranges (and the cross-option checks)
  static const OptionTable<VmpOptions>& table();
};

struct SviOptions {
  int batch_size = 10;
  int iterations = 2000;
  double delay = 1.0;   ///< τ in ρ_t = (t + τ)^(−κ)
  double forget = 0.7;  ///< κ ∈ (0.5, 1]
  std::uint64_t seed = 0;
  void validate() const;  ///< the table's ranges (and the cross-option checks)
  static const OptionTable<SviOptions>& table();
  double rho(long t) const;
};

struct NormalGammaResult {
  NormalGammaMeanField q;
  double elbo = 0;
  int iterations = 0;
  bool converged = false;
  std::vector<double> elbos;  ///< after every node update ([0] at the start)
};

double normal_gamma_elbo(const NormalGammaPrior& prior, const Vector& x,
                         const NormalGammaMeanField& q);
/// VMP from q(μ) = prior mean with unit precision, q(τ) = prior.
NormalGammaResult normal_gamma_vmp(const NormalGammaPrior& prior, const Vector& x,
                                   const VmpOptions& options = {});
/// SVI on minibatches (both nodes global), drawn by MinibatchSampler (blr/core/minibatch.hpp)
/// from Rng(options.seed).
NormalGammaResult normal_gamma_svi(const NormalGammaPrior& prior, const Vector& x,
                                   const SviOptions& options);

// ---- Bayesian Gaussian mixture ---------------------------------------------------------------

struct BayesGmmPrior {
  double alpha0 = -1.0;  ///< symmetric Dirichlet concentration; ≤ 0: 1/K
  Vector m0;             ///< empty: the data mean
  double beta0 = 1.0;
  Matrix w0;          ///< empty: (ν₀ · data covariance)⁻¹, so that E[Λ] = covariance⁻¹
  double nu0 = -1.0;  ///< ≤ 0: D (the data dimension)
  /// Fills empty fields from the data and K (sklearn's BayesianGaussianMixture defaults:
  /// α₀ = 1/K, m₀ = data mean, β₀ = 1, ν₀ = D, W₀⁻¹ = ν₀·data covariance).
  BayesGmmPrior resolved(const Matrix& x, int components) const;
  void validate(Index d) const;
};

struct BayesGmmPosterior {
  Vector alpha;             ///< q(π) = Dir(α)
  std::vector<Vector> eta;  ///< per component (β, βm, vec(W⁻¹ + βmmᵀ), ν)
  Index dimension() const;
  Index components() const { return alpha.size(); }
  double beta(Index k) const;
  double nu(Index k) const;
  Vector mean(Index k) const;  ///< m_k
  Matrix w(Index k) const;     ///< W_k
  /// Posterior-mean summaries: E[π], m_k, E[Λ_k]⁻¹ = (ν_k W_k)⁻¹.
  Vector expected_weights() const;
  Matrix expected_covariance(Index k) const;
};

struct BayesGmmResult {
  BayesGmmPosterior q;
  Matrix responsibilities;  ///< N×K (VMP: last sweep)
  double elbo = 0;
  int iterations = 0;
  bool converged = false;
  std::vector<double> elbos;  ///< VMP: after every node update; SVI: every `elbo_every` steps
};

/// Starts from hard k-means++ responsibilities (seeded) turned into a global update. SVI: step t
/// (from 0) draws its minibatch by MinibatchSampler from Rng(options.seed + 1) (Rng(options.seed)
/// seeds k-means++), takes the local ρ = 1 step for its rows and the global step with ρ_t.
BayesGmmResult bayes_gmm_vmp(const Matrix& x, int components, const BayesGmmPrior& prior,
                             const VmpOptions& options = {}, std::uint64_t seed = 0);
BayesGmmResult bayes_gmm_svi(const Matrix& x, int components, const BayesGmmPrior& prior,
                             const SviOptions& options, int elbo_every = 0);
/// The local ρ = 1 step: q(z_i) for every row given the global q (N×K responsibilities).
Matrix bayes_gmm_responsibilities(const Matrix& x, const BayesGmmPosterior& q);
/// The ELBO (PRML 10.70–10.77) of q(z) q(π) q(μ, Λ) with q(z) given by `responsibilities`.
double bayes_gmm_elbo(const Matrix& x, const BayesGmmPrior& prior, const BayesGmmPosterior& q,
                      const Matrix& responsibilities);

}  // namespace blr::inference
