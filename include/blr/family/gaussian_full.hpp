// Full Gaussian q(θ) = N(θ | m, S⁻¹) with the precision held by its Cholesky factor.
//
// Natural parameters λ = (Sm, −S/2), expectation parameters μ = (m, S⁻¹ + mmᵀ) (Khan & Rue 2023,
// eq. 9). The factor makes solves O(d²) and Gauss–Newton steps rank-one updates (eq. 45).
//
// As a minimal exponential family (the symmetric S counted once), of length d + d(d+1)/2:
//   λ = (Sm,  −½ S_ii for i = 0..d−1,  −S_ij for i > j),
//   T(x) = (x,  x_i²,  x_i x_j),        μ = (m,  Σ_ii + m_i²,  Σ_ij + m_i m_j),   Σ = S⁻¹,
// where the strictly-lower pairs (i > j) run column by column: (1,0), (2,0), …, (d−1,0), (2,1), ….
// ⟨λ, T(x)⟩ = mᵀSx − ½ xᵀSx, A(λ) = ½ mᵀSm − ½ log|S|, log h = −(d/2) log 2π.
// Valid λ: the S it encodes is positive definite. Samples θ = m + L⁻ᵀε with S = LLᵀ.
#pragma once

#include <Eigen/Cholesky>
#include <cmath>
#include <numbers>

#include "blr/core/cholesky.hpp"
#include "blr/core/error.hpp"
#include "blr/core/rng.hpp"
#include "blr/core/types.hpp"
#include "blr/family/family.hpp"

namespace blr {

struct GaussianFull {
  Vector mean;               ///< m
  CholeskyFactor precision;  ///< S = L·Lᵀ

  GaussianFull() = default;
  GaussianFull(Vector m, const Matrix& s)
      : mean(std::move(m)), precision(CholeskyFactor::from_matrix(s)) {
    check(mean.size() == precision.dimension(), "GaussianFull: mean and precision differ in size.");
  }
  GaussianFull(Vector m, CholeskyFactor s) : mean(std::move(m)), precision(std::move(s)) {
    check(mean.size() == precision.dimension(), "GaussianFull: mean and precision differ in size.");
  }
  Index dimension() const { return mean.size(); }
  Vector solve(const Vector& b) const { return precision.solve(b); }
  Matrix covariance() const { return precision.inverse(); }
  Vector variance() const { return covariance().diagonal(); }

  // ---- exponential-family API (family.hpp) ----------------------------------------------------
  using Sample = Vector;

  /// Length of the minimal λ for dimension d: d + d(d+1)/2.
  static Index natural_size_for(Index d) { return d + d * (d + 1) / 2; }
  /// The d with natural_size_for(d) == n, or −1 when there is none.
  static Index dimension_for_natural_size(Index n) {
    const Index d = static_cast<Index>(std::lround((-3.0 + std::sqrt(9.0 + 8.0 * n)) / 2.0));
    return d >= 0 && natural_size_for(d) == n ? d : -1;
  }
  /// Packs (v, M) as (v, a·M_ii, b·M_ij for i > j), M symmetric: (a, b) = (−½, −1) gives λ from
  /// (Sm, S), and (1, 1) gives μ from (m, E[xxᵀ]) and T(x) from (x, xxᵀ).
  static Vector pack(const Vector& v, const Matrix& m, double diagonal_factor,
                     double offdiagonal_factor) {
    const Index d = v.size();
    Vector out(natural_size_for(d));
    out.head(d) = v;
    out.segment(d, d) = diagonal_factor * m.diagonal();
    Index k = 2 * d;
    for (Index j = 0; j < d; ++j)
      for (Index i = j + 1; i < d; ++i) out[k++] = offdiagonal_factor * m(i, j);
    return out;
  }
  /// Inverse of pack(): the symmetric matrix from the second and third blocks.
  static Matrix unpack_matrix(const Vector& packed, Index d, double diagonal_factor,
                              double offdiagonal_factor) {
    Matrix m(d, d);
    m.diagonal() = packed.segment(d, d) / diagonal_factor;
    Index k = 2 * d;
    for (Index j = 0; j < d; ++j)
      for (Index i = j + 1; i < d; ++i) m(i, j) = m(j, i) = packed[k++] / offdiagonal_factor;
    return m;
  }

  /// λ = (Sm, −½ S_ii, −S_ij (i > j)).
  Vector natural() const { return natural_from(precision_times(mean), precision.matrix()); }
  /// λ of the pair (Sm, S) without factorising S, which need not be positive definite: the
  /// inference code's messages λ̃ (λ₀ + Σ_i λ̃_i is a λ) and targets (inference/gaussian_natural.hpp).
  static Vector natural_from(const Vector& precision_times_mean, const Matrix& precision) {
    return pack(precision_times_mean, precision, -0.5, -1.0);
  }
  /// The S that λ encodes (symmetric; not checked for definiteness). Sm is λ.head(d).
  static Matrix precision_from_natural(const Vector& lambda) {
    const Index d = dimension_for_natural_size(lambda.size());
    check(d >= 0, fmt::format("GaussianFull: a minimal natural parameter has length d + d(d+1)/2; "
                              "{} is no such length.",
                              lambda.size()));
    return unpack_matrix(lambda, d, -0.5, -1.0);
  }
  /// μ = (m, Σ_ii + m_i², Σ_ij + m_i m_j (i > j)).
  Vector expectation() const {
    const Matrix second = covariance() + mean * mean.transpose();
    return pack(mean, second, 1.0, 1.0);
  }
  Index natural_size() const { return natural_size_for(mean.size()); }

