// Gaussian with a fixed covariance, q(θ) = N(θ | m, S₀⁻¹) with S₀ = diag(s₀) held constant.
//
// Only λ⁽¹⁾ = S₀m is learned; the BLR then reduces to gradient descent (§1.3.1 of Khan & Rue 2023,
// with S₀ = I) or to preconditioned GD. Natural parameter λ = S₀m, expectation μ = m.
//
// As an exponential family in λ (S₀ fixed): T(x) = x, A(λ) = ½ λᵀS₀⁻¹λ = ½ mᵀS₀m,
// log h(x) = −½ xᵀS₀x + ½ log|S₀| − (d/2) log 2π, Fisher ∇²A = S₀⁻¹. The static
// `from_natural(λ)` / `from_expectation(μ)` take S₀ = I; `with_natural` keeps this S₀.
#pragma once

#include <cmath>
#include <numbers>

#include "blr/core/error.hpp"
#include "blr/core/rng.hpp"
#include "blr/core/types.hpp"
#include "blr/family/family.hpp"

namespace blr {

struct GaussianFixed {
  Vector mean;       ///< m
  Vector precision;  ///< s₀, fixed (each entry > 0)

  GaussianFixed() = default;
  GaussianFixed(Vector m, Vector s0) : mean(std::move(m)), precision(std::move(s0)) {
    check(mean.size() == precision.size(), "GaussianFixed: mean and precision differ in length.");
  }
  /// Unit covariance, N(m, I).
  explicit GaussianFixed(Vector m) : mean(std::move(m)), precision(Vector::Ones(mean.size())) {}
  Index dimension() const { return mean.size(); }
  Vector solve(const Vector& b) const { return b.cwiseQuotient(precision); }
  Vector variance() const { return precision.cwiseInverse(); }

  // ---- exponential-family API (family.hpp) ----------------------------------------------------
  using Sample = Vector;

  /// λ = S₀m (length d).
  Vector natural() const { return precision.cwiseProduct(mean); }
  /// μ = m.
  Vector expectation() const { return mean; }
  Index natural_size() const { return mean.size(); }

  static bool natural_is_valid(const Vector& lambda) { return lambda.allFinite(); }
  /// N(S₀⁻¹λ, S₀⁻¹) with the given S₀ (throws on non-finite λ or a non-positive S₀).
  static GaussianFixed from_natural(const Vector& lambda, const Vector& s0) {
    check_all_finite("GaussianFixed", "the natural parameter S0*m", lambda);
    check_size("GaussianFixed", "the fixed precision", s0, lambda.size());
    check((s0.array() > 0).all() && s0.allFinite(),
          "GaussianFixed: the fixed precision must be positive and finite.");
    return GaussianFixed(lambda.cwiseQuotient(s0), s0);
  }
  /// N(λ, I).
  static GaussianFixed from_natural(const Vector& lambda) {
    return from_natural(lambda, Vector::Ones(lambda.size()));
  }
  /// N(μ, I).
  static GaussianFixed from_expectation(const Vector& mu) {
    check_all_finite("GaussianFixed", "the expectation parameter m", mu);
    return GaussianFixed(mu);
  }
  GaussianFixed with_natural(const Vector& lambda) const {
    check_size("GaussianFixed", "the natural parameter", lambda, mean.size());
    return from_natural(lambda, precision);
  }
  GaussianFixed with_expectation(const Vector& mu) const {
    check_size("GaussianFixed", "the expectation parameter", mu, mean.size());
    check_all_finite("GaussianFixed", "the expectation parameter m", mu);
    return GaussianFixed(mu, precision);
  }

  /// A = ½ mᵀS₀m.
  double log_partition() const { return 0.5 * precision.dot(mean.cwiseAbs2()); }
  double entropy() const {
    return 0.5 * (static_cast<double>(mean.size()) * (1.0 + std::log(2.0 * std::numbers::pi)) -
                  precision.array().log().sum());
  }
  /// KL(this ‖ other) of two diagonal Gaussians (S₀ may differ).
  double kl(const GaussianFixed& other) const {
    check(other.mean.size() == mean.size(), "GaussianFixed::kl: the dimensions differ.");
    const auto r = other.precision.array();
    const auto q = precision.array();
    return 0.5 * (r / q + r * (other.mean - mean).array().square() - 1.0 + q.log() - r.log()).sum();
  }
  double log_density(const Vector& x) const {
    check(x.size() == mean.size(), "GaussianFixed::log_density: the point has the wrong length.");
    return -0.5 * precision.dot((x - mean).cwiseAbs2()) + 0.5 * precision.array().log().sum() -
           0.5 * static_cast<double>(mean.size()) * std::log(2.0 * std::numbers::pi);
  }
  Vector sufficient_statistic(const Vector& x) const { return x; }
  double log_base_measure(const Vector& x) const {
    return -0.5 * precision.dot(x.cwiseAbs2()) + 0.5 * precision.array().log().sum() -
           0.5 * static_cast<double>(mean.size()) * std::log(2.0 * std::numbers::pi);
  }
  /// θ = m + ε/√s₀ for a given standard-normal ε (reparameterisation).
  Vector sample_from_noise(const Vector& eps) const {
    check(eps.size() == mean.size(),
          "GaussianFixed::sample_from_noise: the noise has the wrong length.");
    return mean + eps.cwiseQuotient(precision.cwiseSqrt());
  }
  Vector sample(Rng& rng) const { return sample_from_noise(rng.normal_vector(mean.size())); }
  /// S₀·v.
  Vector precision_times(const Vector& v) const { return precision.cwiseProduct(v); }
};

}  // namespace blr
