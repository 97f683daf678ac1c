// A symmetric positive-definite matrix held by its lower Cholesky factor, S = L·Lᵀ.
//
// Full-Gaussian precisions live here. The BLR precision step (1−ρ)S + ρ·Σ_i c·v_i v_iᵀ becomes a
// scaling of L by √(1−ρ) followed by rank-one updates (Gill, Golub, Murray & Saunders 1974), each
// O(d²), instead of an O(d³) refactorisation; solves S⁻¹b are two triangular solves.
#pragma once

#include <Eigen/Cholesky>
#include <cmath>

#include "blr/core/error.hpp"
#include "blr/core/types.hpp"

namespace blr {

class CholeskyFactor {
 public:
  CholeskyFactor() = default;

  /// Factorises S; throws when S is not (numerically) positive definite.
  static CholeskyFactor from_matrix(const Matrix& s) {
    check(s.rows() == s.cols(), "A precision matrix must be square.");
    Eigen::LLT<Matrix> llt(s);
    check(llt.info() == Eigen::Success && llt.matrixL().toDenseMatrix().diagonal().minCoeff() > 0,
          "The precision matrix is not positive definite (Cholesky factorisation failed).");
    CholeskyFactor f;
    f.lower_ = llt.matrixL();
    return f;
  }

  /// S = diag(d); d must be positive.
  static CholeskyFactor from_diagonal(const Vector& d) {
    check((d.array() > 0).all(), "A diagonal precision must be positive.");
    CholeskyFactor f;
    f.lower_ = d.array().sqrt().matrix().asDiagonal();
    return f;
  }

  /// Takes an existing lower factor (its diagonal must be positive).
  static CholeskyFactor from_lower(Matrix lower) {
    check(lower.rows() == lower.cols() && (lower.diagonal().array() > 0).all(),
          "A Cholesky factor must be square with a positive diagonal.");
    CholeskyFactor f;
    f.lower_ = lower.triangularView<Eigen::Lower>();
    return f;
  }

  Index dimension() const { return lower_.rows(); }
  const Matrix& lower() const { return lower_; }
  Matrix matrix() const { return lower_ * lower_.transpose(); }

  /// S ← c·S, c > 0.
  void scale(double c) {
    check(c > 0, "A precision can only be scaled by a positive factor.");
    lower_ *= std::sqrt(c);
  }

  /// S ← S + v·vᵀ in O(d²).
  void rank_one_update(const Vector& v) {
    Vector w = v;
    const Index n = lower_.rows();
    for (Index k = 0; k < n; ++k) {
      const double lkk = lower_(k, k);
      const double r = std::hypot(lkk, w[k]);
      const double c = r / lkk;
      const double s = w[k] / lkk;
      lower_(k, k) = r;
      if (k + 1 < n) {
        auto col = lower_.col(k).tail(n - k - 1);
        auto wt = w.tail(n - k - 1);
        col = (col + s * wt) / c;
        wt = c * wt - s * col;
      }
    }
  }

  /// S⁻¹·b.
  Vector solve(const Vector& b) const {
    Vector y = lower_.triangularView<Eigen::Lower>().solve(b);
    return lower_.transpose().triangularView<Eigen::Upper>().solve(y);
  }

  /// S⁻¹·B (columns).
  Matrix solve(const Matrix& b) const {
    Matrix y = lower_.triangularView<Eigen::Lower>().solve(b);
    return lower_.transpose().triangularView<Eigen::Upper>().solve(y);
  }

  /// S⁻¹.
  Matrix inverse() const { return solve(Matrix(Matrix::Identity(dimension(), dimension()))); }

  /// log det S.
  double log_determinant() const { return 2.0 * lower_.diagonal().array().log().sum(); }

  /// L⁻ᵀ·z: a draw from N(0, S⁻¹) when z ~ N(0, I).
  Vector solve_upper(const Vector& z) const {
    return lower_.transpose().triangularView<Eigen::Upper>().solve(z);
  }

 private:
  Matrix lower_;
};

}  // namespace blr