  static bool natural_is_valid(const Vector& lambda) {
    const Index d = dimension_for_natural_size(lambda.size());
    if (d < 0 || !lambda.allFinite()) return false;
    Eigen::LLT<Matrix> llt(unpack_matrix(lambda, d, -0.5, -1.0));
    return llt.info() == Eigen::Success && llt.matrixLLT().diagonal().minCoeff() > 0;
  }
  static GaussianFull from_natural(const Vector& lambda) {
    const Index d = dimension_for_natural_size(lambda.size());
    check(d >= 0, fmt::format("GaussianFull: a minimal natural parameter has length d + d(d+1)/2; "
                              "{} is no such length.",
                              lambda.size()));
    check_all_finite("GaussianFull", "the natural parameter", lambda);
    const Matrix s = unpack_matrix(lambda, d, -0.5, -1.0);
    Eigen::LLT<Matrix> llt(s);
    check(llt.info() == Eigen::Success && llt.matrixLLT().diagonal().minCoeff() > 0,
          "GaussianFull: the natural parameter encodes a precision matrix S that is not positive "
          "definite.");
    return GaussianFull(llt.solve(lambda.head(d)), CholeskyFactor::from_lower(llt.matrixL()));
  }
  static GaussianFull from_expectation(const Vector& mu) {
    const Index d = dimension_for_natural_size(mu.size());
    check(d >= 0, fmt::format("GaussianFull: a minimal expectation parameter has length "
                              "d + d(d+1)/2; {} is no such length.",
                              mu.size()));
    check_all_finite("GaussianFull", "the expectation parameter", mu);
    const Vector m = mu.head(d);
    const Matrix cov = unpack_matrix(mu, d, 1.0, 1.0) - m * m.transpose();
    Eigen::LLT<Matrix> llt(cov);
    check(llt.info() == Eigen::Success && llt.matrixLLT().diagonal().minCoeff() > 0,
          "GaussianFull: the expectation parameter gives a covariance E[xx^T] - mm^T that is not "
          "positive definite.");
    Matrix s = llt.solve(Matrix(Matrix::Identity(d, d)));
    s = 0.5 * (s + s.transpose()).eval();
    return GaussianFull(m, s);
  }
  GaussianFull with_natural(const Vector& lambda) const { return from_natural(lambda); }
  GaussianFull with_expectation(const Vector& mu) const { return from_expectation(mu); }

  /// A = ½ mᵀSm − ½ log|S|.
  double log_partition() const {
    return 0.5 * (precision.lower().transpose() * mean).squaredNorm() -
           0.5 * precision.log_determinant();
  }
  double entropy() const {
    return 0.5 * (static_cast<double>(mean.size()) * (1.0 + std::log(2.0 * std::numbers::pi)) -
                  precision.log_determinant());
  }
  /// KL(this ‖ other) = ½[tr(S_o Σ) + (m_o − m)ᵀS_o(m_o − m) − d + log|S| − log|S_o|].
  double kl(const GaussianFull& other) const {
    check(other.mean.size() == mean.size(), "GaussianFull::kl: the dimensions differ.");
    // tr(S_o Σ) = ‖L⁻¹ L_o‖²_F with S = LLᵀ, S_o = L_o L_oᵀ.
    const Matrix y =
        precision.lower().triangularView<Eigen::Lower>().solve(other.precision.lower());
    const double quad = (other.precision.lower().transpose() * (other.mean - mean)).squaredNorm();
    return 0.5 * (y.squaredNorm() + quad - static_cast<double>(mean.size()) +
                  precision.log_determinant() - other.precision.log_determinant());
  }
  double log_density(const Vector& x) const {
    check(x.size() == mean.size(), "GaussianFull::log_density: the point has the wrong length.");
    return -0.5 * (precision.lower().transpose() * (x - mean)).squaredNorm() +
           0.5 * precision.log_determinant() -
           0.5 * static_cast<double>(mean.size()) * std::log(2.0 * std::numbers::pi);
  }
  /// T(x) = (x, x_i², x_i x_j (i > j)).
  Vector sufficient_statistic(const Vector& x) const {
    return pack(x, x * x.transpose(), 1.0, 1.0);
  }
  double log_base_measure(const Vector&) const {
    return -0.5 * static_cast<double>(mean.size()) * std::log(2.0 * std::numbers::pi);
  }
  /// θ = m + L⁻ᵀε for a given standard-normal ε (reparameterisation; S = LLᵀ).
  Vector sample_from_noise(const Vector& eps) const {
    check(eps.size() == mean.size(),
          "GaussianFull::sample_from_noise: the noise has the wrong length.");
    return mean + precision.solve_upper(eps);
  }
  Vector sample(Rng& rng) const { return sample_from_noise(rng.normal_vector(mean.size())); }
  /// S·v = L(Lᵀv).
  Vector precision_times(const Vector& v) const {
    return precision.lower() * (precision.lower().transpose() * v);
  }
  /// S as a dense matrix.
  Matrix precision_matrix() const { return precision.matrix(); }
  double log_determinant() const { return precision.log_determinant(); }
};

}  // namespace blr
