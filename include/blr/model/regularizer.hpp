// The optional regulariser of a loss, R(θ) = δ/2·|θ|²: the negative log of a Gaussian prior
// N(0, δ⁻¹I) without its normaliser (Khan & Rue 2023, eq. 1). δ is called `prior_precision`
// throughout blr; δ = 0 (the default) means no regulariser.
#pragma once

#include "blr/core/types.hpp"

namespace blr {

struct Ridge {
  double precision = 0.0;  ///< δ ≥ 0

  double value(const Vector& theta) const {
    return precision == 0.0 ? 0.0 : 0.5 * precision * theta.squaredNorm();
  }
  Vector gradient(const Vector& theta) const { return precision * theta; }
  Vector hessian_diagonal(Index d) const { return Vector::Constant(d, precision); }
};

}  // namespace blr
