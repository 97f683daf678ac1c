// CholeskyFactor (core/cholesky.hpp): S = L·Lᵀ, rank-one updates after Gill, Golub, Murray &
// Saunders (1974), solves by two triangular solves.
#include "blr/core/cholesky.hpp"

#include <Eigen/Cholesky>
#include <cmath>

#include "blr/core/error.hpp"

namespace blr {

CholeskyFactor CholeskyFactor::from_matrix(const Matrix& s) {
  check(s.rows() == s.cols(), "A precision matrix must be square.");
  Eigen::LLT<Matrix> llt(s);
  check(llt.info() == Eigen::Success && llt.matrixL().toDenseMatrix().diagonal().minCoeff() > 0,
        "The precision matrix is not positive definite (Cholesky factorisation failed).");
  CholeskyFactor f;
  f.lower_ = llt.matrixL();
  return f;
}

CholeskyFactor CholeskyFactor::from_diagonal(const Vector& d) {
  check((d.array() > 0).all(), "A diagonal precision must be positive.");
  CholeskyFactor f;
  f.lower_ = d.array().sqrt().matrix().asDiagonal();
  return f;
}

CholeskyFactor CholeskyFactor::from_lower(Matrix lower) {
  check(lower.rows() == lower.cols() && (lower.diagonal().array() > 0).all(),
        "A Cholesky factor must be square with a positive diagonal.");
  CholeskyFactor f;
  f.lower_ = lower.triangularView<Eigen::Lower>();
  return f;
}

Matrix CholeskyFactor::matrix() const { return lower_ * lower_.transpose(); }

void CholeskyFactor::scale(double c) {
  check(c > 0, "A precision can only be scaled by a positive factor.");
  lower_ *= std::sqrt(c);
}

void CholeskyFactor::rank_one_update(const Vector& v) {
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

Vector CholeskyFactor::solve(const Vector& b) const {
  Vector y = lower_.triangularView<Eigen::Lower>().solve(b);
  return lower_.transpose().triangularView<Eigen::Upper>().solve(y);
}

Matrix CholeskyFactor::solve(const Matrix& b) const {
  Matrix y = lower_.triangularView<Eigen::Lower>().solve(b);
  return lower_.transpose().triangularView<Eigen::Upper>().solve(y);
}

Matrix CholeskyFactor::inverse() const {
  return solve(Matrix(Matrix::Identity(dimension(), dimension())));
}

double CholeskyFactor::log_determinant() const {
  return 2.0 * lower_.diagonal().array().log().sum();
}

Vector CholeskyFactor::solve_upper(const Vector& z) const {
  return lower_.transpose().triangularView<Eigen::Upper>().solve(z);
}

}  // namespace blr
