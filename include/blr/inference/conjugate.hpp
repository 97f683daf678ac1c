// Conjugate Bayes as one BLR step with ρ = 1 (Khan & Rue 2023, §5.1, eq. 54; Murphy, PML2
// §6.7.1.3).
//
// For a conjugate exponential-family model p(y_i | θ) ∝ exp⟨λ̃_i(y_i), T(θ)⟩, p(θ) ∝ exp⟨λ₀, T(θ)⟩,
// the BLR target is λ̂ = λ₀ + Σ_i λ̃_i and one step with ρ = 1,
//
//     λ ← natural_step_towards(λ, λ₀ + Σ_i λ̃_i, 1)          (eq. 54),
//
// returns the exact posterior from any starting λ. Online updating is the same step with the
// current posterior as the prior: λ_t ← natural_step_towards(λ_{t−1}, λ_{t−1} + λ̃_t, 1); after the
// last observation it equals the batch posterior. The log-evidence is
//     log p(y) = A(λ_N) − A(λ₀) + Σ_i log h(y_i).
//
// Each model below states its T(θ), λ₀ and λ̃_i:
//   BetaBernoulli         T = (log θ, log(1−θ)),                λ = (a−1, b−1),      λ̃ = (y, 1−y)
//   GammaPoisson          T = (log θ, θ),                       λ = (a−1, −b),        λ̃ = (x, −1)
//   DirichletCategorical  T = (log θ_k)_k,                      λ = α − 1,            λ̃ = e_y
//   NormalGamma           T = (τμ, −τμ²/2, −τ, log τ),          λ = (κμ₀, κ, β+κμ₀²/2, α−½),
//                                                               λ̃ = (y, 1, y²/2, ½)   (Murphy 2007)
//   BayesianLinearRegression: Gaussian weights, λ = GaussianFull's natural parameter
//                         (gaussian_natural.hpp); as (Sm, S) pairs λ₀ = (0, αI),
//                         λ̃_i = (β y_i x_i, β x_i x_iᵀ)
//                         (eq. 54's ridge example with noise precision β).
//   NormalGammaRegression: the noise precision τ unknown, (w, τ) Normal–Gamma,
//                         T = (τw, −½τwwᵀ, −½τ, ½ log τ), λ = (Λm, Λ, 2b + mᵀΛm, 2a − 2 + d),
//                         λ̃_i = (y_i x_i, x_i x_iᵀ, y_i², 1)  (below; the default of
//                         `blr infer linreg`, since it is exact and needs no known β).
// Evidence maximisation for linear regression is MacKay's fixed point (PRML eqs. 3.91–3.95); each
// of its iterations recomputes the posterior by the same ρ = 1 step.
#pragma once

#include <optional>
#include <vector>

#include "blr/core/error.hpp"
#include "blr/core/option_table.hpp"
#include "blr/core/types.hpp"
#include "blr/inference/intervals.hpp"
#include "blr/rule/natural_step.hpp"

