// Full Gaussian q(θ) = N(θ | m, S⁻¹) with the precision held by its Cholesky factor.
//
// Natural parameters λ = (Sm, −S/2), expectation parameters μ = (m, S⁻¹ + mmᵀ) (Khan & Rue 2023,
// eq. 9). The factor makes solves O(d²) and Gauss–Newton steps rank-one updates (eq. 45).
#pragma once

#include "blr/core/cholesky.hpp"
#include "blr/core/error.hpp"
#include "blr/core/types.hpp"

namespace blr {

struct GaussianFull {
  Vector mean;                ///< m
  CholeskyFactor precision;   ///< S = L·Lᵀ

  GaussianFull() = default;
  GaussianFull(Vector m, const Matrix& s) : mean(std::move(m)), precision(CholeskyFactor::from_matrix(s)) {
    check(mean.size() == precision.dimension(), "GaussianFull: mean and precision differ in size.");
  }
  GaussianFull(Vector m, CholeskyFactor s) : mean(std::move(m)), precision(std::move(s)) {
    check(mean.size() == precision.dimension(), "GaussianFull: mean and precision differ in size.");
  }
  Index dimension() const { return mean.size(); }
  Vector solve(const Vector& b) const { return precision.solve(b); }
  Matrix covariance() const { return precision.inverse(); }
  Vector variance() const { return covariance().diagonal(); }
};

}  // namespace blr
