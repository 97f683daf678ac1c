// Flat natural coordinates of Gaussians for the inference algorithms.
//
// Every Gaussian q(θ) = N(θ | m, S⁻¹) in blr::inference is handed to the one BLR rule
// (`natural_step` / `natural_step_towards`, include/blr/rule/natural_step.hpp) as a flat vector in
// the *precision-form* coordinates
//
//     full:      λ = (S·m, vec S)        length d + d²      (column-major vec)
//     diagonal:  λ = (s⊙m, s)            length 2d          (S = diag s)
//
// These are the natural parameters (Sm, −½S) of Khan & Rue (2023, eq. 9) with the second block
// multiplied by −2: a fixed linear map, so the convex combination λ ← (1−ρ)λ + ρλ̂ is the same rule
// in either coordinates, and with a target λ̂ = (Ĥm − ĝ, Ĥ) it is eq. 12 (S ← (1−ρ)S + ρĤ,
// m ← m − ρS⁻¹ĝ). The log-partition in these coordinates is
//     A(λ) = ½ (Sm)ᵀ S⁻¹ (Sm) − ½ log|S| + (d/2) log 2π,
// so log-evidences of conjugate models are A(λ_N) − A(λ₀) + Σ_i log h_i.
#pragma once

#include <Eigen/Cholesky>
#include <cmath>
#include <numbers>

#include "blr/core/error.hpp"
#include "blr/core/types.hpp"

namespace blr::inference {

/// Length of the full precision-form vector for dimension d.
inline Index full_natural_size(Index d) {
  return d + d * d;
}

/// (Sm, vec S) → flat λ.
inline Vector pack_full(const Vector& sm, const Matrix& s) {
  const Index d = sm.size();
  Vector out(full_natural_size(d));
  out.head(d) = sm;
  out.tail(d * d) = Eigen::Map<const Vector>(s.data(), d * d);
  return out;
}

/// The S·m block of a flat full λ of dimension d.
inline Vector full_sm(const Vector& lambda, Index d) {
  return lambda.head(d);
}

/// The S block of a flat full λ (symmetrised against round-off).
inline Matrix full_precision(const Vector& lambda, Index d) {
  check(lambda.size() == full_natural_size(d),
        "A full-Gaussian natural parameter has the wrong length.");
  Matrix s = Eigen::Map<const Matrix>(lambda.data() + d, d, d);
  return 0.5 * (s + s.transpose());
}

/// Dimension d from the length d + d² of a full λ.
inline Index full_dimension(const Vector& lambda) {
  const double n = static_cast<double>(lambda.size());
  const Index d = static_cast<Index>(std::llround((-1.0 + std::sqrt(1.0 + 4.0 * n)) / 2.0));
  check(full_natural_size(d) == lambda.size(),
        "A full-Gaussian natural parameter must have length d + d².");
  return d;
}

/// Mean, covariance and Cholesky factor of S for a full λ; throws when S is not positive definite.
struct FullMoments {
  Vector mean;
  Matrix covariance;
  Eigen::LLT<Matrix> precision_llt;
  double log_det_precision = 0.0;
};

inline FullMoments full_moments(const Vector& lambda, Index d) {
  FullMoments out;
  const Matrix s = full_precision(lambda, d);
  out.precision_llt.compute(s);
  check(out.precision_llt.info() == Eigen::Success,
        "The precision matrix is not positive definite.");
  out.mean = out.precision_llt.solve(full_sm(lambda, d));
  out.covariance = out.precision_llt.solve(Matrix(Matrix::Identity(d, d)));
  Matrix l = out.precision_llt.matrixL();
  out.log_det_precision = 2.0 * l.diagonal().array().log().sum();
  return out;
}

/// Log-partition A(λ) of a full Gaussian in precision-form coordinates.
inline double full_log_partition(const Vector& lambda, Index d) {
  const FullMoments mom = full_moments(lambda, d);
  return 0.5 * full_sm(lambda, d).dot(mom.mean) - 0.5 * mom.log_det_precision +
         0.5 * static_cast<double>(d) * std::log(2.0 * std::numbers::pi);
}

/// (s⊙m, s) → flat λ of a diagonal Gaussian.
inline Vector pack_diag(const Vector& sm, const Vector& s) {
  Vector out(2 * sm.size());
  out << sm, s;
  return out;
}

/// Log-partition of a diagonal Gaussian in precision-form coordinates.
inline double diag_log_partition(const Vector& lambda) {
  const Index d = lambda.size() / 2;
  const Vector sm = lambda.head(d), s = lambda.tail(d);
  check((s.array() > 0).all(), "A diagonal precision must be positive.");
  return 0.5 * (sm.array().square() / s.array()).sum() - 0.5 * s.array().log().sum() +
         0.5 * static_cast<double>(d) * std::log(2.0 * std::numbers::pi);
}

}  // namespace blr::inference
