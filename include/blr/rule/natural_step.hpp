// The Bayesian learning rule in natural parameters (Khan & Rue 2023, eq. 6 with momentum, eq. 80):
//
//     λ_{t+1} = λ_t − ρ_t ∇_μ[ E_q(ℓ̄) − H(q) ] + γ_t (λ_t − λ_{t−1})
//             = (1 − ρ_t) λ_t − ρ_t ∇_μ E_q[ℓ̄ + log h] + γ_t (λ_t − λ_{t−1}).
//
// This is the rule for every exponential family whose natural parameter is a flat vector. When
// the loss is a negative log-joint made of conjugate factors, −∇_μ E_q[ℓ̄] = λ₀ + Σ_i λ̃_i (the
// prior's natural parameter plus one "message" per factor, eq. 54), so with ρ = 1 a single step
// returns the exact posterior. Gaussian families use the same equation in (m, S) coordinates
// (eq. 12; see gaussian_rule.hpp, proven equal to this form by a test).
#pragma once

#include "blr/core/error.hpp"
#include "blr/core/types.hpp"

namespace blr {

/// One BLR step on a flat natural parameter: (1−ρ)λ − ρ·grad_mu + γ(λ − λ_prev).
/// `grad_mu` is ∇_μ E_q[ℓ̄ + log h] expressed in the same coordinates as λ.
/// `entropy_weight` w scales the entropy in E_q[ℓ̄] − w·H(q) (w = 1: the BLR; w → 0: the
/// deterministic limit, λ ← λ − ρ·grad_mu, e.g. the straight-through estimator, eq. 48).
inline Vector natural_step(const Vector& lambda, const Vector& grad_mu, double rho,
                           double momentum = 0.0, const Vector* lambda_prev = nullptr,
                           double entropy_weight = 1.0) {
  check(lambda.size() == grad_mu.size(),
        "natural_step: the natural parameter and the gradient differ in length.");
  check(rho > 0.0 && rho <= 1.0, "natural_step: the step size rho must lie in (0, 1].");
  check(entropy_weight >= 0.0, "natural_step: the entropy weight must be non-negative.");
  Vector out = (1.0 - rho * entropy_weight) * lambda - rho * grad_mu;
  if (momentum != 0.0) {
    check(lambda_prev != nullptr && lambda_prev->size() == lambda.size(),
          "natural_step: momentum needs the previous natural parameter.");
    out += momentum * (lambda - *lambda_prev);
  }
  return out;
}

/// The same step written with a target natural parameter λ̂ = −grad_mu (for conjugate models,
/// λ̂ = λ₀ + Σ_i λ̃_i): (1−ρ)λ + ρλ̂. With ρ = 1 this is the conjugate posterior.
inline Vector natural_step_towards(const Vector& lambda, const Vector& target, double rho) {
  return natural_step(lambda, -target, rho);
}

}  // namespace blr
