// The diagonal preconditioner of the mean step, and clipping.
//
// The BLR mean step is m ← m − ρ S⁻¹ ĝ (eq. 12). Deep-learning variants change S before dividing:
//   debiasing     ŝ = s / (1 − (1−ρ_S)^t)   (Adam's second-moment correction, constant ρ_S),
//   square root   √(ŝ + c_in) + c_out      (RMSprop eq. 38 has c_in = c; Adam has c_out = ε),
// and IVON clips the preconditioned direction S⁻¹ĝ elementwise to [−r, r].
#pragma once

#include <cmath>
#include <limits>

#include "blr/core/types.hpp"

namespace blr::stage {

struct Preconditioning {
  bool debias = false;
  double precision_rate = 0.0;  ///< ρ_S used by the debiasing factor
  bool sqrt = false;
  double inner_offset = 0.0;  ///< c_in
  double outer_offset = 0.0;  ///< c_out
};

/// Returns the vector P by which the direction is divided.
inline Vector diagonal_preconditioner(const Vector& s, const Preconditioning& p, long t) {
  Vector out = s;
  if (p.debias) out /= (1.0 - std::pow(1.0 - p.precision_rate, static_cast<double>(t)));
  if (p.sqrt) out = ((out.array() + p.inner_offset).sqrt() + p.outer_offset).matrix();
  return out;
}

/// Elementwise clip to [−radius, radius] (no-op for an infinite radius).
inline void clip(Vector& direction, double radius) {
  if (radius == std::numeric_limits<double>::infinity()) return;
  direction = direction.cwiseMax(-radius).cwiseMin(radius);
}

}  // namespace blr::stage
