// Diagonal Gaussian q(θ) = N(θ | m, diag(s)⁻¹).
//
// Natural parameters λ = (s⊙m, −s/2), expectation parameters μ = (m, m⊙m + 1/s) (Khan & Rue
// 2023, eq. 9 restricted to a diagonal precision). This is the family of RMSprop/Adam (§4.2),
// OGN/VOGN (§4.4) and IVON.
//
// Order of λ and μ: the d first-moment entries, then the d second-moment entries. T(x) = (x, x⊙x),
// A(λ) = Σ_i (½ s_i m_i² − ½ log s_i), log h = −(d/2) log 2π. Valid λ: the second half negative.
#pragma once

#include <cmath>
#include <numbers>

#include "blr/core/error.hpp"
#include "blr/core/rng.hpp"
#include "blr/core/types.hpp"
#include "blr/family/family.hpp"

namespace blr {

struct GaussianDiag {
  Vector mean;       ///< m
  Vector precision;  ///< s (each entry > 0)

  GaussianDiag() = default;
  GaussianDiag(Vector m, Vector s) : mean(std::move(m)), precision(std::move(s)) {
    check(mean.size() == precision.size(), "GaussianDiag: mean and precision differ in length.");
  }
  Index dimension() const { return mean.size(); }
  /// S⁻¹·b.
  Vector solve(const Vector& b) const { return b.cwiseQuotient(precision); }
  Vector variance() const { return precision.cwiseInverse(); }

  // ---- exponential-family API (family.hpp) ----------------------------------------------------
  using Sample = Vector;

  /// λ = (s⊙m, −s/2).
  Vector natural() const {
    Vector out(2 * mean.size());
    out << precision.cwiseProduct(mean), -0.5 * precision;
    return out;
  }
  /// μ = (m, m⊙m + 1/s).
  Vector expectation() const {
    Vector out(2 * mean.size());
    out << mean, mean.cwiseAbs2() + precision.cwiseInverse();
    return out;
  }
  Index natural_size() const { return 2 * mean.size(); }

  static bool natural_is_valid(const Vector& lambda) {
    if (lambda.size() % 2 != 0 || !lambda.allFinite()) return false;
    return (lambda.tail(lambda.size() / 2).array() < 0).all();
  }
  static GaussianDiag from_natural(const Vector& lambda) {
    check(lambda.size() % 2 == 0,
          "GaussianDiag: the natural parameter (s*m, -s/2) must have an even length.");
    check_all_finite("GaussianDiag", "the natural parameter (s*m, -s/2)", lambda);
    const Index d = lambda.size() / 2;
    for (Index i = 0; i < d; ++i) {
      check(lambda[d + i] < 0,
            fmt::format("GaussianDiag: the second half of the natural parameter (-s/2) must be "
                        "negative; entry {} is {}.",
                        d + i, lambda[d + i]));
    }
    const Vector s = -2.0 * lambda.tail(d);
    return GaussianDiag(lambda.head(d).cwiseQuotient(s), s);
  }
  static GaussianDiag from_expectation(const Vector& mu) {
    check(mu.size() % 2 == 0,
          "GaussianDiag: the expectation parameter (m, m*m + 1/s) must have an even length.");
    check_all_finite("GaussianDiag", "the expectation parameter (m, m*m + 1/s)", mu);
    const Index d = mu.size() / 2;
    const Vector var = mu.tail(d) - mu.head(d).cwiseAbs2();
    for (Index i = 0; i < d; ++i) {
      check(var[i] > 0, fmt::format("GaussianDiag: the expectation parameter needs E[x_i^2] > "
                                    "E[x_i]^2; entry {} gives a variance of {}.",
                                    i, var[i]));
    }
    return GaussianDiag(mu.head(d), var.cwiseInverse());
  }
  GaussianDiag with_natural(const Vector& lambda) const { return from_natural(lambda); }
  GaussianDiag with_expectation(const Vector& mu) const { return from_expectation(mu); }

  /// A = Σ ½ s m² − ½ log s.
  double log_partition() const {
    return 0.5 * (precision.dot(mean.cwiseAbs2()) - precision.array().log().sum());
  }
  double entropy() const {
    return 0.5 * (static_cast<double>(mean.size()) * (1.0 + std::log(2.0 * std::numbers::pi)) -
                  precision.array().log().sum());
  }
  double kl(const GaussianDiag& other) const {
    check(other.mean.size() == mean.size(), "GaussianDiag::kl: the dimensions differ.");
    const auto r = other.precision.array();
    const auto q = precision.array();
    return 0.5 * (r / q + r * (other.mean - mean).array().square() - 1.0 + q.log() - r.log()).sum();
  }
  double log_density(const Vector& x) const {
    check(x.size() == mean.size(), "GaussianDiag::log_density: the point has the wrong length.");
    return -0.5 * precision.dot((x - mean).cwiseAbs2()) + 0.5 * precision.array().log().sum() -
           0.5 * static_cast<double>(mean.size()) * std::log(2.0 * std::numbers::pi);
  }
  /// T(x) = (x, x⊙x).
  Vector sufficient_statistic(const Vector& x) const {
    Vector out(2 * x.size());
    out << x, x.cwiseAbs2();
    return out;
  }
  double log_base_measure(const Vector&) const {
    return -0.5 * static_cast<double>(mean.size()) * std::log(2.0 * std::numbers::pi);
  }
  /// θ = m + ε/√s for a given standard-normal ε (reparameterisation).
  Vector sample_from_noise(const Vector& eps) const {
    check(eps.size() == mean.size(),
          "GaussianDiag::sample_from_noise: the noise has the wrong length.");
    return mean + eps.cwiseQuotient(precision.cwiseSqrt());
  }
  Vector sample(Rng& rng) const { return sample_from_noise(rng.normal_vector(mean.size())); }
  /// S·v.
  Vector precision_times(const Vector& v) const { return precision.cwiseProduct(v); }
  /// S as a dense matrix.
  Matrix precision_matrix() const { return precision.asDiagonal(); }
  double log_determinant() const { return precision.array().log().sum(); }
};

}  // namespace blr
