// Conjugate-computation variational inference (CVI): non-conjugate VI by the BLR
// (Khan & Rue 2023, §5.4, eqs. 58–60; Khan & Lin 2017).
//
//     λ ← (1 − ρ)λ + ρ (λ₀ + Σ_i λ̃_i(μ)),     λ̃_i(μ) = ∇_μ E_q[log p(y_i | x_iᵀw)]      (eq. 58)
//
// For a GLM site with a_i = x_iᵀw ~ N(x_iᵀm, v_i) under q, Bonnet's and Price's theorems give
// λ̃_i as a pair added to (Sm, S) (the family's λ, gaussian_natural.hpp) from two scalars,
//     ḡ_i = E[∂_a log p(y_i | a)],  h̄_i = E[∂²_a log p(y_i | a)]       (one-dimensional integrals),
//     λ̃_i = ( x_i (ḡ_i − h̄_i x_iᵀm),  −h̄_i x_i x_iᵀ ),
// so that λ₀ + Σ_i λ̃_i = (Ĥm − ĝ, Ĥ) with ĝ = E_q[∇ℓ̄], Ĥ = E_q[∇²ℓ̄], and each iteration is
//     λ ← natural_step_towards(λ, (Ĥm − ĝ, Ĥ), ρ).
// The integrals are exact in closed form (Poisson, Gaussian) or by Gauss–Hermite quadrature
// (logistic; quadrature.hpp), or estimated by Monte Carlo. Full family: Ĥ is d×d; diagonal
// (mean-field) family: only diag Ĥ, λ = (s⊙m, s). The fixed point is the Gaussian (resp.
// mean-field) ELBO optimum. ρ starts at `rho` and is halved while a step would lower the ELBO
// (deterministic expectations only); Monte Carlo runs use ρ_t = ρ/(1 + t/10)^0.6.
//
// Gaussian-process classification keeps the *site* form (eq. 60): each latent f_i has a scalar
// site (ν_i, τ_i) = (ḡ_i − h̄_i m_i, −h̄_i); the sites move by natural_step_towards(sites, targets,
// ρ) and the global natural parameter is their sum with the prior, λ = (ν, K⁻¹ + diag τ) (ρ = 1 on
// the global, which makes the iterates those of eq. 58). The moments use B = I + W^½KW^½,
// W = diag τ (Rasmussen & Williams 2006, Alg. 3.2), so K is never inverted.
#pragma once

#include <vector>

#include "blr/core/option_table.hpp"
#include "blr/core/types.hpp"
#include "blr/inference/glm.hpp"

namespace blr::inference {

enum class GaussianFamilyKind { full, diagonal };

struct CviOptions {
  GaussianFamilyKind family = GaussianFamilyKind::full;
  double rho = 1.0;
  int max_iterations = 1000;
  double tolerance = 1e-11;  ///< stop when max|Δλ| ≤ tolerance·max(1, max|λ|)
  int quadrature_nodes = 32;
  bool monte_carlo = false;  ///< estimate ḡ, h̄ by sampling a_i instead of quadrature
  int samples = 64;          ///< Monte Carlo draws per site and iteration
  std::uint64_t seed = 0;
  bool backtrack = true;  ///< halve ρ while the ELBO would fall (quadrature only)
  void validate() const;  ///< the table's ranges (and the cross-option checks)
  static const OptionTable<CviOptions>& table();
};

struct CviResult {
  Vector natural;  ///< full: GaussianFull's λ (gaussian_natural.hpp); diagonal: (s⊙m, s)
  Vector mean;
  Matrix covariance;  ///< diagonal family: a diagonal matrix
  double elbo = 0;
  int iterations = 0;
  bool converged = false;
  std::vector<double> elbos;  ///< after each iteration ([0] at the start)
};

/// CVI for a Bayesian GLM, started from the prior (or from `start`, a natural parameter of the
/// family).
CviResult cvi(const Glm& model, const CviOptions& options = {}, const Vector* start = nullptr);

/// A warm start for `cvi`: the Laplace approximation N(w*, S⁻¹) of the same model (glm.hpp's
/// `laplace`) as a natural parameter of the family, (Sw*, S) for the full family and
/// (diag(S)⊙w*, diag(S)) for the mean-field one. The fixed point does not depend on the start
/// (tests/inference/cvi_test.cpp: both starts meet the direct ELBO maximisation). From this one,
/// on 10⁵ rows and d = 51, CVI takes 6 iterations instead of 12 (docs/benchmarks.md); on Pima
/// (200 rows) it takes more (37 instead of 20), so the prior stays the default.
struct CviLaplaceStart {
  Vector natural;
  long laplace_iterations = 0;
};
CviLaplaceStart cvi_laplace_start(const Glm& model, GaussianFamilyKind family);

/// ELBO of q = N(m, Σ) for a GLM (Σ full or diagonal), with Gauss–Hermite expectations.
double glm_elbo(const Glm& model, const Vector& mean, const Matrix& covariance,
                const GaussHermite& quadrature);

// ---- Gaussian-process classification -----------------------------------------------------------

/// k(a, b) = σ² exp(−|a − b|² / (2ℓ²)) for all row pairs: Kernel{rbf, ℓ, σ²}.matrix (kernels.hpp).
Matrix rbf_kernel(const Matrix& a, const Matrix& b, double lengthscale, double variance);

struct GpcResult {
  Vector site_nu, site_tau;  ///< the sites (eq. 60)
  Vector mean, variance;     ///< latent marginals at the training inputs
  double elbo = 0;
  int iterations = 0;
  bool converged = false;
  std::vector<double> elbos;
};

/// CVI with a full Gaussian over the latent values f at the training inputs, prior N(0, K).
GpcResult gp_cvi(const Matrix& kernel, const Vector& y, Likelihood likelihood,
                 const CviOptions& options = {});

/// Latent predictive moments at new inputs: `cross` is K(train, new) (n×m), `self_diag` k(x*, x*).
void gp_predict_latent(const Matrix& kernel, const GpcResult& fit, const Matrix& cross,
                       const Vector& self_diag, Vector& mean, Vector& variance);

}  // namespace blr::inference
