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
  Vector variance() const;  ///< diag Σ

  // ---- exponential-family API (family.hpp) ----------------------------------------------------
  using Sample = Vector;

  /// Length of the minimal λ for dimension d: d + d(d+1)/2.
  static Index natural_size_for(Index d) { return d + d * (d + 1) / 2; }
  /// The d with natural_size_for(d) == n, or −1 when there is none.
  static Index dimension_for_natural_size(Index n);
  /// Packs (v, M) as (v, a·M_ii, b·M_ij for i > j), M symmetric: (a, b) = (−½, −1) gives λ from
  /// (Sm, S), and (1, 1) gives μ from (m, E[xxᵀ]) and T(x) from (x, xxᵀ).
  static Vector pack(const Vector& v, const Matrix& m, double diagonal_factor,
                     double offdiagonal_factor);
  /// Inverse of pack(): the symmetric matrix from the second and third blocks.
  static Matrix unpack_matrix(const Vector& packed, Index d, double diagonal_factor,
                              double offdiagonal_factor);

  /// λ = (Sm, −½ S_ii, −S_ij (i > j)).
  Vector natural() const;
  /// λ of the pair (Sm, S) without factorising S, which need not be positive definite: the
  /// inference code's messages λ̃ (λ₀ + Σ_i λ̃_i is a λ) and targets (inference/gaussian_natural.hpp).
  static Vector natural_from(const Vector& precision_times_mean, const Matrix& precision);
  /// The S that λ encodes (symmetric; not checked for definiteness). Sm is λ.head(d).
  static Matrix precision_from_natural(const Vector& lambda);
  /// μ = (m, Σ_ii + m_i², Σ_ij + m_i m_j (i > j)).
  Vector expectation() const;
  Index natural_size() const { return natural_size_for(mean.size()); }

  static bool natural_is_valid(const Vector& lambda);
  static GaussianFull from_natural(const Vector& lambda);
  static GaussianFull from_expectation(const Vector& mu);
  GaussianFull with_natural(const Vector& lambda) const { return from_natural(lambda); }
  GaussianFull with_expectation(const Vector& mu) const { return from_expectation(mu); }

  /// A = ½ mᵀSm − ½ log|S|.
  double log_partition() const;
  double entropy() const;
  /// KL(this ‖ other) = ½[tr(S_o Σ) + (m_o − m)ᵀS_o(m_o − m) − d + log|S| − log|S_o|].
  double kl(const GaussianFull& other) const;
  double log_density(const Vector& x) const;
  /// T(x) = (x, x_i², x_i x_j (i > j)).
  Vector sufficient_statistic(const Vector& x) const;
  double log_base_measure(const Vector&) const;
  /// θ = m + L⁻ᵀε for a given standard-normal ε (reparameterisation; S = LLᵀ).
  Vector sample_from_noise(const Vector& eps) const;
  Vector sample(Rng& rng) const { return sample_from_noise(rng.normal_vector(mean.size())); }
  /// S·v = L(Lᵀv).
  Vector precision_times(const Vector& v) const;
  /// S as a dense matrix.
  Matrix precision_matrix() const { return precision.matrix(); }
  double log_determinant() const { return precision.log_determinant(); }
};

}  // namespace blr
