// Classic optimisation test functions with exact gradients and Hessians.
//
// Used to exercise the estimators away from quadratics and, being multimodal, the mixture BLR
// (Khan & Rue 2023, §5; peers.md 4(g) lists the oracles):
//   Rosenbrock    Σ_{i<d−1} b(θ_{i+1} − θ_i²)² + (a − θ_i)²;  minimum 0 at (1, …, 1) for a = 1
//                 (at (a, a²) for d = 2)
//   Himmelblau    (x² + y − 11)² + (x + y² − 7)²;  four minima with value 0, e.g. (3, 2)
//   Branin        a(y − bx² + cx − r)² + s(1 − t)cos x + s;  three minima (−π, 12.275), (π, 2.275),
//                 (9.42478, 2.475) with value 5/(4π) = 0.397887…
//   SixHumpCamel  (4 − 2.1x² + x⁴/3)x² + xy + (−4 + 4y²)y²;  two minima ±(0.0898420, −0.7126564)
//                 with value −1.0316284535
// For Himmelblau and q = N(m, vI) the Gaussian smoothing has the closed form
//   E_q f = (m₁² + v + m₂ − 11)² + (m₂² + v + m₁ − 7)² + 4v(m₁² + m₂²) + 4v² + 2v
// (`Himmelblau::expected_value`), the oracle for the Monte Carlo estimators.
#pragma once

#include "blr/core/types.hpp"

namespace blr {

/// The d-dimensional Rosenbrock function (d ≥ 2), with parameters a (default 1) and b (100).
class Rosenbrock {
 public:
  explicit Rosenbrock(Index d = 2, double a = 1.0, double b = 100.0);
  Index dimension() const { return d_; }
  double value(const Vector& theta) const;
  Vector gradient(const Vector& theta) const;
  Matrix hessian(const Vector& theta) const;
  Vector hessian_diagonal(const Vector& theta) const;
  Vector hessian_vector_product(const Vector& theta, const Vector& v) const;

 private:
  Index d_;
  double a_, b_;
};

/// Himmelblau's function on ℝ².
class Himmelblau {
 public:
  Index dimension() const { return 2; }
  double value(const Vector& theta) const;
  Vector gradient(const Vector& theta) const;
  Matrix hessian(const Vector& theta) const;
  Vector hessian_diagonal(const Vector& theta) const;
  Vector hessian_vector_product(const Vector& theta, const Vector& v) const;
  /// E_q f for q = N(m, v·I), v the variance of each coordinate (closed form above).
  static double expected_value(const Vector& m, double v);
  /// ∇_m E_q f = E_q[∇f] (Bonnet's theorem), closed form.
  static Vector expected_gradient(const Vector& m, double v);
  /// E_q[∇²f], closed form.
  static Matrix expected_hessian(const Vector& m, double v);
};

/// The Branin–Hoo function on ℝ² with its standard constants.
class Branin {
 public:
  Index dimension() const { return 2; }
  double value(const Vector& theta) const;
  Vector gradient(const Vector& theta) const;
  Matrix hessian(const Vector& theta) const;
  Vector hessian_diagonal(const Vector& theta) const;
  Vector hessian_vector_product(const Vector& theta, const Vector& v) const;
};

/// The six-hump camel function on ℝ².
class SixHumpCamel {
 public:
  Index dimension() const { return 2; }
  double value(const Vector& theta) const;
  Vector gradient(const Vector& theta) const;
  Matrix hessian(const Vector& theta) const;
  Vector hessian_diagonal(const Vector& theta) const;
  Vector hessian_vector_product(const Vector& theta, const Vector& v) const;
};

}  // namespace blr
