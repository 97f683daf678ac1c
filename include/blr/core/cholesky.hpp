// A symmetric positive-definite matrix held by its lower Cholesky factor, S = L·Lᵀ.
//
// Full-Gaussian precisions live here. The BLR precision step (1−ρ)S + ρ·Σ_i c·v_i v_iᵀ becomes a
// scaling of L by √(1−ρ) followed by rank-one updates (Gill, Golub, Murray & Saunders 1974), each
// O(d²), instead of an O(d³) refactorisation; solves S⁻¹b are two triangular solves.
#pragma once

#include "blr/core/types.hpp"

namespace blr {

class CholeskyFactor {
 public:
  CholeskyFactor() = default;

  /// Factorises S; throws when S is not (numerically) positive definite.
  static CholeskyFactor from_matrix(const Matrix& s);
  /// S = diag(d); d must be positive.
  static CholeskyFactor from_diagonal(const Vector& d);
  /// Takes an existing lower factor (its diagonal must be positive).
  static CholeskyFactor from_lower(Matrix lower);

  Index dimension() const { return lower_.rows(); }
  const Matrix& lower() const { return lower_; }
  Matrix matrix() const;  ///< S = L·Lᵀ

  /// S ← c·S, c > 0.
  void scale(double c);
  /// S ← S + v·vᵀ in O(d²).
  void rank_one_update(const Vector& v);
  /// S⁻¹·b.
  Vector solve(const Vector& b) const;
  /// S⁻¹·B (columns).
  Matrix solve(const Matrix& b) const;
  /// S⁻¹.
  Matrix inverse() const;
  /// log det S.
  double log_determinant() const;
  /// L⁻ᵀ·z: a draw from N(0, S⁻¹) when z ~ N(0, I).
  Vector solve_upper(const Vector& z) const;

 private:
  Matrix lower_;
};

}  // namespace blr
