// What an estimator hands to the rule for a Gaussian candidate q = N(m, S⁻¹).
//
// By eqs. 10–11 of Khan & Rue (2023) the natural gradient of E_q[ℓ̄] needs only
//   ĝ ≈ E_q[∇ℓ̄(θ)]  and  Ĥ ≈ E_q[∇²ℓ̄(θ)],
// and the BLR step (eq. 12) is  S ← (1−ρ)S + ρĤ,  m ← m − ρ S⁻¹ ĝ.
// `Curvature` holds Ĥ in the cheapest exact shape the estimator has:
//   none      — the estimator gives no curvature (first-order methods; the precision stays),
//   diagonal  — diag(d),
//   dense     — a full symmetric matrix,
//   outer     — scale·Σ_i v_i v_iᵀ + diag(shift), v_i the rows of `factors` (Gauss–Newton, eq. 45);
//               a full-Gaussian rule can fold it in by rank-one Cholesky updates.
#pragma once

#include "blr/core/error.hpp"
#include "blr/core/types.hpp"

namespace blr {

struct Curvature {
  enum class Kind { none, diagonal, dense, outer };
  Kind kind = Kind::none;
  Vector diag;     ///< diagonal: Ĥ = diag(diag)
  Matrix dense;    ///< dense: Ĥ = dense
  Matrix factors;  ///< outer: Ĥ = scale·factorsᵀ·factors + diag(shift)
  double scale = 1.0;
  Vector shift;  ///< outer: a diagonal added to the outer products (may be empty = 0)

  static Curvature none() { return {}; }
  static Curvature diagonal(Vector d) {
    Curvature c;
    c.kind = Kind::diagonal;
    c.diag = std::move(d);
    return c;
  }
  static Curvature full(Matrix h) {
    Curvature c;
    c.kind = Kind::dense;
    c.dense = std::move(h);
    return c;
  }
  static Curvature outer(Matrix rows, double scale, Vector shift = {}) {
    Curvature c;
    c.kind = Kind::outer;
    c.factors = std::move(rows);
    c.scale = scale;
    c.shift = std::move(shift);
    return c;
  }

  bool empty() const { return kind == Kind::none; }

  /// diag(Ĥ), of length d.
  Vector diagonal_part(Index d) const {
    switch (kind) {
      case Kind::none:
        return Vector::Zero(d);
      case Kind::diagonal:
        return diag;
      case Kind::dense:
        return dense.diagonal();
      case Kind::outer: {
        Vector out = scale * factors.array().square().colwise().sum().transpose();
        if (shift.size() > 0) out += shift;
        return out;
      }
    }
    return Vector::Zero(d);
  }

  /// Ĥ as a dense d×d matrix.
  Matrix to_dense(Index d) const {
    switch (kind) {
      case Kind::none:
        return Matrix::Zero(d, d);
      case Kind::diagonal:
        return diag.asDiagonal();
      case Kind::dense:
        return dense;
      case Kind::outer: {
        Matrix out = scale * factors.transpose() * factors;
        if (shift.size() > 0) out.diagonal() += shift;
        return out;
      }
    }
    return Matrix::Zero(d, d);
  }

  /// Adds δ·I (a Gaussian prior of precision δ, or weight decay).
  void add_identity(double delta, Index d) {
    if (delta == 0.0) return;
    switch (kind) {
      case Kind::none:
        kind = Kind::diagonal;
        diag = Vector::Constant(d, delta);
        break;
      case Kind::diagonal:
        diag.array() += delta;
        break;
      case Kind::dense:
        dense.diagonal().array() += delta;
        break;
      case Kind::outer:
        if (shift.size() == 0) shift = Vector::Zero(d);
        shift.array() += delta;
        break;
    }
  }
};

/// Which curvature Ĥ a Delta or MonteCarlo estimator returns with ĝ (a compile-time choice, so that
/// asking a gradient-only loss for a Hessian is rejected by the loss concepts).
enum class CurvatureSource {
  none,              ///< first order: no Ĥ (the rule leaves the precision as it is)
  hessian,           ///< ∇²ℓ̄: dense for a full Gaussian, its diagonal for a diagonal one
  gradient_squared,  ///< diag(ĝ⊙ĝ), the RMSprop/Adam surrogate (eq. 38); Delta only
};

/// ĝ, Ĥ and the loss value seen while estimating them (averaged over samples when stochastic).
struct GaussianEstimate {
  Vector gradient;      ///< ĝ ≈ E_q[∇ℓ̄]
  Curvature curvature;  ///< Ĥ ≈ E_q[∇²ℓ̄]
  double loss = 0.0;    ///< ℓ̄ at the evaluation point(s), averaged
  int evaluations = 0;  ///< number of points at which the loss was evaluated
};

}  // namespace blr
