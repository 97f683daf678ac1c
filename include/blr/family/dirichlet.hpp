// Dirichlet distribution on the probability simplex of K ≥ 2 components:
// q(x) ∝ Π_k x_k^{α_k − 1}, density with respect to Lebesgue measure on (x_1, …, x_{K−1}).
//
// λ = α (length K),  T(x) = (log x_1, …, log x_K),  log h(x) = −Σ_k log x_k,
// A(λ) = Σ_k log Γ(α_k) − log Γ(α₀) with α₀ = Σ_k α_k,  μ_k = ψ(α_k) − ψ(α₀).
// Valid λ: all entries positive; valid μ: Σ_k e^{μ_k} < 1 (μ ↦ λ is solved by Newton's method).
#pragma once

#include <cmath>
#include <limits>

#include "blr/core/error.hpp"
#include "blr/core/rng.hpp"
#include "blr/core/types.hpp"
#include "blr/family/family.hpp"
#include "blr/family/special.hpp"

namespace blr {

class Dirichlet {
 public:
  using Sample = Vector;  ///< a point of the simplex (K entries summing to 1)

  Dirichlet() = default;
  explicit Dirichlet(Vector concentration) : alpha_(std::move(concentration)) {
    check(alpha_.size() >= 2, "Dirichlet: there must be at least two components.");
    for (Index k = 0; k < alpha_.size(); ++k) {
      check(alpha_[k] > 0 && std::isfinite(alpha_[k]),
            fmt::format("Dirichlet: concentrations must be positive and finite; entry {} is {}.", k,
                        alpha_[k]));
    }
  }
  const Vector& concentration() const { return alpha_; }
  Index components() const { return alpha_.size(); }
  Vector mean() const { return alpha_ / alpha_.sum(); }

  Index natural_size() const { return alpha_.size(); }
  /// λ = α.
  Vector natural() const { return alpha_; }
  /// μ = E[log x] = ψ(α) − ψ(α₀).
  Vector expectation() const {
    const double psi0 = digamma(alpha_.sum());
    return alpha_.unaryExpr([psi0](double a) { return digamma(a) - psi0; });
  }

  static bool natural_is_valid(const Vector& lambda) {
    return lambda.size() >= 2 && lambda.allFinite() && (lambda.array() > 0).all();
  }
  static Dirichlet from_natural(const Vector& lambda) { return Dirichlet(lambda); }
  static Dirichlet from_expectation(const Vector& mu) {
    return Dirichlet(dirichlet_from_expected_log(mu));
  }
  Dirichlet with_natural(const Vector& lambda) const { return from_natural(lambda); }
  Dirichlet with_expectation(const Vector& mu) const { return from_expectation(mu); }

  double log_partition() const {
    double a = -std::lgamma(alpha_.sum());
    for (Index k = 0; k < alpha_.size(); ++k) a += std::lgamma(alpha_[k]);
    return a;
  }
  /// H = A − ⟨α − 1, μ⟩.
  double entropy() const {
    return log_partition() - (alpha_.array() - 1.0).matrix().dot(expectation());
  }
  double kl(const Dirichlet& other) const {
    check(other.components() == components(), "Dirichlet::kl: the numbers of components differ.");
    return bregman_kl(log_partition(), other.log_partition(), alpha_, other.alpha_, expectation());
  }
  /// −∞ off the open simplex (entries positive, summing to 1 within 1e-9·K).
  double log_density(const Vector& x) const {
    check(x.size() == components(), "Dirichlet::log_density: the point has the wrong length.");
    if (!((x.array() > 0).all() && std::abs(x.sum() - 1.0) <= 1e-9 * static_cast<double>(x.size())))
      return -std::numeric_limits<double>::infinity();
    return (alpha_.array() - 1.0).matrix().dot(x.array().log().matrix()) - log_partition();
  }
  Vector sufficient_statistic(const Vector& x) const { return x.array().log().matrix(); }
  double log_base_measure(const Vector& x) const { return -x.array().log().sum(); }
  /// x_k = G_k / Σ_j G_j with G_k ~ Gamma(α_k, 1), normalised in log space.
  Vector sample(Rng& rng) const {
    Vector logs(components());
    for (Index k = 0; k < components(); ++k) logs[k] = log_gamma_sample(rng, alpha_[k]);
    return (logs.array() - log_sum_exp(logs)).exp().matrix();
  }

 private:
  Vector alpha_;
};

}  // namespace blr
