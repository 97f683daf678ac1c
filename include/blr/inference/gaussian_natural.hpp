// The flat natural parameter of a full Gaussian in blr::inference: the family's own λ.
//
// Every full Gaussian q(θ) = N(θ | m, S⁻¹) in blr::inference is handed to the one BLR rule
// (`natural_step` / `natural_step_towards`, include/blr/rule/natural_step.hpp) as the natural
// parameter of GaussianFull (family/gaussian_full.hpp; Khan & Rue 2023, eq. 9), minimal, of length
// d + d(d+1)/2:
//
//     λ = (Sm, −½ S_ii, −S_ij for i > j)        (the pairs i > j column by column)
//
// The rule is linear in λ: a conjugate factor that adds (b, B) to (Sm, S) has the message
// λ̃ = pack_full(b, B), sums of messages are messages, and with the target λ̂ = pack_full(Ĥm − ĝ, Ĥ)
// the step λ ← (1−ρ)λ + ρλ̂ is eq. 12 (S ← (1−ρ)S + ρĤ, m ← m − ρS⁻¹ĝ). Moments, the log-partition
// A(λ) = ½ mᵀSm − ½ log|S| and densities are GaussianFull::from_natural(λ)'s, so log-evidences of
// conjugate models are A(λ_N) − A(λ₀) + Σ_i log h_i. The functions below only name the family's
// maps for code that works on (Sm, S) pairs; there is no second encoding. (Before issue 9 the
// inference code had its own, (Sm, vec S), with its own conversions.)
//
// CVI's mean-field family keeps the coordinates (s⊙m, s): GaussianDiag's λ = (s⊙m, −½s) with the
// second block scaled by −2. The iterates are the same in either (the scaling is exact), but CVI's
// stopping rule and step damping measure Δλ in these coordinates, and in the family's the Pima
// mean-field fit of tests/cli/infer_models.sh takes 103 iterations instead of 102 (results 8e-10
// apart), so they stay until those rules are restated.
#pragma once

#include "blr/core/error.hpp"
#include "blr/core/types.hpp"
#include "blr/family/gaussian_full.hpp"

namespace blr::inference {

/// Length of λ for dimension d: d + d(d+1)/2.
inline Index full_natural_size(Index d) {
  return GaussianFull::natural_size_for(d);
}

/// λ of the pair (Sm, S), S symmetric (only its lower triangle is read; it need not be definite).
inline Vector pack_full(const Vector& sm, const Matrix& s) {
  return GaussianFull::natural_from(sm, s);
}

/// The S·m block of λ.
inline Vector full_sm(const Vector& lambda, Index d) {
  return lambda.head(d);
}

/// The S that λ encodes (symmetric by construction).
inline Matrix full_precision(const Vector& lambda, Index d) {
  check(lambda.size() == full_natural_size(d),
        "A full-Gaussian natural parameter has the wrong length.");
  return GaussianFull::precision_from_natural(lambda);
}

/// CVI's mean-field coordinates (s⊙m, s).
inline Vector pack_diag(const Vector& sm, const Vector& s) {
  Vector out(2 * sm.size());
  out << sm, s;
  return out;
}

}  // namespace blr::inference
