// Merging Gaussian (or any exponential-family) posteriors that share one prior, in natural
// parameters: the exact Bayesian form behind uncertainty-based model merging (Daheim, Möllenhoff,
// Ponti, Gurevych & Khan, "Model merging by uncertainty-based gradient matching", ICLR 2024;
// Khan & Rue 2023, §5.1 on conjugate updates as sums of natural parameters).
//
// Posteriors q_t fitted from one prior λ₀ on disjoint data sets D_t are λ_t = λ₀ + Σ_{i∈D_t} λ̃_i
// (each likelihood term adds its message). The posterior of all the data is therefore
//
//     λ = λ₀ + Σ_t (λ_t − λ₀) = Σ_t λ_t − (T − 1) λ₀,
//
// exact for conjugate models (Bayesian linear regression: λ = (Sm, vec S) in precision form,
// gaussian_natural.hpp), and the Laplace/gradient-matching approximation otherwise. A task scale α
// (Daheim et al.'s α, "task arithmetic" scaling) weights the task contributions:
//
//     λ = λ₀ + α Σ_t (λ_t − λ₀),  computed as  α Σ_t λ_t + (1 − αT) λ₀,
//
// so that T = 1, α = 1 returns λ₁ bit for bit. In means (precision form, S_t ≻ 0):
// m = m₀ + S⁻¹ Σ_t α S_t (m_t − m₀) with S = S₀ + α Σ_t (S_t − S₀) — the formula that
// blr/torch/posterior/merge.hpp applies per coordinate to networks with diagonal curvatures.
#pragma once

#include <vector>

#include "blr/core/types.hpp"

namespace blr::inference {

/// λ₀ + α Σ_t (λ_t − λ₀) for natural parameters of one family (all of one length). Throws
/// blr::Error when there is no posterior, the lengths differ, or α is not positive and finite.
Vector merge_natural(const Vector& prior, const std::vector<Vector>& posteriors,
                     double scale = 1.0);

}  // namespace blr::inference