namespace blr::inference {

/// Batch posterior: one BLR step with ρ = 1 towards λ₀ + Σ_i λ̃_i, started from `start`.
template <class Model, class Obs>
Vector conjugate_posterior(const Model& model, const std::vector<Obs>& data, const Vector& start) {
  Vector target = model.prior_natural();
  for (const auto& y : data) target += model.message(y);
  return natural_step_towards(start, target, 1.0);
}

/// Online posterior: one ρ = 1 step per observation, each posterior the next prior.
template <class Model, class Obs>
Vector conjugate_sequential(const Model& model, const std::vector<Obs>& data) {
  Vector lambda = model.prior_natural();
  for (const auto& y : data) lambda = natural_step_towards(lambda, lambda + model.message(y), 1.0);
  return lambda;
}

/// log p(y) = A(λ_N) − A(λ₀) + Σ log h(y_i).
template <class Model, class Obs>
double conjugate_log_evidence(const Model& model, const std::vector<Obs>& data,
                              const Vector& posterior) {
  double out = model.log_partition(posterior) - model.log_partition(model.prior_natural());
  for (const auto& y : data) out += model.log_base(y);
  return out;
}

/// Beta(a, b) prior on a Bernoulli probability; observations are 0 or 1.
struct BetaBernoulli {
  double a0 = 1.0, b0 = 1.0;
  Vector prior_natural() const;
  Vector message(int y) const;
  double log_partition(const Vector& lambda) const;  ///< ln B(a, b)
  double log_base(int) const { return 0.0; }
  static double a(const Vector& lambda) { return lambda[0] + 1.0; }
  static double b(const Vector& lambda) { return lambda[1] + 1.0; }
  static double mean(const Vector& lambda);
  static double variance(const Vector& lambda);
  static double mode(const Vector& lambda);
};

/// Gamma(a, rate b) prior on a Poisson rate; observations are counts.
struct GammaPoisson {
  double a0 = 1.0, b0 = 1.0;
  Vector prior_natural() const;
  Vector message(double x) const;
  double log_partition(const Vector& lambda) const;  ///< lnΓ(a) − a ln b
  double log_base(double x) const;                   ///< −ln x!
  static double a(const Vector& lambda) { return lambda[0] + 1.0; }
  static double b(const Vector& lambda) { return -lambda[1]; }
  static double mean(const Vector& lambda) { return a(lambda) / b(lambda); }
  static double variance(const Vector& lambda) { return a(lambda) / (b(lambda) * b(lambda)); }
  /// Posterior predictive P(x* = k): negative binomial with r = a, p = 1/(b + 1).
  static double predictive_log_pmf(const Vector& lambda, double k);
};

/// Dirichlet(α) prior on categorical probabilities; observations are class indices 0..K−1.
struct DirichletCategorical {
  Vector alpha0;
  Vector prior_natural() const;
  Vector message(int k) const;
  double log_partition(const Vector& lambda) const;  ///< Σ lnΓ(α_k) − lnΓ(Σα_k)
  double log_base(int) const { return 0.0; }
  static Vector alpha(const Vector& lambda) { return lambda.array() + 1.0; }
  static Vector mean(const Vector& lambda);
};

/// Normal–Gamma prior on (μ, τ) of Gaussian data (Murphy 2007):
/// τ ~ Gamma(α₀, rate β₀), μ | τ ~ N(μ₀, (κ₀τ)⁻¹).
struct NormalGamma {
  double mu0 = 0.0, kappa0 = 1.0, alpha0 = 1.0, beta0 = 1.0;
  Vector prior_natural() const;
  Vector message(double y) const;
  double log_partition(const Vector& lambda) const;
  double log_base(double) const;  ///< −½ log 2π
  /// Hyperparameters (μ, κ, α, β) of a natural parameter.
  struct Params {
    double mu, kappa, alpha, beta;
  };
  static Params params(const Vector& lambda);
  static Vector natural(const Params& p);
};

/// Gaussian-prior linear regression y = Φw + ε, ε ~ N(0, β⁻¹), w ~ N(0, α⁻¹I).
struct BayesianLinearRegression {
  double prior_precision = 1.0;  ///< α
  double noise_precision = 1.0;  ///< β
  /// Column 0's prior precision (an intercept) instead of α; empty: α for every column.
  std::optional<double> intercept_precision{};

