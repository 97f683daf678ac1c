// Beta distribution on (0, 1): q(x) ∝ x^{α−1} (1 − x)^{β−1}.
//
// λ = (α, β),  T(x) = (log x, log(1 − x)),  log h(x) = −log x − log(1 − x),
// A(λ) = log Γ(α) + log Γ(β) − log Γ(α + β),  μ = (ψ(α) − ψ(α + β), ψ(β) − ψ(α + β)).
// Valid λ: α > 0, β > 0; valid μ: e^{μ₁} + e^{μ₂} < 1 (μ ↦ λ is solved by Newton's method).
#pragma once

#include <cmath>
#include <limits>

#include "blr/core/error.hpp"
#include "blr/core/rng.hpp"
#include "blr/core/types.hpp"
#include "blr/family/family.hpp"
#include "blr/family/special.hpp"

namespace blr {

class Beta {
 public:
  using Sample = double;

  Beta() = default;
  Beta(double alpha, double beta) : alpha_(alpha), beta_(beta) {
    check(alpha > 0 && beta > 0 && std::isfinite(alpha) && std::isfinite(beta),
          fmt::format("Beta: both shapes must be positive and finite; got alpha = {}, beta = {}.",
                      alpha, beta));
  }
  double alpha() const { return alpha_; }
  double beta() const { return beta_; }
  double mean() const { return alpha_ / (alpha_ + beta_); }
  double variance() const {
    const double s = alpha_ + beta_;
    return alpha_ * beta_ / (s * s * (s + 1.0));
  }

  Index natural_size() const { return 2; }
  /// λ = (α, β).
  Vector natural() const { return Vector{{alpha_, beta_}}; }
  /// μ = (E log x, E log(1 − x)).
  Vector expectation() const {
    const double psi = digamma(alpha_ + beta_);
    return Vector{{digamma(alpha_) - psi, digamma(beta_) - psi}};
  }

  static bool natural_is_valid(const Vector& lambda) {
    return lambda.size() == 2 && lambda.allFinite() && (lambda.array() > 0).all();
  }
  static Beta from_natural(const Vector& lambda) {
    check_size("Beta", "the natural parameter (alpha, beta)", lambda, 2);
    return Beta(lambda[0], lambda[1]);
  }
  static Beta from_expectation(const Vector& mu) {
    check_size("Beta", "the expectation parameter (E log x, E log(1-x))", mu, 2);
    check(mu.allFinite() && std::exp(mu[0]) + std::exp(mu[1]) < 1.0,
          "Beta: the expectation parameter (E log x, E log(1-x)) needs exp(mu_1) + exp(mu_2) < 1.");
    const Vector a = dirichlet_from_expected_log(mu);
    return Beta(a[0], a[1]);
  }
  Beta with_natural(const Vector& lambda) const { return from_natural(lambda); }
  Beta with_expectation(const Vector& mu) const { return from_expectation(mu); }

  double log_partition() const {
    return std::lgamma(alpha_) + std::lgamma(beta_) - std::lgamma(alpha_ + beta_);
  }
  /// H = A − (α − 1) μ₁ − (β − 1) μ₂.
  double entropy() const {
    const Vector mu = expectation();
    return log_partition() - (alpha_ - 1.0) * mu[0] - (beta_ - 1.0) * mu[1];
  }
  double kl(const Beta& other) const {
    return bregman_kl(log_partition(), other.log_partition(), natural(), other.natural(),
                      expectation());
  }
  /// −∞ outside (0, 1).
  double log_density(double x) const {
    if (!(x > 0 && x < 1)) return -std::numeric_limits<double>::infinity();
    return (alpha_ - 1.0) * std::log(x) + (beta_ - 1.0) * std::log1p(-x) - log_partition();
  }
  Vector sufficient_statistic(double x) const { return Vector{{std::log(x), std::log1p(-x)}}; }
  double log_base_measure(double x) const { return -std::log(x) - std::log1p(-x); }
  /// x = G_α / (G_α + G_β) from two Gamma draws, formed in log space.
  double sample(Rng& rng) const {
    const double la = log_gamma_sample(rng, alpha_);
    const double lb = log_gamma_sample(rng, beta_);
    return sigmoid(la - lb);
  }

 private:
  double alpha_ = 1.0;
  double beta_ = 1.0;
};

}  // namespace blr
