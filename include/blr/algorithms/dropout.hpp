// Dropout as the BLR with a spike-and-slab candidate (Khan & Rue 2023, §4.3, eqs. 41–43, App. G).
//
// q(θ_j) = π₁ N(m_j, s_j⁻¹) + (1 − π₁) N(0, s₀⁻¹) per unit j, with s₀ → 0 (a spike). With the delta
// method at the dropout weights θ̃ = m⊙z, z_j ~ Bernoulli(π₁), and the far-apart approximation of
// the responsibilities (App. G), the BLR becomes Newton's step on the slab, scaled by 1/π₁:
//     s ← (1 − ρ)s + ρ diag∇²ℓ̄(θ̃)/π₁,     m ← m − ρ ∇ℓ̄(θ̃)/(π₁ s)              (eqs. 42–43)
// where the derivatives are with respect to the slab's θ_j (so zero for dropped units). Here each
// coordinate of θ is a unit (dropout on weights; DropConnect-style); the estimator is
// `DropoutDelta`, and the step is the diagonal Gaussian rule.
#pragma once

#include "blr/core/rng.hpp"
#include "blr/estimator/estimate.hpp"
#include "blr/family/gaussian_diag.hpp"
#include "blr/model/loss.hpp"
#include "blr/rule/algorithm.hpp"

namespace blr {

/// Delta method at dropout weights: ĝ = z⊙∇ℓ̄(m⊙z)/π₁, Ĥ = z⊙diag∇²ℓ̄(m⊙z)/π₁.
struct DropoutDelta {
  double keep_probability = 0.5;  ///< π₁ ∈ (0, 1]

  template <HasDiagonalHessian L>
  GaussianEstimate estimate(const GaussianDiag& q, const L& loss, Rng& rng) const {
    Vector mask(q.dimension());
    for (Index j = 0; j < mask.size(); ++j) mask[j] = rng.uniform() < keep_probability ? 1.0 : 0.0;
    return estimate_with_mask(q, loss, mask);
  }

  template <HasDiagonalHessian L>
  GaussianEstimate estimate_with_mask(const GaussianDiag& q, const L& loss, const Vector& mask) const {
    const Vector dropped = q.mean.cwiseProduct(mask);
    GaussianEstimate e;
    e.loss = loss.value(dropped);
    e.gradient = mask.cwiseProduct(loss.gradient(dropped)) / keep_probability;
    e.curvature = Curvature::diagonal(mask.cwiseProduct(loss.hessian_diagonal(dropped)) / keep_probability);
    e.evaluations = 1;
    return e;
  }
};

struct DropoutOptions {
  Schedule lr = Schedule::constant(0.1);  ///< ρ (mean and precision)
  double keep_probability = 0.5;          ///< π₁
  void validate() const {
    lr.validate("lr");
    check_range("lr", lr.initial, 0.0, 1.0, true, false);
    check_range("keep_probability", keep_probability, 0.0, 1.0, true, false);
  }
};

using DropoutNewton = Algorithm<GaussianDiag, DropoutDelta, Policy<>>;

inline DropoutNewton make_dropout(const DropoutOptions& options) {
  options.validate();
  Policy<> policy;
  policy.mean_rate = options.lr;
  policy.precision_rate = options.lr;
  return {DropoutDelta{options.keep_probability}, policy};
}

}  // namespace blr