  /// λ₀ of (Sm, S) = (0, αI) (α → the intercept's precision at (0, 0) when set).
  Vector prior_natural(Index d) const;
  /// Σ_i λ̃_i = (βΦᵀy, βΦᵀΦ).
  Vector data_message(const Matrix& phi, const Vector& y) const;
  /// One observation's message (β y x, β x xᵀ).
  Vector message(const Vector& x, double y) const;
  /// The posterior by one ρ = 1 step from `start` (default: the prior).
  Vector posterior(const Matrix& phi, const Vector& y) const;
  /// The posterior by N sequential ρ = 1 steps.
  Vector posterior_sequential(const Matrix& phi, const Vector& y) const;
  /// A(λ_N) − A(λ₀) + Σ log h_i with log h_i = ½ log(β/2π) − β y_i²/2.
  double log_evidence(const Matrix& phi, const Vector& y, const Vector& posterior) const;
};

/// Linear regression with the noise precision unknown, under its conjugate Normal–Gamma prior
/// (Murphy, PML1 §11.7.3; Gelman et al., BDA3 §14.8; O'Hagan & Forster, Kendall's 2B §11):
///     τ ~ Gamma(a₀, rate b₀),   w | τ ~ N(0, (τΛ₀)⁻¹),   y | w, τ ~ N(Φw, τ⁻¹I),
/// Λ₀ = diag(prior_precision): the prior precision of the weights in units of the noise precision
/// (the ridge penalty; with β known the same prior is Λ₀β, which `blr infer` used with β = 1).
/// a₀ = b₀ = 0 is Jeffreys' scale-invariant p(τ) ∝ 1/τ, improper but with a proper posterior for
/// N ≥ 1 rows; its evidence keeps the density 1/τ unnormalised, so it compares fits of the same y.
///
/// As a conjugate exponential family in (w, τ): T = (τw, −½τwwᵀ, −½τ, ½ log τ),
///     λ = (Λm, Λ, 2b + mᵀΛm, 2a − 2 + d),   λ̃_i = (y_i x_i, x_i x_iᵀ, y_i², 1),  log h_i = −½ log 2π,
///     A(λ) = ln Γ(a) − a ln b + (d/2) ln 2π − ½ ln|Λ|      (the Gamma terms are 0 for Jeffreys' prior),
/// so the posterior is one ρ = 1 step to λ₀ + Σ_i λ̃_i and log p(y) = A(λ_N) − A(λ₀) − (N/2) ln 2π:
///     Λ_N = Λ₀ + ΦᵀΦ,  m_N = Λ_N⁻¹Φᵀy,  a_N = a₀ + N/2,  b_N = b₀ + ½(yᵀy − m_NᵀΛ_N m_N).
/// Marginals: τ | y ~ Gamma(a_N, b_N); w | y ~ t_ν(m_N, S) with ν = 2a_N and S = (b_N/a_N) Λ_N⁻¹
/// (each w_j a Student t with scale √S_jj; covariance ν/(ν − 2)·S for ν > 2); a new response
/// y* | y ~ t_ν(x*ᵀm_N, (b_N/a_N)(1 + x*ᵀΛ_N⁻¹x*)). As Λ₀ → 0 with Jeffreys' prior, S_jj·ν/(ν − 2)
/// → RSS/(N − 2)·[(ΦᵀΦ)⁻¹]_jj: OLS's squared standard error times (N − p)/(N − 2).
struct NormalGammaRegression {
  Vector prior_precision;   ///< Λ₀'s diagonal (length d, positive), in units of τ
  double noise_shape = 0;   ///< a₀ (0 with noise_rate 0: Jeffreys' p(τ) ∝ 1/τ)
  double noise_rate = 0;    ///< b₀

  /// Throws a sentence naming the setting unless Λ₀ > 0 and (a₀, b₀) are both 0 or both positive.
  void validate() const;
  Index dimension() const { return prior_precision.size(); }
  /// λ₀, length d + d(d+1)/2 + 2.
  Vector prior_natural() const;
  /// One observation's message (y x, x xᵀ, y², 1).
  Vector message(const Vector& x, double y) const;
  /// Σ_i λ̃_i = (Φᵀy, ΦᵀΦ, yᵀy, N).
  Vector data_message(const Matrix& phi, const Vector& y) const;
  /// The posterior by one ρ = 1 step from the prior.
  Vector posterior(const Matrix& phi, const Vector& y) const;
  /// The posterior by N sequential ρ = 1 steps (each posterior the next prior).
  Vector posterior_sequential(const Matrix& phi, const Vector& y) const;
  /// A(λ); with `improper_gamma` the ln Γ(a) − a ln b term is left out (Jeffreys' prior, λ₀).
  double log_partition(const Vector& lambda, bool improper_gamma = false) const;
  /// log p(y) = A(λ_N) − A(λ₀) − (N/2) ln 2π.
  double log_evidence(const Matrix& phi, const Vector& y, const Vector& posterior) const;

