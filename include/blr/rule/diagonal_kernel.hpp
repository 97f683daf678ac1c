// The fused diagonal-Gaussian BLR step: `coordinate_step` (rule/policy.hpp) for every coordinate
// in one pass.
//
// The step is memory-bound: it reads ĝ, ĥ, m, S (and u, m_{t−1}, S_{t−1} where the policy's
// stages need them) and writes m', S', u' once. The loop touches every stream at the same index,
// so the hardware prefetchers follow all of them at once; the stages are a compile-time list, so
// the body has no branches and is vectorised (`omp simd`). The loop is compiled for AVX-512, AVX2
// and the baseline ISA and the loader picks one (BLR_CPU_CLONES, core/cpu_clones.hpp); with FMA
// contraction off project-wide every clone rounds like the baseline. Validity is accumulated branch-free (x·0 is 0
// for finite x and NaN otherwise); the rare invalid step is diagnosed coordinate by coordinate with
// the same per-coordinate function.
#pragma once

#include <algorithm>
#include <cmath>

#include "blr/core/cpu_clones.hpp"
#include "blr/core/types.hpp"
#include "blr/rule/policy.hpp"

namespace blr::detail {

/// Inputs and outputs of the fused step (raw pointers into the state's vectors; outputs never
/// alias inputs). Pointers of stages the policy does not have may be null.
struct DiagonalBuffers {
  const double *g = nullptr, *h = nullptr, *m = nullptr, *s = nullptr, *u = nullptr;
  const double *m_prev = nullptr, *s_prev = nullptr;
  double *m_out = nullptr, *s_out = nullptr, *u_out = nullptr;
};

struct KernelResult {
  bool all_ok;    ///< every value finite and every preconditioner positive
  double change;  ///< max |m' − m|
};

template <class... Stages>
constexpr bool kAverages = (std::is_same_v<Stages, stage::GradientAverage> || ...);
template <class... Stages>
constexpr bool kHasMomentum = (std::is_same_v<Stages, stage::NaturalMomentum> || ...);

/// The inputs of coordinate i.
template <bool kLearn, class... Stages>
[[gnu::always_inline]] inline stage::Coordinate<double> load(const DiagonalBuffers& b, Index i) {
  stage::Coordinate<double> c{};
  c.gradient = b.g[i];
  c.mean = b.m[i];
  c.precision = b.s[i];
  if constexpr (kLearn) c.curvature = b.h[i];
  if constexpr (kAverages<Stages...>) c.average = b.u[i];
  if constexpr (kHasMomentum<Stages...>) {
    c.mean_prev = b.m_prev[i];
    c.precision_prev = b.s_prev[i];
  }
  return c;
}

template <bool kLearn, class... Stages>
BLR_CPU_CLONES KernelResult diagonal_pass(
    const StepCoefficients<double, Stages...>& coefficients, const DiagonalBuffers& buffers,
    Index d, bool check_mean) {
  const StepCoefficients<double, Stages...> k = coefficients;  // local: stores cannot alias it
  const DiagonalBuffers b = buffers;
  double* __restrict m_out = b.m_out;
  double* __restrict s_out = b.s_out;
  double* __restrict u_out = b.u_out;
  double probe = 0.0, mean_probe = 0.0, lowest = 1.0, change = 0.0;
#pragma omp simd reduction(+ : probe, mean_probe) reduction(min : lowest) reduction(max : change)
  for (Index i = 0; i < d; ++i) {
    stage::Coordinate<double> c = load<kLearn, Stages...>(b, i);
    coordinate_step<kLearn>(k, c);
    probe += c.direction * 0.0 + c.preconditioner * 0.0;
    if constexpr (kLearn) probe += c.curvature * 0.0 + c.new_precision * 0.0;
    mean_probe += c.new_mean * 0.0;
    lowest = std::min(lowest, c.preconditioner);
    change = std::max(change, std::abs(c.new_mean - c.mean));
    m_out[i] = c.new_mean;
    if constexpr (kLearn) s_out[i] = c.new_precision;
    if constexpr (kAverages<Stages...>) u_out[i] = c.new_average;
  }
  return {probe == 0.0 && lowest > 0.0 && (!check_mean || mean_probe == 0.0), change};
}

/// The values of coordinate i, recomputed for the diagnosis of an invalid step.
template <bool kLearn, class... Stages>
stage::Coordinate<double> diagnose_coordinate(const StepCoefficients<double, Stages...>& k,
                                              const DiagonalBuffers& b, Index i) {
  stage::Coordinate<double> c = load<kLearn, Stages...>(b, i);
  coordinate_step<kLearn>(k, c);
  return c;
}

}  // namespace blr::detail
