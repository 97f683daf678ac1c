// The fused diagonal-Gaussian BLR step: eq. 12 of Khan & Rue (2023) per coordinate, with the
// stages of StepPolicy (gradient averaging, prior, iBLR correction, natural momentum eq. 80,
// precision debiasing, square-root scaling, clipping):
//
//     u' = β₁u + (1−β₁)(ĝ + δ_u m)                 d = c·u' + δ_a m      (c = 1/(1−β₁ᵗ) if debiased)
//     s' = (1−ρ_S)s + ρ_S h + ρ_S²(s−h)²/(2s) + γ(s − s_{t−1})           (h = ĥ + δ_h)
//     p  = κ·(s' or s)   [→ √(p + c_in) + c_out]                         (κ = 1/(1−(1−ρ_S)ᵗ) if debiased)
//     m' = m − ρ_m·clip(d/p, r) + γ s_{t−1}(m − m_{t−1})/p
//
// The step is memory-bound: it reads ĝ, ĥ, m, s, u (and m_{t−1}, s_{t−1}) and writes m', s', u'
// once. The kernel (src/core/rule/diagonal_kernel.cpp) is one loop over the coordinates that
// touches every stream at the same index, so the hardware prefetchers follow all of them at once;
// each stage is a compile-time flag, so the loop body has no branches and is vectorised. Validity
// is accumulated branch-free (x·0 is 0 for finite x and NaN otherwise); the rare invalid step is
// diagnosed coordinate by coordinate with the same per-coordinate function.
#pragma once

#include "blr/core/types.hpp"

namespace blr::detail {

/// Inputs, outputs and constants of the fused step (raw pointers into the state's vectors; the
/// outputs never alias the inputs). Pointers of stages that are off may be null.
struct DiagonalKernel {
  const double *g = nullptr, *h = nullptr, *m = nullptr, *s = nullptr, *u = nullptr;
  const double *m_prev = nullptr, *s_prev = nullptr;
  double *m_out = nullptr, *s_out = nullptr, *u_out = nullptr;
  double rho_m = 0, rho_s = 0, delta_in_average = 0, delta_after = 0, delta_curvature = 0;
  double gamma = 0, beta1 = 0, grad_scale = 1, precision_scale = 1;
  double c_in = 0, c_out = 0, radius = 0;
  bool check_mean = true;
  // Stage switches.
  bool average = false, update_precision = false, correct = false, momentum = false,
       sqrt_scaling = false, use_new = true;
};

struct KernelResult {
  bool all_ok;    ///< every value finite and every preconditioner positive
  double change;  ///< max |m' − m|
};

/// One fused pass over d coordinates; writes m_out (and s_out, u_out when their stages are on).
KernelResult run_diagonal_kernel(const DiagonalKernel& k, Index d);

/// The values of one coordinate, recomputed for the diagnosis of an invalid step.
struct CoordinateStep {
  double gradient, average, direction, curvature, precision, preconditioner, mean;
};

CoordinateStep diagnose_coordinate(const DiagonalKernel& k, Index i);

}  // namespace blr::detail