  /// (m, Λ, a, b) of a natural parameter of dimension d.
  struct Params {
    Vector mean;
    Matrix precision;
    double shape = 0, rate = 0;
  };
  static Params params(const Vector& lambda, Index d);
};

/// What the Normal–Gamma posterior says, ready to report.
struct NormalGammaFit {
  Vector mean;         ///< m_N (location of the Student t of w)
  Matrix scale;        ///< S = (b_N/a_N) Λ_N⁻¹
  Matrix covariance;   ///< ν/(ν − 2)·S
  Matrix posterior_precision;  ///< Λ_N (in units of τ)
  double dof = 0;      ///< ν = 2a_N
  double noise_shape = 0, noise_rate = 0;  ///< a_N, b_N: τ | y ~ Gamma(a_N, b_N)
  double log_evidence = 0;
  /// E[τ | y] = a_N/b_N.
  double noise_precision_mean() const { return noise_shape / noise_rate; }
  /// The Student-t marginals of w: sd √(ν/(ν − 2) S_jj) and the equal-tailed intervals.
  Vector sd() const;
  std::vector<Interval> intervals(double level) const;
  /// The posterior predictive y* ~ t_ν(x*ᵀm_N, (b_N/a_N)(1 + x*ᵀΛ_N⁻¹x*)) at the rows of x:
  /// mean, sd, interval at `level`, and log p(y_i* | y) where responses are given.
  struct Predictive {
    Vector mean, scale, sd, lower, upper, log_density;
  };
  Predictive predict(const Matrix& x, const Vector& y, double level) const;
};

/// The posterior of `model` on (Φ, y), by NormalGammaRegression::posterior; needs ν = 2a_N > 2
/// (finite variances): with Jeffreys' prior, at least three rows.
NormalGammaFit fit_normal_gamma(const NormalGammaRegression& model, const Matrix& phi,
                                const Vector& y);

/// Predictive mean and variance 1/β + φᵀS⁻¹φ at the rows of `phi`.
struct LinearPredictive {
  Vector mean;
  Vector variance;
};
LinearPredictive linear_predictive(const Vector& posterior, const Matrix& phi,
                                   double noise_precision);

/// MacKay's evidence maximisation of (α, β) (PRML eqs. 3.91–3.95).
struct EvidenceOptions {
  double alpha = 1.0, beta = 1.0;  ///< starting values
  int max_iterations = 1000;
  double tolerance = 1e-12;  ///< relative change of α and β
  /// Column 0's fixed prior precision (an intercept), not learned: α is then the slopes' and
  /// γ = Σ_j (1 − p₀_j Σ_jj) over every column, α ← γ_slopes/‖m_slopes‖² (MacKay 1992, one
  /// hyperparameter per group). Empty: α for every column (PRML 3.91–3.92 by eigenvalues).
  std::optional<double> intercept_precision{};
  void validate() const;  ///< the table's ranges (and the cross-option checks)
  static const OptionTable<EvidenceOptions>& table();
};
struct EvidenceResult {
  double alpha = 0, beta = 0, gamma = 0;  ///< γ = effective number of parameters
  Vector posterior;                       ///< λ_N at the optimum
  Vector mean;
  Matrix covariance;
  double log_evidence = 0;
  int iterations = 0;
  bool converged = false;
};
EvidenceResult maximize_evidence(const Matrix& phi, const Vector& y,
                                 const EvidenceOptions& options);

}  // namespace blr::inference
