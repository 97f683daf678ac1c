// The improved-BLR positive-definite correction (Lin, Schmidt & Khan, ICML 2020).
//
// The plain precision step S⁺ = (1−ρ)S + ρĤ can leave the cone of positive-definite matrices when
// Ĥ is indefinite. The Riemannian step with a second-order retraction adds (ρ²/2)(S−Ĥ)S⁻¹(S−Ĥ):
//
//     S⁺ = (1−ρ)S + ρĤ + (ρ²/2)(S − Ĥ) S⁻¹ (S − Ĥ) = ½S + ½(S − ρG)S⁻¹(S − ρG),  G = S − Ĥ,
//
// which is positive definite for any symmetric Ĥ and any ρ > 0 (first term ≻ 0, second ⪰ 0).
// For a diagonal S this is IVON's Hessian update (research/algorithms.md §1.2 step 7, §9).
#pragma once

#include "blr/core/types.hpp"

namespace blr::stage {

/// Diagonal precision: (1−ρ)s + ρh + (ρ²/2)(s−h)²/s, elementwise.
inline Vector precision_step_diagonal(const Vector& s, const Vector& h, double rho, bool correct) {
  Vector out = (1.0 - rho) * s + rho * h;
  if (correct) out.array() += 0.5 * rho * rho * (s - h).array().square() / s.array();
  return out;
}

/// Dense precision (S given with its inverse applied by `solve`).
template <class Solve>
Matrix precision_step_dense(const Matrix& s, const Matrix& h, double rho, bool correct,
                            Solve&& solve) {
  Matrix out = (1.0 - rho) * s + rho * h;
  if (correct) {
    const Matrix g = s - h;
    out += 0.5 * rho * rho * g * solve(g);
  }
  return 0.5 * (out + out.transpose());
}

}  // namespace blr::stage
