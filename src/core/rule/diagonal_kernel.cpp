// The fused diagonal-Gaussian BLR step (include/blr/rule/diagonal_kernel.hpp): one instantiation
// per combination of stages, each a branch-free loop that GCC vectorises (`omp simd`).
#include "blr/rule/diagonal_kernel.hpp"

#include <algorithm>
#include <cmath>
#include <utility>

namespace blr::detail {
namespace {

enum Stage : unsigned {
  kAverage = 1u, kUpdatePrecision = 2u, kCorrect = 4u, kMomentum = 8u, kSqrt = 16u,
  kOldPrecision = 32u, kStageCombinations = 64u
};

constexpr bool on(unsigned flags, unsigned stage) { return (flags & stage) != 0u; }

unsigned stage_flags(const DiagonalKernel& k) {
  return (k.average ? kAverage : 0u) | (k.update_precision ? kUpdatePrecision : 0u) |
         (k.update_precision && k.correct ? kCorrect : 0u) | (k.momentum ? kMomentum : 0u) |
         (k.sqrt_scaling ? kSqrt : 0u) | (k.use_new ? 0u : kOldPrecision);
}

/// The inputs of one coordinate (zero where a stage is off).
struct CoordinateInput {
  double g, h, m, s, u, m_prev, s_prev;
};

/// Eq. 12 with the policy's stages for one coordinate; `k` supplies the constants only.
template <unsigned F>
[[gnu::always_inline]] inline CoordinateStep coordinate_step(const DiagonalKernel& k, const CoordinateInput& x) {
  CoordinateStep c;
  c.gradient = x.g + k.delta_in_average * x.m;
  if constexpr (on(F, kAverage)) {
    c.average = k.beta1 * x.u + (1.0 - k.beta1) * c.gradient;
    c.direction = k.grad_scale * c.average + k.delta_after * x.m;
  } else {
    c.average = 0.0;
    c.direction = c.gradient + k.delta_after * x.m;
  }
  if constexpr (on(F, kUpdatePrecision)) {
    c.curvature = x.h + k.delta_curvature;
    c.precision = (1.0 - k.rho_s) * x.s + k.rho_s * c.curvature;  // eq. 12
    if constexpr (on(F, kCorrect)) {                               // iBLR
      const double gap = x.s - c.curvature;
      c.precision += 0.5 * k.rho_s * k.rho_s * gap * gap / x.s;
    }
    if constexpr (on(F, kMomentum)) c.precision += k.gamma * (x.s - x.s_prev);  // eq. 80
  } else {
    c.curvature = 0.0;
    c.precision = x.s;
  }
  double p = (on(F, kOldPrecision) ? x.s : c.precision) * k.precision_scale;  // debiasing
  if constexpr (on(F, kSqrt)) p = std::sqrt(p + k.c_in) + k.c_out;
  c.preconditioner = p;
  const double inverse = 1.0 / p;
  const double step = std::min(k.radius, std::max(-k.radius, c.direction * inverse));  // clipping
  c.mean = x.m - k.rho_m * step;
  if constexpr (on(F, kMomentum))  // eq. 80 in (m, S): + γ P⁻¹ S_{t−1}(m_t − m_{t−1})
    c.mean += k.gamma * x.s_prev * (x.m - x.m_prev) * inverse;
  return c;
}

template <unsigned F>
[[gnu::always_inline]] inline KernelResult diagonal_pass(const DiagonalKernel& kernel, Index d) {
  const DiagonalKernel k = kernel;  // a local copy: the stores below cannot alias its constants
  const double* __restrict g = k.g;
  const double* __restrict h = k.h;
  const double* __restrict m = k.m;
  const double* __restrict s = k.s;
  const double* __restrict u = k.u;
  const double* __restrict m_prev = k.m_prev;
  const double* __restrict s_prev = k.s_prev;
  double* __restrict m_out = k.m_out;
  double* __restrict s_out = k.s_out;
  double* __restrict u_out = k.u_out;
  double probe = 0.0, mean_probe = 0.0, lowest = 1.0, change = 0.0;
#pragma omp simd reduction(+ : probe, mean_probe) reduction(min : lowest) reduction(max : change)
  for (Index i = 0; i < d; ++i) {
    CoordinateInput x{g[i], 0.0, m[i], s[i], 0.0, 0.0, 0.0};
    if constexpr (on(F, kUpdatePrecision)) x.h = h[i];
    if constexpr (on(F, kAverage)) x.u = u[i];
    if constexpr (on(F, kMomentum)) {
      x.m_prev = m_prev[i];
      x.s_prev = s_prev[i];
    }
    const CoordinateStep c = coordinate_step<F>(k, x);
    probe += c.direction * 0.0 + c.curvature * 0.0 + c.precision * 0.0 + c.preconditioner * 0.0;
    mean_probe += c.mean * 0.0;
    lowest = std::min(lowest, c.preconditioner);
    change = std::max(change, std::abs(c.mean - x.m));
    m_out[i] = c.mean;
    if constexpr (on(F, kUpdatePrecision)) s_out[i] = c.precision;
    if constexpr (on(F, kAverage)) u_out[i] = c.average;
  }
  const bool ok = probe == 0.0 && lowest > 0.0 && (!k.check_mean || mean_probe == 0.0);
  return {ok, change};
}

template <unsigned... F>
[[gnu::always_inline]] inline KernelResult dispatch(const DiagonalKernel& k, Index d, unsigned flags,
                      std::integer_sequence<unsigned, F...>) {
  KernelResult result{true, 0.0};
  ((flags == F ? (result = diagonal_pass<F>(k, d), true) : false) || ...);
  return result;
}

template <unsigned... F>
CoordinateStep diagnose(const DiagonalKernel& k, const CoordinateInput& x, unsigned flags,
                        std::integer_sequence<unsigned, F...>) {
  CoordinateStep c{};
  ((flags == F ? (c = coordinate_step<F>(k, x), true) : false) || ...);
  return c;
}

}  // namespace

// One clone per instruction set, chosen when the program loads (GNU ifunc). FMA is not enabled,
// so every clone rounds exactly like the baseline: results do not depend on the machine.
[[gnu::target_clones("avx512f", "avx2", "default")]]
KernelResult run_diagonal_kernel(const DiagonalKernel& k, Index d) {
  return dispatch(k, d, stage_flags(k), std::make_integer_sequence<unsigned, kStageCombinations>{});
}

CoordinateStep diagnose_coordinate(const DiagonalKernel& k, Index i) {
  const unsigned flags = stage_flags(k);
  CoordinateInput x{k.g[i], 0.0, k.m[i], k.s[i], 0.0, 0.0, 0.0};
  if (on(flags, kUpdatePrecision)) x.h = k.h[i];
  if (on(flags, kAverage)) x.u = k.u[i];
  if (on(flags, kMomentum)) {
    x.m_prev = k.m_prev[i];
    x.s_prev = k.s_prev[i];
  }
  return diagnose(k, x, flags, std::make_integer_sequence<unsigned, kStageCombinations>{});
}

}  // namespace blr::detail
