// The posterior summary of a conjugate model (issue 31, item 2): one value that holds the
// posterior of `blr infer conjugate` and `blr.infer.conjugate` and answers what a statistician
// asks of it. Each model's posterior is one BLR step with ρ = 1 (conjugate.hpp); VMP and SVI give
// the mean-field Normal–Gamma q(μ)q(τ) (vmp.hpp).
//   Beta–Bernoulli         θ ~ Beta(a, b)
//   Gamma–Poisson          rate ~ Gamma(a, rate b)
//   Dirichlet–categorical  p_k ~ Beta(α_k, α₀ − α_k) marginally, α₀ = Σ α_k, with
//                          Cov = (α₀ diag α − ααᵀ) / (α₀²(α₀ + 1))
//   Normal–Gamma, exact    μ ~ t_{2α}(μ_N, β/(ακ)) and τ ~ Gamma(α, β) marginally, uncorrelated
//                          (E[μ | τ] = μ_N; Murphy 2007, eq. 110)
//   Normal–Gamma, VMP/SVI  q(μ) = N(m, v), q(τ) = Gamma(a, b), independent by construction
// Every marginal's interval is the exact equal-tailed one of its own law (intervals.hpp); the log
// evidence log p(y) = A(λ_N) − A(λ₀) + Σ log h(y_i) is exact, VMP/SVI report the ELBO instead.
#pragma once

#include <array>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "blr/core/types.hpp"
#include "blr/inference/glm_summary.hpp"
#include "blr/inference/intervals.hpp"
#include "blr/inference/vmp.hpp"

namespace blr::inference {

/// The exact marginal law of one posterior quantity, with its moments.
struct ParameterMarginal {
  enum class Law { beta, gamma, student_t, normal };
  std::string name;
  Law law = Law::normal;
  /// beta: (a, b); gamma: (shape, rate); student_t: (dof, location, scale); normal: (mean, sd).
  std::array<double, 3> parameters{};
  double mean = 0, sd = 0;
  Interval interval(double level) const;
};

/// What to fit: the likelihood's data, its prior and, for the Normal–Gamma model, the method.
struct ConjugateProblem {
  std::string likelihood;  ///< bernoulli, poisson, categorical or normal
  /// bernoulli: 0 or 1; poisson: counts; categorical: class indices 0..K−1; normal: reals.
  Vector y;
  std::vector<std::string> classes;  ///< categorical: the K class names (index order)
  /// The prior's hyperparameters (empty: the default, uniform or unit): bernoulli a,b;
  /// poisson shape,rate; categorical one concentration per class; normal μ₀,κ₀,α₀,β₀.
  std::vector<double> prior;
  std::string method = "exact";  ///< exact; normal also vmp or svi
  VmpOptions vmp;
  SviOptions svi;
};

class ConjugateSummary {
 public:
  const std::string& likelihood() const { return likelihood_; }
  const std::string& method() const { return method_; }
  Index observations() const { return observations_; }
  const std::vector<ParameterMarginal>& marginals() const { return marginals_; }
  std::vector<std::string> names() const;
  /// The correlation of the marginals where it is known (categorical and normal), else empty.
  const std::optional<Matrix>& correlation() const { return correlation_; }
  const std::optional<double>& log_evidence() const { return log_evidence_; }
  const std::optional<double>& elbo() const { return elbo_; }
  int iterations() const { return iterations_; }
  bool converged() const { return converged_; }
  /// The posterior's hyperparameters by name (a, b; shape, rate; alpha; mu, kappa, alpha, beta;
  /// mu_mean, mu_var, tau_shape, tau_rate).
  const nlohmann::json& posterior() const { return posterior_; }
  /// "Beta(5, 3)"-style: the posterior in words, for a report's first line.
  const std::string& description() const { return description_; }

  /// Each quantity's mean, sd and interval at `level` (distribution: the laws, comma-joined).
  CoefficientTable parameters(double level = 0.95) const;
  std::string table(double level = 0.95) const;
  /// method, likelihood, observations, names, level, mean, sd, lower, upper, posterior,
  /// log_evidence or elbo, iterations, converged, correlation, classes, note (SVI).
  nlohmann::json to_json(double level = 0.95) const;

 private:
  friend ConjugateSummary fit_conjugate(const ConjugateProblem& problem);
  std::string likelihood_, method_, description_;
  Index observations_ = 0;
  std::vector<ParameterMarginal> marginals_;
  std::optional<Matrix> correlation_;
  std::optional<double> log_evidence_, elbo_;
  int iterations_ = 1;
  bool converged_ = true;
  nlohmann::json posterior_ = nlohmann::json::object();
  std::vector<std::string> classes_;
};

/// The posterior of `problem`; throws a sentence naming the likelihood, the method or the prior
/// when they do not fit together. VMP's convergence is reported (converged()), not enforced: the
/// caller names its own option to raise; SVI runs a fixed count and never converges.
ConjugateSummary fit_conjugate(const ConjugateProblem& problem);

/// Sets the problem's options from `given` by key, as the registry's tables name them (`conjugate
/// vmp`: VMP's, `conjugate svi`: SVI's; exact takes none), and marks those keys taken (the caller
/// then refuses the rest: GivenOptions::require_taken).
void apply_options(ConjugateProblem& problem, const GivenOptions& given);

}  // namespace blr::inference
