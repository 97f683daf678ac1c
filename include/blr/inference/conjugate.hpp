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
// Evidence maximisation for linear regression is MacKay's fixed point (PRML eqs. 3.91–3.95); each
// of its iterations recomputes the posterior by the same ρ = 1 step.
#pragma once

#include <vector>

#include "blr/core/error.hpp"
#include "blr/core/types.hpp"
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

  /// λ₀ of (Sm, S) = (0, αI), length d + d(d+1)/2.
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
  void validate() const;
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
