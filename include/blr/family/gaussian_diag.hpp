// Diagonal Gaussian q(θ) = N(θ | m, diag(s)⁻¹).
//
// Natural parameters λ = (s⊙m, −s/2), expectation parameters μ = (m, m⊙m + 1/s) (Khan & Rue
// 2023, eq. 9 restricted to a diagonal precision). This is the family of RMSprop/Adam (§4.2),
// OGN/VOGN (§4.4) and IVON.
#pragma once

#include "blr/core/error.hpp"
#include "blr/core/types.hpp"

namespace blr {

struct GaussianDiag {
  Vector mean;       ///< m
  Vector precision;  ///< s (each entry > 0)

  GaussianDiag() = default;
  GaussianDiag(Vector m, Vector s) : mean(std::move(m)), precision(std::move(s)) {
    check(mean.size() == precision.size(), "GaussianDiag: mean and precision differ in length.");
  }
  Index dimension() const { return mean.size(); }
  /// S⁻¹·b.
  Vector solve(const Vector& b) const { return b.cwiseQuotient(precision); }
  Vector variance() const { return precision.cwiseInverse(); }
};

}  // namespace blr
