// Gamma distribution on (0, ∞) with shape α and rate β: q(x) = β^α x^{α−1} e^{−βx} / Γ(α).
//
// λ = (α − 1, −β),  T(x) = (log x, x),  h = 1,  A(λ) = log Γ(α) − α log β,
// μ = (ψ(α) − log β, α/β). Valid λ: λ₁ > −1, λ₂ < 0; valid μ: μ₂ > 0 and μ₁ < log μ₂ (then
// α solves log α − ψ(α) = log μ₂ − μ₁ and β = α/μ₂).
#pragma once

#include <cmath>
#include <limits>

#include "blr/core/error.hpp"
#include "blr/core/rng.hpp"
#include "blr/core/types.hpp"
#include "blr/family/family.hpp"
#include "blr/family/special.hpp"

namespace blr {

class Gamma {
 public:
  using Sample = double;

  Gamma() = default;
  Gamma(double shape, double rate) : shape_(shape), rate_(rate) {
    check(shape > 0 && rate > 0 && std::isfinite(shape) && std::isfinite(rate),
          fmt::format("Gamma: the shape and the rate must be positive and finite; got shape = {}, "
                      "rate = {}.",
                      shape, rate));
  }
  double shape() const { return shape_; }
  double rate() const { return rate_; }
  double mean() const { return shape_ / rate_; }
  double variance() const { return shape_ / (rate_ * rate_); }

  Index natural_size() const { return 2; }
  /// λ = (α − 1, −β).
  Vector natural() const { return Vector{{shape_ - 1.0, -rate_}}; }
  /// μ = (E log x, E x) = (ψ(α) − log β, α/β).
  Vector expectation() const { return Vector{{digamma(shape_) - std::log(rate_), shape_ / rate_}}; }

  static bool natural_is_valid(const Vector& lambda) {
    return lambda.size() == 2 && lambda.allFinite() && lambda[0] > -1.0 && lambda[1] < 0.0;
  }
  static Gamma from_natural(const Vector& lambda) {
    check_size("Gamma", "the natural parameter (shape - 1, -rate)", lambda, 2);
    check(lambda.allFinite() && lambda[0] > -1.0 && lambda[1] < 0.0,
          fmt::format("Gamma: the natural parameter (shape - 1, -rate) needs lambda_1 > -1 and "
                      "lambda_2 < 0; got ({}, {}).",
                      lambda[0], lambda[1]));
    return Gamma(lambda[0] + 1.0, -lambda[1]);
  }
  static Gamma from_expectation(const Vector& mu) {
    check_size("Gamma", "the expectation parameter (E log x, E x)", mu, 2);
    check(mu.allFinite() && mu[1] > 0 && mu[0] < std::log(mu[1]),
          fmt::format("Gamma: the expectation parameter (E log x, E x) needs E x > 0 and "
                      "E log x < log E x; got ({}, {}).",
                      mu[0], mu[1]));
    const double shape = gamma_shape_from_log_gap(std::log(mu[1]) - mu[0]);
    return Gamma(shape, shape / mu[1]);
  }
  Gamma with_natural(const Vector& lambda) const { return from_natural(lambda); }
  Gamma with_expectation(const Vector& mu) const { return from_expectation(mu); }

  double log_partition() const { return std::lgamma(shape_) - shape_ * std::log(rate_); }
  /// H = α − log β + log Γ(α) + (1 − α) ψ(α).
  double entropy() const {
    return shape_ - std::log(rate_) + std::lgamma(shape_) + (1.0 - shape_) * digamma(shape_);
  }
  double kl(const Gamma& other) const {
    return bregman_kl(log_partition(), other.log_partition(), natural(), other.natural(),
                      expectation());
  }
  /// −∞ outside (0, ∞).
  double log_density(double x) const {
    if (!(x > 0) || !std::isfinite(x)) return -std::numeric_limits<double>::infinity();
    return (shape_ - 1.0) * std::log(x) - rate_ * x - log_partition();
  }
  Vector sufficient_statistic(double x) const { return Vector{{std::log(x), x}}; }
  double log_base_measure(double) const { return 0.0; }
  double sample(Rng& rng) const { return std::exp(log_gamma_sample(rng, shape_)) / rate_; }

 private:
  double shape_ = 1.0;
  double rate_ = 1.0;
};

}  // namespace blr
