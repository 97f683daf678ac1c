// Quadratic losses ℓ̄(θ) = ½(θ − c)ᵀA(θ − c) + const.
//
// The test bed of the BLR's Gaussian reductions: with a Gaussian q the expectations are exact,
// E_q[∇ℓ̄] = A(m − c) and E_q[∇²ℓ̄] = A (Khan & Rue 2023, eq. 14), and E_q[ℓ̄] = ℓ̄(m) + ½tr(AS⁻¹).
// `Quadratic` holds a dense symmetric A, `DiagonalQuadratic` a diagonal one (A = diag(a)).
// Both are `QuadraticLoss`es (model/loss.hpp), which is what the ExactQuadratic estimator needs.
#pragma once

#include <algorithm>
#include <cmath>

#include "blr/core/error.hpp"
#include "blr/core/types.hpp"

namespace blr {

/// ½(θ − c)ᵀA(θ − c) + constant, A symmetric (not necessarily positive definite).
class Quadratic {
 public:
  static constexpr bool kQuadratic = true;

  /// Throws blr::Error when A is not square, not symmetric (to 1e-12 relative) or does not match c.
  Quadratic(Matrix a, Vector center, double constant = 0.0)
      : a_(std::move(a)), center_(std::move(center)), constant_(constant) {
    check(a_.rows() == a_.cols(), "Quadratic: the matrix A must be square.");
    check(a_.rows() == center_.size(),
          fmt::format("Quadratic: A is {}×{} but the centre has length {}.", a_.rows(), a_.cols(),
                      center_.size()));
    check(a_.allFinite() && center_.allFinite() && std::isfinite(constant_),
          "Quadratic: A, the centre and the constant must be finite.");
    const double tol = 1e-12 * std::max(1.0, a_.cwiseAbs().maxCoeff());
    check((a_ - a_.transpose()).cwiseAbs().maxCoeff() <= tol,
          "Quadratic: the matrix A must be symmetric.");
    a_ = 0.5 * (a_ + a_.transpose()).eval();
  }

  Index dimension() const { return center_.size(); }
  double value(const Vector& theta) const {
    const Vector r = theta - center_;
    return 0.5 * r.dot(a_ * r) + constant_;
  }
  Vector gradient(const Vector& theta) const { return a_ * (theta - center_); }
  double value_and_gradient(const Vector& theta, Vector& gradient) const {
    const Vector r = theta - center_;
    gradient = a_ * r;
    return 0.5 * r.dot(gradient) + constant_;
  }
  Matrix hessian(const Vector& /*theta*/) const { return a_; }
  Vector hessian_diagonal(const Vector& /*theta*/) const { return a_.diagonal(); }
  Vector hessian_vector_product(const Vector& /*theta*/, const Vector& v) const { return a_ * v; }

  const Matrix& matrix() const { return a_; }
  const Vector& center() const { return center_; }
  double constant() const { return constant_; }

 private:
  Matrix a_;
  Vector center_;
  double constant_ = 0.0;
};

/// ½Σ_j a_j(θ_j − c_j)² + constant.
class DiagonalQuadratic {
 public:
  static constexpr bool kQuadratic = true;

  DiagonalQuadratic(Vector a, Vector center, double constant = 0.0)
      : a_(std::move(a)), center_(std::move(center)), constant_(constant) {
    check(a_.size() == center_.size(),
          fmt::format("DiagonalQuadratic: the diagonal has length {} but the centre has length {}.",
                      a_.size(), center_.size()));
    check(a_.allFinite() && center_.allFinite() && std::isfinite(constant_),
          "DiagonalQuadratic: the diagonal, the centre and the constant must be finite.");
  }

  Index dimension() const { return center_.size(); }
  double value(const Vector& theta) const {
    return 0.5 * (a_.array() * (theta - center_).array().square()).sum() + constant_;
  }
  Vector gradient(const Vector& theta) const { return a_.cwiseProduct(theta - center_); }
  double value_and_gradient(const Vector& theta, Vector& gradient) const {
    const Vector r = theta - center_;
    gradient = a_.cwiseProduct(r);
    return 0.5 * r.dot(gradient) + constant_;
  }
  Matrix hessian(const Vector& /*theta*/) const { return a_.asDiagonal(); }
  Vector hessian_diagonal(const Vector& /*theta*/) const { return a_; }
  Vector hessian_vector_product(const Vector& /*theta*/, const Vector& v) const {
    return a_.cwiseProduct(v);
  }

  const Vector& diagonal() const { return a_; }
  const Vector& center() const { return center_; }
  double constant() const { return constant_; }

 private:
  Vector a_;
  Vector center_;
  double constant_ = 0.0;
};

}  // namespace blr
